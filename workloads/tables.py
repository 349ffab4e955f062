"""The workloads list as a table (studio.tables): its columns, totals and bulk actions."""

from decimal import Decimal

from django.db.models import Sum
from django.template.loader import get_template
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from studio.iam.models import Level
from studio.iam.permissions import acting_project_ids
from studio.tables import BulkAction, Column, Table
from workloads import runai_fields as derived
from workloads.api.filtersets import WorkloadFilterSet


def duration_text(seconds: int | None) -> str:
    """12s, 5m 03s, 2h 05m, 3d 4h: how long a workload has run (or ran)."""
    if seconds is None:
        return ""
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes:02d}m"
    if minutes:
        return f"{minutes}m {secs:02d}s"
    return f"{secs}s"


def short_time(at) -> str:
    """Nov 29 07:57 within this year, 2025-11-29 before it: a dense list's dates (the whole one in its title)."""
    local = timezone.localtime(at)
    return local.strftime("%b %d %H:%M") if local.year == timezone.localtime().year else local.strftime("%Y-%m-%d")


def gpus_text(value) -> str:
    """0.5, 2, 12 (the stored decimal without its trailing zeros)."""
    return f"{Decimal(value or 0).normalize():f}"


def _running_seconds(workload):
    return derived.seconds_between(workload.started_at, derived.running_end(
        workload.completed_at, workload.actual_phase, workload.phase_updated_at))


def _phase_html(workload):
    return get_template("workloads/_phase_cell.html").render({"w": workload})


class WorkloadTable(Table):
    name = "workloads"
    noun = "workloads"
    noun_one = "workload"
    filterset_class = WorkloadFilterSet
    bulk_url_name = "workload-bulk"
    export_url_name = "workload-export"
    empty_template = "workloads/_empty.html"
    bulk_actions = (BulkAction("suspend", "Suspend", "player-pause"), BulkAction("resume", "Resume", "player-play"),
                    BulkAction("delete", "Delete", "trash", danger=True))
    columns = (
        Column("name", "Name", lambda w: w.name, sort="name", natural=True,
               html=lambda w: format_html('<a href="{}">{}</a>', reverse("workload-detail", args=[w.pk]), w.name)),
        Column("type", "Type", lambda w: w.kind, sort="type"),
        Column("project", "Project", lambda w: w.project.name, sort="projectName"),
        Column("phase", "Phase", lambda w: w.actual_phase, sort="phase", html=_phase_html),
        Column("gpus", "GPUs", lambda w: gpus_text(w.gpu_request), numeric=True),
        Column("owner", "Owner", lambda w: w.created_by_name, sort="submittedBy",
               html=lambda w: format_html('<span title="{}">{}</span>', w.created_by_name, w.created_by_name)),
        Column("duration", "Duration", _running_seconds, sort="totalRunningTimeSeconds",
               html=lambda w: duration_text(_running_seconds(w)) or "—"),
        # the pool it was placed in, where its pods run (not the pools it may use: spec.nodePools)
        Column("nodepool", "Node pool", lambda w: derived.listed_pool_of(w.node_pool, w.spec), sort="nodepool"),
        Column("pods", "Pods", lambda w: f"{w.running_pods}/{w.requested_pods}", sort="runningPods"),
        Column("created", "Created", lambda w: w.created_at.isoformat(timespec="seconds"), sort="createdAt",
               html=lambda w: format_html('<time datetime="{}" title="{}">{}</time>', w.created_at.isoformat(),
                                          w.created_at.strftime("%Y-%m-%d %H:%M"), short_time(w.created_at))),
        Column("cluster", "Cluster", lambda w: w.cluster.name, default=False),
        Column("department", "Department", lambda w: w.department.name, sort="departmentName", default=False),
    )

    def __init__(self, request, queryset, **kwargs):
        super().__init__(request, queryset, **kwargs)
        # Suspend, resume and delete take a member's role in the workload's project (as each one's own button):
        # a row of a project the user only views has no checkbox, and a user who views only has no bulk actions.
        self.acting = acting_project_ids(request.user, Level.MEMBER)
        if self.acting is not None and not self.acting:
            self.bulk_actions = ()

    def selectable(self, row) -> bool:
        return self.acting is None or row.project_id in self.acting

    def totals(self, qs) -> dict:
        numbers = qs.aggregate(gpus=Sum("gpu_request"), running=Sum("running_pods"), requested=Sum("requested_pods"))
        return {"gpus": gpus_text(numbers["gpus"] or 0),
                "pods": f"{numbers['running'] or 0}/{numbers['requested'] or 0}"}

    def row_label(self, row) -> str:
        return row.name
