"""The clusters as GPU pools, for the overview, node pool and node pages (reads only).

Nodes are read from the cluster as it reports them now (GPUs: the node's allocatable `nvidia.com/gpu`; pool: the
first non-default pool whose label it carries, as the nodes API answers). What workloads hold on a node is the sum,
over the running pods the sync placed on it, of their workload's GPUs shared by its requested pods (CPU and memory:
each pod's requests). A pool's (and the cluster's) allocated and requested GPUs are the organisation's numbers
(studio.org.numbers: the workloads placed in the pool), as every page and answer shows them. Utilisation
is the latest per-GPU sample of the last five minutes (the DCGM exporter's, through the cluster's Prometheus):
a node's is the mean over all its GPUs (an unused GPU counts 0), and an allocated GPU is idle when its latest
sample is under 1 %. A cluster marked Disconnected is shown broken, with its last error, without asking it again."""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal

from django.utils import timezone

from studio.clusters import kube
from studio.clusters.api import node_data
from studio.clusters.quantities import parse_quantity
from studio.models import Cluster
from studio.org.numbers import Numbers, quota_numbers
from workloads.models import MetricSample, Pod, Workload
from workloads.runai_fields import placed_pool_expression

RECENT = timedelta(minutes=5)
IDLE_BELOW = 1.0  # percent


@dataclass
class Node:
    name: str
    pool: str
    status: str
    gpu_type: str
    gpus: int
    cpu: str
    memory: str
    allocated: Decimal = Decimal(0)
    cpu_allocated: float = 0.0  # cores requested by the running pods on it
    memory_allocated: float = 0.0  # bytes
    gpu_samples: dict = field(default_factory=dict)  # (pod, gpu) -> latest utilisation
    pods: list = field(default_factory=list)  # (pod name, workload or None, GPUs held)
    conditions: list = field(default_factory=list)
    taints: list = field(default_factory=list)

    @property
    def free(self) -> Decimal:
        return max(Decimal(0), self.gpus - self.allocated)

    @property
    def utilisation(self) -> float | None:
        if not self.gpus or not self.gpu_samples:
            return None
        return min(100.0, sum(self.gpu_samples.values()) / self.gpus)

    @property
    def idle(self) -> int | None:
        if not self.gpu_samples:
            return None
        return sum(1 for v in self.gpu_samples.values() if v < IDLE_BELOW)


@dataclass
class Totals:
    """GPUs of a set of nodes: the pool's, or the cluster's."""

    name: str
    nodes: list
    numbers: Numbers | None = None  # the organisation's numbers in the pool (studio.org.numbers)

    @property
    def gpus(self) -> int:
        return sum(n.gpus for n in self.nodes)

    @property
    def allocated(self) -> Decimal:
        if self.numbers is not None:
            return self.numbers.allocated
        return sum((n.allocated for n in self.nodes), Decimal(0))

    @property
    def requested(self) -> Decimal:
        return self.numbers.requested if self.numbers is not None else self.allocated

    @property
    def free(self) -> Decimal:
        if self.numbers is not None:
            return max(Decimal(0), self.gpus - self.allocated)
        return sum((n.free for n in self.nodes), Decimal(0))

    @property
    def ready(self) -> int:
        return sum(1 for n in self.nodes if n.status == "Ready")

    @property
    def idle(self) -> int | None:
        known = [n.idle for n in self.nodes if n.idle is not None]
        return sum(known) if known else None

    @property
    def utilisation(self) -> float | None:
        measured = [n for n in self.nodes if n.utilisation is not None]
        if not measured:
            return None
        gpus = sum(n.gpus for n in self.nodes)
        return sum(n.utilisation * n.gpus for n in measured) / gpus if gpus else None

    @property
    def allocated_percent(self) -> int:
        return round(100 * self.allocated / self.gpus) if self.gpus else 0


@dataclass
class ClusterPool(Totals):
    cluster: Cluster = None
    problem: str = ""
    pools: list = field(default_factory=list)
    queue: list = field(default_factory=list)  # pending workloads the user sees, oldest first
    pending_total: int = 0  # every pending workload, seen or not

    @property
    def hidden_pending(self) -> int:
        return self.pending_total - len(self.queue)

    @property
    def broken(self) -> bool:
        return bool(self.problem)


def cluster_pool(cluster: Cluster, *, user, now=None) -> ClusterPool:
    """One cluster's nodes, pools and queue; `problem` says why its nodes are unknown."""
    now = now or timezone.now()
    result = ClusterPool(name=cluster.name, nodes=[], cluster=cluster)
    pending = (Workload.objects.filter(cluster=cluster, deleted_at__isnull=True, actual_phase=Workload.Phase.PENDING)
               .annotate(pool=placed_pool_expression()).select_related("project").order_by("phase_updated_at", "created_at"))
    visible = set(Workload.objects.visible_to(user).filter(cluster=cluster).values_list("pk", flat=True))
    pending = list(pending)
    result.pending_total = len(pending)
    result.queue = [w for w in pending if w.pk in visible]
    if cluster.status == Cluster.Status.DISCONNECTED:
        result.problem = f"Disconnected: {cluster.status_message or 'the cluster does not answer.'}"
        return result
    pools = list(cluster.node_pools.all())
    try:
        raw = kube.list_objects(kube.connect(cluster), "v1", "Node")
    except (kube.ClusterError, *kube.TRANSIENT_ERRORS) as exc:
        result.problem = f"The cluster did not answer the list of its nodes: {exc}"
        return result
    nodes = {}
    for item in raw:
        data = node_data(item, cluster, pools)
        allocatable = (item.get("status") or {}).get("allocatable") or {}
        nodes[data["name"]] = Node(
            name=data["name"], pool=data["nodePool"], status=data["status"],
            gpu_type=(data.get("gpuInfo") or {}).get("gpuType", ""), gpus=(data.get("gpuInfo") or {}).get("gpuCount", 0),
            cpu=allocatable.get("cpu", ""), memory=allocatable.get("memory", ""),
            conditions=data["conditions"], taints=data["taints"])
    _place_pods(cluster, nodes, visible)
    _gpu_samples(cluster, nodes, now)
    result.nodes = sorted(nodes.values(), key=lambda n: n.name)
    found = quota_numbers(clusters=[cluster.pk])
    used = found.clusters.get(str(cluster.pk)) or {}
    known = {p.name for p in pools}
    names = [p.name for p in pools] + sorted(({n.pool for n in nodes.values()} | set(used)) - known)
    result.pools = [Totals(name=name, nodes=[n for n in result.nodes if n.pool == name],
                           numbers=found.pool(cluster.pk, name)) for name in names]
    result.numbers = Numbers(allocated=sum((p.numbers.allocated for p in result.pools), Decimal(0)),
                             requested=sum((p.numbers.requested for p in result.pools), Decimal(0)))
    return result


def _place_pods(cluster: Cluster, nodes: dict, visible: set) -> None:
    rows = (Pod.objects.filter(workload__cluster=cluster, workload__deleted_at__isnull=True, phase="Running",
                               node_name__in=list(nodes))
            .select_related("workload", "workload__project").order_by("node_name", "name"))
    for pod in rows:
        workload = pod.workload
        share = workload.gpu_request / max(1, workload.requested_pods or 1)
        node = nodes[pod.node_name]
        node.allocated += share
        compute = (workload.spec or {}).get("compute") or {}
        node.cpu_allocated += _amount(compute.get("cpuCoreRequest"))
        node.memory_allocated += _amount(compute.get("cpuMemoryRequest"))
        node.pods.append((pod.name, workload if workload.pk in visible else None, share))


def _amount(value) -> float:
    try:
        return float(parse_quantity(str(value))) if value not in (None, "") else 0.0
    except (ValueError, TypeError, ArithmeticError):
        return 0.0


def _gpu_samples(cluster: Cluster, nodes: dict, now) -> None:
    where = {pod: node for node in nodes.values() for pod, _w, _g in node.pods}
    if not where:
        return
    rows = (MetricSample.objects.filter(workload__cluster=cluster, type="GPU_UTILIZATION", pod_name__in=list(where),
                                        timestamp__gte=now - RECENT)
            .order_by("timestamp").values_list("pod_name", "labels", "value"))
    latest = {}
    for pod, labels, value in rows:
        latest[(pod, (labels or {}).get("gpu", ""))] = value
    for (pod, gpu), value in latest.items():
        where[pod].gpu_samples[(pod, gpu)] = value


def overview(*, user) -> list[ClusterPool]:
    return [cluster_pool(c, user=user) for c in Cluster.objects.visible_to(user)]


def by_pool(result: ClusterPool) -> dict:
    grouped = defaultdict(list)
    for workload in result.queue:
        grouped[workload.pool].append(workload)
    return grouped
