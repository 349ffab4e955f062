"""Quota and use, for the quota pages (reads only): per node pool, GPU, CPU and memory deserved, limit and
allocated, of a project and summed over a department's projects.

Quotas are the project's per-pool `resources` (Run:ai's shape: CPU in millicores, memory in its `units`); a
project without them has its GPU totals in its cluster's default pool. GPUs allocated and requested are the
organisation's numbers (studio.org.numbers: what every page and answer shows); CPU and memory allocated are the
requests of the live workloads in an allocated phase times their running pods. A workload counts in the pool it was
placed in (`Workload.node_pool`). Over quota: allocated above deserved (the scheduler lends idle GPUs beyond a
project's deserved share, and may reclaim them)."""

from collections import defaultdict
from dataclasses import dataclass, field

from studio.clusters.quantities import parse_quantity
from studio.models import Department, Project
from studio.org.numbers import QuotaNumbers, quota_numbers
from studio.org.units import MB_PER_UNIT
from workloads.models import Workload
from workloads.runai_fields import ALLOCATED_PHASES


@dataclass
class Use:
    """One resource in one pool: amounts in display units (GPUs, cores, GB); limit None is "no limit"."""

    deserved: float | None = None
    limit: float | None = None
    allocated: float = 0.0
    requested: float | None = None  # GPUs only: what runs plus what waits

    @property
    def scale(self) -> float:
        return max(v for v in (self.deserved or 0, self.limit or 0, self.allocated, 0.001))

    def percent(self, value) -> int:
        return round(100 * (value or 0) / self.scale)

    @property
    def over(self) -> float:
        return max(0.0, self.allocated - (self.deserved or 0)) if self.deserved is not None else 0.0

    def add(self, other: "Use") -> None:
        if other.deserved is not None:
            self.deserved = (self.deserved or 0) + other.deserved
        self.limit = None if self.limit is None or other.limit is None else self.limit + other.limit
        self.allocated += other.allocated
        if other.requested is not None:
            self.requested = (self.requested or 0) + other.requested


@dataclass
class PoolUse:
    pool: str
    gpu: Use = field(default_factory=Use)
    cpu: Use = field(default_factory=Use)
    memory: Use = field(default_factory=Use)

    @property
    def label(self) -> str:
        return self.pool


def _amount(value) -> float:
    try:
        return float(parse_quantity(str(value)))
    except (ValueError, TypeError, ArithmeticError):
        return 0.0


def _quota(entry: dict | None, kind: str) -> tuple[float | None, float | None]:
    quota = entry or {}
    factor = {"cpu": 0.001, "gpu": 1.0}.get(kind) or MB_PER_UNIT.get(quota.get("units"), 1.0) / 1000  # → GB

    def scaled(value):
        return None if value in (None, -1) else float(value) * factor

    return scaled(quota.get("deserved")), scaled(quota.get("limit"))


def _allocations(projects, found: QuotaNumbers) -> dict:
    """(project id, pool) -> (cores, GB) held now."""
    held = defaultdict(lambda: [0.0, 0.0])
    rows = (Workload.objects.live().filter(project__in=projects, actual_phase__in=ALLOCATED_PHASES)
            .values_list("project_id", "cluster_id", "node_pool", "running_pods", "spec"))
    for project_id, cluster_id, pool, pods, spec in rows:
        compute = (spec or {}).get("compute") or {}
        row = held[(project_id, pool or found.default_pool(cluster_id))]
        row[0] += _amount(compute.get("cpuCoreRequest") or 0) * (pods or 0)
        row[1] += _amount(compute.get("cpuMemoryRequest") or 0) * (pods or 0) / 1e9
    return held


def _project_pools(project: Project, held: dict, found: QuotaNumbers) -> list[PoolUse]:
    quotas = {(e.get("nodePool") or {}).get("name", ""): e for e in project.node_pool_resources or ()}
    pools = []
    for name, gpus in found.project(project.pk).pools.items():
        use = PoolUse(pool=name, gpu=Use(deserved=None if gpus.deserved is None else float(gpus.deserved),
                                         limit=None if gpus.limit is None else float(gpus.limit),
                                         allocated=float(gpus.allocated), requested=float(gpus.requested)))
        for kind in ("cpu", "memory"):
            deserved, limit = _quota((quotas.get(name) or {}).get(kind), kind)
            setattr(use, kind, Use(deserved=deserved, limit=limit))
        pools.append(use)
    by_name = {p.pool: p for p in pools}
    for (project_id, pool), (cores, gb) in held.items():
        if project_id != project.pk:
            continue
        target = by_name.get(pool)
        if target is None:  # held CPU in a pool with no GPUs: shown, with nothing deserved
            target = by_name[pool] = PoolUse(pool=pool, gpu=Use(requested=0.0))
            pools.append(target)
        target.cpu.allocated += cores
        target.memory.allocated += gb
    return pools


def project_use(project: Project) -> list[PoolUse]:
    found = quota_numbers(projects=[project])
    return _project_pools(project, _allocations([project], found), found)


@dataclass
class DepartmentUse:
    department: Department
    projects: list  # (project, [PoolUse])
    pools: list  # [PoolUse] summed over the projects, by pool

    @property
    def gpu(self) -> Use:
        total = Use(deserved=0, limit=0)
        for pool in self.pools:
            total.add(pool.gpu)
        return total


def department_uses(*, user) -> list[DepartmentUse]:
    """The departments the user sees, each with the projects of it the user sees."""
    projects = list(Project.objects.visible_to(user).select_related("department").order_by("department__name", "name"))
    found = quota_numbers(projects=projects)
    held = _allocations(projects, found)
    grouped = defaultdict(list)
    for project in projects:
        grouped[project.department].append((project, _project_pools(project, held, found)))
    result = []
    for department, rows in grouped.items():
        sums: dict[str, PoolUse] = {}
        for _project, pools in rows:
            for pool in pools:
                total = sums.setdefault(pool.pool, PoolUse(pool=pool.pool, gpu=Use(deserved=0, limit=0, requested=0),
                                                           cpu=Use(deserved=None, limit=0), memory=Use(deserved=None, limit=0)))
                total.gpu.add(pool.gpu)
                total.cpu.add(pool.cpu)
                total.memory.add(pool.memory)
        result.append(DepartmentUse(department=department, projects=rows, pools=sorted(sums.values(), key=lambda p: p.pool)))
    return result
