"""A cluster's node pools and nodes as the table component (studio.tables.ListTable: the rows are what the
cluster reported now): natural sort of names, the column chooser, GPU totals, CSV export."""

from decimal import Decimal

from django.template.loader import get_template
from django.urls import reverse
from django.utils.html import format_html

from studio.tables import Column, ListTable
from workloads.pending_words import sentence


def _gpus(value) -> str:
    return f"{Decimal(value or 0).normalize():f}"


def _percent(value) -> str:
    return "" if value is None else f"{value:.0f}"


def _status(node) -> str:
    return get_template("workloads/_node_status.html").render({"n": node})


class NodeTable(ListTable):
    name = "gpu-nodes"
    noun, noun_one = "nodes", "node"
    empty_template = "workloads/_no_nodes.html"

    def __init__(self, request, rows, *, cluster, pool: str = ""):
        super().__init__(request, rows)
        self.cluster, self.pool = cluster, pool

    @property
    def export_url(self) -> str:
        url = reverse("gpu-nodes-export", args=[self.cluster.pk])
        return f"{url}?pool={self.pool}" if self.pool else url

    @property
    def columns(self):
        cluster = self.cluster
        return (
            Column("name", "Node", lambda n: n.name, sort="name", natural=True, html=lambda n: format_html(
                '<a href="{}">{}</a>', reverse("gpu-node", args=[cluster.pk, n.name]), n.name)),
            Column("pool", "Pool", lambda n: n.pool, sort="pool", natural=True, html=lambda n: format_html(
                '<a href="{}">{}</a>', reverse("gpu-node-pool", args=[cluster.pk, n.pool]), n.pool)),
            Column("status", "Status", lambda n: n.status, sort="status", html=_status),
            Column("gpu_type", "GPU type", lambda n: n.gpu_type, sort="gpuType", html=lambda n: n.gpu_type or "—"),
            Column("gpus", "GPUs", lambda n: n.gpus, sort="gpus", numeric=True),
            Column("allocated", "Allocated", lambda n: _gpus(n.allocated), sort="allocated", numeric=True),
            Column("free", "Free", lambda n: _gpus(n.free), sort="free", numeric=True),
            Column("utilisation", "Utilisation %", lambda n: _percent(n.utilisation), sort="utilisation",
                   numeric=True, html=lambda n: "—" if n.utilisation is None else f"{n.utilisation:.0f} %"),
            Column("cpu", "CPU", lambda n: n.cpu, default=False),
            Column("memory", "Memory", lambda n: n.memory, default=False),
        )

    def totals(self, rows) -> dict:
        return {"gpus": sum(n.gpus for n in rows), "allocated": _gpus(sum((n.allocated for n in rows), Decimal(0))),
                "free": _gpus(sum((n.free for n in rows), Decimal(0)))}

    def row_label(self, row) -> str:
        return row.name


class PoolTable(ListTable):
    name = "gpu-pools"
    noun, noun_one = "node pools", "node pool"
    empty_template = "workloads/_no_nodes.html"

    def __init__(self, request, rows, *, cluster):
        super().__init__(request, rows)
        self.cluster = cluster

    @property
    def export_url(self) -> str:
        return reverse("gpu-pools-export", args=[self.cluster.pk])

    @property
    def columns(self):
        cluster = self.cluster
        return (
            Column("name", "Pool", lambda p: p.name, sort="name", natural=True, html=lambda p: format_html(
                '<a href="{}">{}</a>', reverse("gpu-node-pool", args=[cluster.pk, p.name]), p.name)),
            Column("ready", "Nodes ready", lambda p: f"{p.ready}/{len(p.nodes)}"),
            Column("gpus", "GPUs", lambda p: p.gpus, numeric=True),
            Column("allocated", "Allocated", lambda p: _gpus(p.allocated), numeric=True),
            Column("requested", "Requested", lambda p: _gpus(p.requested), numeric=True),
            Column("free", "Free", lambda p: _gpus(p.free), numeric=True),
            Column("idle", "Idle", lambda p: "" if p.idle is None else p.idle, numeric=True,
                   html=lambda p: "—" if p.idle is None else str(p.idle)),
            Column("utilisation", "Utilisation %", lambda p: _percent(p.utilisation), numeric=True,
                   html=lambda p: "—" if p.utilisation is None else f"{p.utilisation:.0f} %"),
        )

    def totals(self, rows) -> dict:
        return {"gpus": sum(p.gpus for p in rows), "allocated": _gpus(sum((p.allocated for p in rows), Decimal(0))),
                "requested": _gpus(sum((p.requested for p in rows), Decimal(0))),
                "free": _gpus(sum((p.free for p in rows), Decimal(0)))}

    def row_label(self, row) -> str:
        return row.name


def _why(workload) -> str:
    """Why it waits in plain words (workloads.pending_words), else the cluster's message."""
    return sentence(workload.waiting_reason, gpus=workload.gpu_request) or workload.phase_message or ""


class QueueTable(ListTable):
    """The workloads waiting for GPUs, oldest first (their place in the queue), as the table component."""

    name = "gpu-queue"
    noun, noun_one = "waiting workloads", "waiting workload"
    empty_template = "workloads/_no_queue.html"

    def __init__(self, request, rows, *, cluster):
        super().__init__(request, rows)
        self.cluster = cluster
        self.place = {w.pk: number for number, w in enumerate(rows, 1)}

    @property
    def export_url(self) -> str:
        return reverse("gpu-queue-export", args=[self.cluster.pk])

    @property
    def columns(self):
        return (
            Column("place", "#", lambda w: self.place[w.pk], sort="place", numeric=True),
            Column("name", "Workload", lambda w: w.name, sort="name", natural=True, html=lambda w: format_html(
                '<a href="{}">{}</a>{}', reverse("workload-detail", args=[w.pk]), w.name, format_html(
                    '<div class="text-secondary small">{}</div>', _why(w)[:110]) if _why(w) else "")),
            Column("project", "Project", lambda w: w.project.name, sort="project"),
            Column("pool", "Pool", lambda w: w.pool, sort="pool"),
            Column("gpus", "GPUs", lambda w: _gpus(w.gpu_request), sort="gpus", numeric=True),
            Column("since", "Waiting since", lambda w: w.phase_updated_at.isoformat(timespec="seconds")
                   if w.phase_updated_at else "", html=lambda w: get_template("workloads/_waiting_since.html")
                   .render({"w": w})),
        )

    def totals(self, rows) -> dict:
        return {"gpus": _gpus(sum((Decimal(w.gpu_request or 0) for w in rows), Decimal(0)))}

    def row_label(self, row) -> str:
        return row.name

    def row_id(self, row) -> str:
        return str(row.pk)
