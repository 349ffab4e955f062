"""Metrics collection per cluster: one round reads the cluster a bounded number of times, whatever the number
of workloads, and stores MetricSample rows (one per pod and type, plus a workload-level row with pod_name "").
Its cost grows with the samples it stores (running pods × metrics), not with what the cluster holds.

- pods (counts, and which pod is whose): the Pod rows the sync keeps current (no request to the cluster);
- CPU and memory usage: one paged metrics.k8s.io PodMetrics LIST by the managed-by label;
- GPU (DCGM exporter) and Knative request metrics: one Prometheus query per metric, filtered by a regex of the
  namespaces involved, only where the cluster has a `prometheus_url` (PROMETHEUS_TYPES);
- requests and limits: from the workload's spec, per running pod.
"""

import logging
from collections import defaultdict
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from studio.clusters import kube
from studio.clusters.quantities import parse_quantity
from studio.models import Cluster
from workloads.cluster.round_locks import cluster_round
from workloads.metric_types import PROMETHEUS_TYPES
from workloads.models import MetricSample, Pod, Workload
from workloads.specs import gpu_request_of

__all__ = ["PROMETHEUS_TYPES", "cluster_collect_metrics", "metrics_purge"]
log = logging.getLogger(__name__)
MIB = 2**20
# (type, PromQL template, how pods combine into the workload's value, scale to the stored unit).
# The template gets `namespaces`, a regex of the namespaces of the round; each series must keep the labels
# `namespace` and `pod`. On a real Knative, where revision_app_request_count is a counter and the latencies
# a histogram, override THROUGHPUT and LATENCY with rate() expressions (settings.PROMETHEUS_QUERIES).
PROMETHEUS_QUERIES = {
    "GPU_UTILIZATION": ('DCGM_FI_DEV_GPU_UTIL{{namespace=~"{namespaces}"}}', "mean", 1),
    "GPU_MEMORY_USAGE_BYTES": ('DCGM_FI_DEV_FB_USED{{namespace=~"{namespaces}"}}', "sum", MIB),
    "THROUGHPUT": ('revision_app_request_count{{namespace=~"{namespaces}"}}', "sum", 1),
    "LATENCY": ('revision_app_request_latencies{{namespace=~"{namespaces}"}}', "mean", 1),
}
INFERENCE_ONLY = {"THROUGHPUT", "LATENCY"}
TERMINATING = "Terminating"  # the message of a pod being deleted (phases.pod_summary)
ACTIVE = {Workload.Phase.PENDING, Workload.Phase.INITIALIZING, Workload.Phase.RUNNING, Workload.Phase.DEGRADED,
          Workload.Phase.RESUMING, Workload.Phase.STOPPING, Workload.Phase.UPDATING, Workload.Phase.CREATING}


def _number(value) -> float:
    try:
        return float(parse_quantity(value))
    except (ValueError, TypeError, ArithmeticError):
        return 0.0


class Round:
    """The samples of one round, keyed so that pods add up into their workload."""

    def __init__(self, now: datetime):
        self.now = now
        self.rows: list[MetricSample] = []

    def add(self, workload_id, metric: str, value: float, *, pod: str = "", labels: dict | None = None) -> None:
        self.rows.append(MetricSample(workload_id=workload_id, pod_name=pod, type=metric, labels=labels or {},
                                      value=float(value), timestamp=self.now))


def cluster_collect_metrics(cluster_id, *, now: datetime | None = None) -> int | None:
    """One round for one cluster; the number of samples stored, None when skipped or the cluster failed."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return None
    with cluster_round(cluster.pk, "metrics") as held:
        if not held:
            return None
        try:
            return _collect(cluster, now or timezone.now())
        except (kube.ClusterError, *kube.TRANSIENT_ERRORS) as exc:
            log.warning("metrics of cluster %s not collected: %s", cluster.name, exc)
            return None


def _collect(cluster: Cluster, now: datetime) -> int:
    conn = kube.connect(cluster)
    # The pods as the watcher last wrote them (workloads.cluster.watcher keeps the Pod rows current): no LIST of them.
    on_cluster = Pod.objects.filter(workload__cluster=cluster, workload__deleted_at__isnull=True).exclude(
        message=TERMINATING)
    pods_by_workload: dict[str, list[dict]] = defaultdict(list)
    for wid, name, phase in on_cluster.values_list("workload_id", "name", "phase"):
        pods_by_workload[str(wid)].append({"metadata": {"name": name}, "status": {"phase": phase}})
    workloads = {str(w.pk): w for w in Workload.objects.filter(cluster=cluster, deleted_at__isnull=True).filter(
        Q(actual_phase__in=ACTIVE) | Q(pk__in=on_cluster.values("workload_id"))).only(
        "id", "kind", "spec", "actual_phase", "project__namespace").select_related("project")}
    if not workloads:
        return 0
    owner = {(workloads[wid].project.namespace, p["metadata"]["name"]): wid
             for wid, pods in pods_by_workload.items() if wid in workloads for p in pods}
    samples = Round(now)
    for wid, workload in workloads.items():
        _pod_counts_and_requests(samples, workload, pods_by_workload.get(wid, []))
    _cpu_usage(samples, conn, owner)
    if cluster.prometheus_url:
        namespaces = sorted({w.project.namespace for w in workloads.values()})
        _prometheus(samples, conn, cluster.prometheus_url, namespaces, owner, workloads)
    MetricSample.objects.bulk_create(samples.rows, batch_size=1000)
    return len(samples.rows)


def _running(pod: dict) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running"


def _pod_counts_and_requests(samples: Round, workload: Workload, pods: list[dict]) -> None:
    running = [p for p in pods if _running(p)]
    samples.add(workload.pk, "POD_COUNT", len(pods))
    samples.add(workload.pk, "RUNNING_POD_COUNT", len(running))
    compute = (workload.spec or {}).get("compute") or {}
    per_pod = {
        "CPU_REQUEST_CORES": _number(compute.get("cpuCoreRequest")),
        "CPU_LIMIT_CORES": _number(compute.get("cpuCoreLimit")),
        "CPU_MEMORY_REQUEST_BYTES": _number(compute.get("cpuMemoryRequest")),
        "CPU_MEMORY_LIMIT_BYTES": _number(compute.get("cpuMemoryLimit")),
        "GPU_ALLOCATION": float(gpu_request_of(workload.spec or {}) or Decimal(0)),
    }
    if compute.get("gpuRequestType") == "memory":
        devices = int(compute.get("gpuDevicesRequest") or 1)
        per_pod["GPU_MEMORY_REQUEST_BYTES"] = _number(compute.get("gpuMemoryRequest")) * devices
    for metric, value in per_pod.items():
        samples.add(workload.pk, metric, value * len(running))
        for pod in running:
            samples.add(workload.pk, metric, value, pod=pod["metadata"]["name"])


def _cpu_usage(samples: Round, conn: kube.Connection, owner: dict) -> None:
    totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for item in kube.pod_metrics(conn, label_selector=kube.MANAGED_BY_SELECTOR):
        meta = item.get("metadata") or {}
        wid = owner.get((meta.get("namespace"), meta.get("name")))
        if wid is None:
            continue
        containers = item.get("containers") or []
        cpu = sum(_number((c.get("usage") or {}).get("cpu")) for c in containers)
        memory = sum(_number((c.get("usage") or {}).get("memory")) for c in containers)
        samples.add(wid, "CPU_USAGE_CORES", cpu, pod=meta["name"])
        samples.add(wid, "CPU_MEMORY_USAGE_BYTES", memory, pod=meta["name"])
        totals[wid][0] += cpu
        totals[wid][1] += memory
    for wid, (cpu, memory) in totals.items():
        samples.add(wid, "CPU_USAGE_CORES", cpu)
        samples.add(wid, "CPU_MEMORY_USAGE_BYTES", memory)


def _prometheus(samples: Round, conn: kube.Connection, url: str, namespaces: list[str], owner: dict,
                workloads: dict) -> None:
    queries = {**PROMETHEUS_QUERIES, **settings.PROMETHEUS_QUERIES}
    for metric, (template, combine, scale) in queries.items():
        try:
            series = kube.prometheus_query(conn, url, template.format(namespaces="|".join(namespaces)))
        except (kube.ClusterError, *kube.TRANSIENT_ERRORS) as exc:
            log.warning("Prometheus query for %s failed: %s", metric, exc)
            continue
        values: dict[str, list[float]] = defaultdict(list)
        for item in series:
            labels = item.get("metric") or {}
            wid = owner.get((labels.get("namespace"), labels.get("pod")))
            if wid is None or (metric in INFERENCE_ONLY and workloads[wid].kind != Workload.Kind.INFERENCE):
                continue
            value = float(item["value"][1]) * scale
            extra = {"gpu": labels["gpu"]} if "gpu" in labels else {}
            samples.add(wid, metric, value, pod=labels["pod"], labels=extra)
            values[wid].append(value)
        for wid, found in values.items():
            samples.add(wid, metric, sum(found) / len(found) if combine == "mean" else sum(found))


def metrics_purge(*, now: datetime | None = None) -> int:
    """Delete samples older than METRICS_RETENTION_DAYS; the number deleted."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.METRICS_RETENTION_DAYS)
    deleted, _ = MetricSample.objects.filter(timestamp__lt=cutoff).delete()
    return deleted
