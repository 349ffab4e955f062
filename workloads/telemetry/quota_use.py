"""Quota and use, for the quota pages (reads only): per node pool, GPU, CPU and memory deserved, limit and
allocated, of a project and summed over a department's projects.

Quotas are the project's per-pool `resources` (Run:ai's shape: CPU in millicores, memory in its `units`); a
project without them has its GPU totals under "every pool". Allocation is what its live workloads in an allocated
phase hold, as the org-unit telemetry counts it: GPUs as the quota counts them, CPU and memory their requests
times their running pods; a workload's pool is the first it asks for. Over quota: allocated above deserved (the
scheduler lends idle GPUs beyond a project's deserved share, and may reclaim them)."""

from collections import defaultdict
from dataclasses import dataclass, field

from studio.clusters.quantities import parse_quantity
from studio.models import Department, Project
from studio.org.units import MB_PER_UNIT
from workloads.models import Workload
from workloads.runai_fields import ALLOCATED_PHASES, node_pool_expression

EVERY_POOL = ""  # a project without per-pool quotas: its GPU totals hold over every pool


@dataclass
class Use:
    """One resource in one pool: amounts in display units (GPUs, cores, GB); limit None is "no limit"."""

    deserved: float | None = None
    limit: float | None = None
    allocated: float = 0.0

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


@dataclass
class PoolUse:
    pool: str
    gpu: Use = field(default_factory=Use)
    cpu: Use = field(default_factory=Use)
    memory: Use = field(default_factory=Use)

    @property
    def label(self) -> str:
        return self.pool or "every pool"


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


def _allocations(projects) -> dict:
    """(project id, pool) -> (GPUs, cores, GB) held now."""
    held = defaultdict(lambda: [0.0, 0.0, 0.0])
    rows = (Workload.objects.live().filter(project__in=projects, actual_phase__in=ALLOCATED_PHASES)
            .annotate(pool=node_pool_expression()).values_list("project_id", "pool", "gpu_request", "running_pods", "spec"))
    for project_id, pool, gpus, pods, spec in rows:
        compute = (spec or {}).get("compute") or {}
        row = held[(project_id, pool)]
        row[0] += float(gpus or 0)
        row[1] += _amount(compute.get("cpuCoreRequest") or 0) * (pods or 0)
        row[2] += _amount(compute.get("cpuMemoryRequest") or 0) * (pods or 0) / 1e9
    return held


def _project_pools(project: Project, held: dict) -> list[PoolUse]:
    pools = []
    if project.node_pool_resources:
        for entry in project.node_pool_resources:
            name = (entry.get("nodePool") or {}).get("name", "")
            use = PoolUse(pool=name)
            for kind in ("gpu", "cpu", "memory"):
                deserved, limit = _quota(entry.get(kind), kind)
                setattr(use, kind, Use(deserved=deserved, limit=limit))
            pools.append(use)
    else:
        limit = float(project.gpu_limit) if project.gpu_limit is not None else None
        pools.append(PoolUse(pool=EVERY_POOL, gpu=Use(deserved=float(project.gpu_deserved), limit=limit)))
    by_name = {p.pool: p for p in pools}
    for (project_id, pool), (gpus, cores, gb) in held.items():
        if project_id != project.pk:
            continue
        target = by_name.get(pool) or by_name.get(EVERY_POOL)
        if target is None:  # a pool without quota of its own: shown, with nothing deserved
            target = by_name[pool] = PoolUse(pool=pool)
            pools.append(target)
        target.gpu.allocated += gpus
        target.cpu.allocated += cores
        target.memory.allocated += gb
    return pools


def project_use(project: Project) -> list[PoolUse]:
    return _project_pools(project, _allocations([project]))


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
    held = _allocations(projects)
    grouped = defaultdict(list)
    for project in projects:
        grouped[project.department].append((project, _project_pools(project, held)))
    result = []
    for department, rows in grouped.items():
        sums: dict[str, PoolUse] = {}
        for _project, pools in rows:
            for pool in pools:
                total = sums.setdefault(pool.pool, PoolUse(pool=pool.pool, gpu=Use(deserved=0, limit=0),
                                                           cpu=Use(deserved=None, limit=0), memory=Use(deserved=None, limit=0)))
                total.gpu.add(pool.gpu)
                total.cpu.add(pool.cpu)
                total.memory.add(pool.memory)
        result.append(DepartmentUse(department=department, projects=rows, pools=sorted(sums.values(), key=lambda p: p.pool)))
    return result
