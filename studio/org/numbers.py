"""The quota numbers of the organisation, defined once (issue 36, "one number everywhere"): every page and answer
that shows a project's, a department's or a node pool's GPUs (and CPU and memory) reads them here.

- **allocated**: what runs now — the GPUs of the live workloads that hold GPUs on nodes (their phase is one of
  workloads.runai_fields.ALLOCATED_PHASES);
- **requested**: what runs plus what waits — the workloads meant to run that have not finished (what the quota
  counts: workloads.models.HOLDING_GPUS, pending ones included; a workload being stopped is still allocated until its
  pods are gone, and no longer requested);
- **deserved**, **limit**, **overQuotaWeight**: the unit's per-pool `resources` (Run:ai's shape); a project without
  per-pool quotas has its GPU totals in its cluster's default pool (its limit holds in every pool).

CPU and memory are allocated and requested as GPUs are, from what each workload asks for over all its pods
(`Workload.cpu_request` in millicores, `memory_request` in bytes, stored at submission); a workload without GPUs
holds its CPU and memory all the same.

A workload counts in the pool it was placed in at submission (`Workload.node_pool`; "" is the cluster's default
pool), where its pods run. The rows are the workloads app's, to the right of studio: it says how to read them at
start-up (`register_gpu_use`), so studio never names it. One grouped query reads the use of any set of units, and one
more their clusters' pools (`quota_numbers`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import NamedTuple

from django.core.exceptions import ImproperlyConfigured
from django.db.models import Q, QuerySet, Sum

from perf import keyed_rows
from studio.clusters.models import DEFAULT_NODE_POOL, NodePool

ZERO = Decimal(0)


class GpuUse(NamedTuple):
    """How the organisation's GPU use is read from the rows that hold GPUs (filled in by the workloads app)."""

    rows: Callable[[], QuerySet]  # the live rows (not deleted), with `gpu_request`, `cpu_request`, `memory_request`,
    # `node_pool`
    allocated: Q  # held on a node now (GPUs, CPU or memory)
    requested: Q  # what runs plus what waits: meant to run and not finished


_gpu_use: list[GpuUse] = []


def register_gpu_use(use: GpuUse) -> None:
    _gpu_use[:] = [use]


def gpu_use() -> GpuUse:
    if not _gpu_use:
        raise ImproperlyConfigured("No app registered the organisation's GPU use (the workloads app does).")
    return _gpu_use[0]


def _number(value) -> Decimal | None:
    """A quota value: None for unset or -1 (no limit)."""
    if value is None:
        return None
    number = Decimal(str(value))
    return None if number < 0 else number


@dataclass
class Numbers:
    """One unit's (or one pool's) GPUs, and the CPU (millicores) and memory (bytes) its workloads hold and ask for.
    deserved/limit (GPUs) None: not set (a limit: none)."""

    allocated: Decimal = ZERO
    requested: Decimal = ZERO
    deserved: Decimal | None = None
    limit: Decimal | None = None
    over_quota_weight: float | None = None
    cpu_allocated: int = 0
    cpu_requested: int = 0
    memory_allocated: int = 0
    memory_requested: int = 0

    @property
    def waiting(self) -> Decimal:
        return max(ZERO, self.requested - self.allocated)

    @property
    def over_quota(self) -> Decimal:
        return max(ZERO, self.allocated - (self.deserved or ZERO))

    def add_use(self, allocated, requested, cpu=(0, 0), memory=(0, 0)) -> None:
        """Add GPUs allocated and requested, and (allocated, requested) CPU millicores and memory bytes."""
        self.allocated += allocated or ZERO
        self.requested += requested or ZERO
        self.cpu_allocated += int(cpu[0] or 0)
        self.cpu_requested += int(cpu[1] or 0)
        self.memory_allocated += int(memory[0] or 0)
        self.memory_requested += int(memory[1] or 0)

    def as_dict(self) -> dict:
        return {"allocated": float(self.allocated), "requested": float(self.requested),
                "deserved": None if self.deserved is None else float(self.deserved),
                "limit": None if self.limit is None else float(self.limit)}


@dataclass
class Unit:
    """A project's or a department's numbers: in total and per node pool (pool name -> Numbers)."""

    total: Numbers = field(default_factory=Numbers)
    pools: dict[str, Numbers] = field(default_factory=dict)

    def pool(self, name: str) -> Numbers:
        return self.pools.setdefault(name, Numbers())


def pool_quotas(resources, *, default_pool: str, gpu_deserved=None, gpu_limit=None) -> dict[str, Numbers]:
    """Per pool, deserved/limit/overQuotaWeight of a unit's `resources` (a project without them: its totals in the
    default pool)."""
    out: dict[str, Numbers] = {}
    for entry in resources or ():
        if not isinstance(entry, dict):
            continue
        name = (entry.get("nodePool") or {}).get("name") or default_pool
        gpu = entry.get("gpu") or {}
        weight = gpu.get("overQuotaWeight")
        out[name] = Numbers(deserved=_number(gpu.get("deserved")), limit=_number(gpu.get("limit")),
                            over_quota_weight=None if weight is None else float(weight))
    if not out and gpu_deserved is not None and (gpu_deserved or gpu_limit is not None):
        out[default_pool] = Numbers(deserved=Decimal(str(gpu_deserved)), limit=_number(gpu_limit))
    return out


def _sum_quotas(pools: dict[str, Numbers], total: Numbers) -> None:
    deserved = [p.deserved for p in pools.values() if p.deserved is not None]
    total.deserved = sum(deserved, ZERO) if deserved else None
    limits = [p.limit for p in pools.values()]
    total.limit = None if not limits or any(v is None for v in limits) else sum(limits, ZERO)


class QuotaNumbers:
    """The numbers of a set of projects, departments and clusters' pools, read at once (`quota_numbers`)."""

    def __init__(self):
        self.projects: dict[int, Unit] = {}
        self.departments: dict[int, Unit] = {}
        self.clusters: dict[str, dict[str, Numbers]] = {}  # cluster id -> pool name -> use of every project there
        self.default_pools: dict[str, str] = {}
        self.pool_ids: dict[str, dict[str, str]] = {}  # cluster id -> pool name -> pool id

    def project(self, pk) -> Unit:
        return self.projects.get(pk) or Unit()

    def department(self, pk) -> Unit:
        return self.departments.get(pk) or Unit()

    def pool(self, cluster_id, name: str) -> Numbers:
        return (self.clusters.get(str(cluster_id)) or {}).get(name) or Numbers()

    def default_pool(self, cluster_id) -> str:
        return self.default_pools.get(str(cluster_id), DEFAULT_NODE_POOL)

    def pool_ids_of(self, cluster_id) -> dict[str, str]:
        return self.pool_ids.get(str(cluster_id)) or {}


def _ids(units) -> list:
    return [u.pk for u in units]


USE_COLUMNS = ("project_id", "department_id", "cluster_id", "node_pool", "allocated", "requested", "cpu_allocated",
               "cpu_requested", "memory_allocated", "memory_requested")


def _use(where: Q) -> QuerySet:
    """The GPUs, CPU and memory the live workloads matching `where` hold and ask for, grouped by project,
    department, cluster and pool: rows of USE_COLUMNS."""
    use = gpu_use()
    return (use.rows().filter(where).filter(use.allocated | use.requested).order_by()
            .values_list("project_id", "department_id", "cluster_id", "node_pool")
            .annotate(allocated=Sum("gpu_request", filter=use.allocated),
                      requested=Sum("gpu_request", filter=use.requested),
                      cpu_allocated=Sum("cpu_request", filter=use.allocated),
                      cpu_requested=Sum("cpu_request", filter=use.requested),
                      memory_allocated=Sum("memory_request", filter=use.allocated),
                      memory_requested=Sum("memory_request", filter=use.requested)))


def _project_use(project_id: int) -> QuerySet:
    """`_use` of one project, which every submission that asks for GPUs reads, and one department's (its page):
    compiled once (perf.keyed_rows), as its six filtered sums cost 2 ms of CPU to compile, more than the rest of
    the submission's quota check (the 1-GPU submission: 5.2 against 3.2 ms without a GPU, docs/performance.md)."""
    return _use(Q(project_id=project_id))


def _department_use(department_id: int) -> QuerySet:
    return _use(Q(department_id=department_id))


def quota_numbers(*, projects: Iterable = (), departments: Iterable = (), clusters: Iterable = (),
                  pools_of: Iterable = (), read_pools: bool = True) -> QuotaNumbers:
    """The numbers of `projects` and `departments` (their rows: their quotas are read from them) and of every pool
    of `clusters` (ids): two queries, however many units — the workloads' use grouped by project, department, cluster
    and pool, and the clusters' pools (their ids, and which is the default; `pools_of`: of these clusters too).
    With `read_pools` False, one query: the default pool is the one named `default` (every cluster has it)."""
    projects, departments = list(projects), list(departments)
    cluster_ids = {str(c) for c in clusters} | {str(c) for c in pools_of if c}
    cluster_ids |= {str(p.cluster_id) for p in projects}
    cluster_ids |= {str(d.cluster_id) for d in departments if getattr(d, "cluster_id", None)}
    found = QuotaNumbers()
    where = Q(pk__in=[])
    if projects:
        where |= Q(project_id__in=_ids(projects))
    if departments:
        where |= Q(department_id__in=_ids(departments))
    if clusters:
        where |= Q(cluster_id__in=[str(c) for c in clusters])
    rows = []
    if len(projects) + len(departments) == 1 and not clusters:  # a submission's quota check, one unit's page
        build, params = (_project_use, {"project_id": projects[0].pk}) if projects else \
            (_department_use, {"department_id": departments[0].pk})
        rows = [tuple(row[name] for name in USE_COLUMNS) for row in keyed_rows.values_once_compiled(build, **params)]
    elif projects or departments or clusters:
        rows = list(_use(where))
    cluster_ids |= {str(r[2]) for r in rows}
    if cluster_ids and read_pools:
        for pk, cluster_id, name, is_default in NodePool.objects.filter(cluster_id__in=cluster_ids).values_list(
                "pk", "cluster_id", "name", "is_default"):
            found.pool_ids.setdefault(str(cluster_id), {})[name] = str(pk)
            if is_default:
                found.default_pools[str(cluster_id)] = name
    for project in projects:
        default = found.default_pool(project.cluster_id)
        unit = found.projects[project.pk] = Unit(pools=pool_quotas(
            project.node_pool_resources, default_pool=default, gpu_deserved=project.gpu_deserved,
            gpu_limit=project.gpu_limit))
        _sum_quotas(unit.pools, unit.total)
    for department in departments:
        default = found.default_pool(getattr(department, "cluster_id", None))
        unit = found.departments[department.pk] = Unit(pools=pool_quotas(department.node_pool_resources,
                                                                         default_pool=default))
        _sum_quotas(unit.pools, unit.total)
    wanted_clusters = {str(c) for c in clusters}
    for project_id, department_id, cluster_id, pool, allocated, requested, *cpu_memory in rows:
        pool = pool or found.default_pool(cluster_id)
        use_of = (allocated, requested, cpu_memory[0:2], cpu_memory[2:4])
        for table, key in ((found.projects, project_id), (found.departments, department_id)):
            if key in table:
                table[key].total.add_use(*use_of)
                table[key].pool(pool).add_use(*use_of)
        if str(cluster_id) in wanted_clusters:
            found.clusters.setdefault(str(cluster_id), {}).setdefault(pool, Numbers()).add_use(*use_of)
    return found


BYTES_PER_MB = 10**6


def quota_status(numbers: Numbers) -> dict:
    """Run:ai's QuotaStatus: allocated and requested GPUs, CPU in millicores and memory in MB, as both of its
    documents give QuotaStatusResource's units."""
    return {"allocated": {"gpu": float(numbers.allocated), "cpu": float(numbers.cpu_allocated),
                          "memory": numbers.memory_allocated / BYTES_PER_MB},
            "requested": {"gpu": float(numbers.requested), "cpu": float(numbers.cpu_requested),
                          "memory": numbers.memory_requested / BYTES_PER_MB}}


def node_pool_quota_statuses(unit: Unit, pool_ids: dict[str, str]) -> list[dict]:
    """Run:ai's `nodePoolQuotaStatuses` (QuotaStatusNodePool): one per pool the unit has a quota or use in, in
    the order of its quotas, then by name."""
    return [{"nodePoolName": name, "nodePoolId": pool_ids.get(name, ""), **quota_status(numbers)}
            for name, numbers in unit.pools.items()]
