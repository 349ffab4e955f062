"""The numbers of one node pool that the forecast (workloads/forecast.py) reads, as the quota pages count them:
allocated is what runs (ALLOCATED_PHASES), requested what is meant to run (HOLDING_GPUS: running or waiting), per
project of the pool's cluster, from the workloads' rows and the place each was given (`Workload.node_pool`)."""

from __future__ import annotations

from decimal import Decimal

from studio.models import DEFAULT_NODE_POOL, Project
from workloads.forecast import PoolState, ProjectInPool
from workloads.models import HOLDING_GPUS, Workload
from workloads.runai_fields import ALLOCATED_PHASES

PREEMPTIBLE_KINDS = (Workload.Kind.TRAINING, Workload.Kind.DISTRIBUTED)  # Run:ai's default classes: train


def _gpu_quota(project: Project, pool: str) -> tuple[float, float | None, float]:
    """(deserved, limit, over-quota weight) of the project's GPUs in the pool."""
    entries = [e for e in project.node_pool_resources or () if isinstance(e, dict)]
    if not entries:
        limit = None if project.gpu_limit is None else float(project.gpu_limit)
        return (float(project.gpu_deserved) if pool == DEFAULT_NODE_POOL else 0.0), limit, 1.0
    for entry in entries:
        if ((entry.get("nodePool") or {}).get("name") or DEFAULT_NODE_POOL) == pool:
            gpu = entry.get("gpu") or {}
            deserved, limit = gpu.get("deserved"), gpu.get("limit")
            return (max(0.0, float(deserved)) if deserved is not None else 0.0,
                    None if limit is None or float(limit) < 0 else float(limit),
                    float(gpu.get("overQuotaWeight") or 1))
    return 0.0, None, 1.0


def pool_state(project: Project, pool: str, *, department_limit: Decimal | None) -> PoolState:
    """Two queries: the pool's workloads that run or wait for GPUs, and their projects' quotas."""
    places = (pool, "") if pool == DEFAULT_NODE_POOL else (pool,)
    rows = list(Workload.objects.filter(HOLDING_GPUS, cluster_id=project.cluster_id, node_pool__in=places)
                .order_by("created_at").values_list("name", "project_id", "kind", "actual_phase", "gpu_request"))
    capacity = ((project.cluster.gpu_capacity or {}).get("pools") or {}).get(pool, {}).get("total")
    if capacity is None:
        capacity = (project.cluster.gpu_capacity or {}).get("total") or 0
    projects = {p.pk: p for p in Project.objects.filter(pk__in={r[1] for r in rows} - {project.pk})
                .select_related("department").only("id", "name", "gpu_deserved", "gpu_limit", "node_pool_resources",
                                                   "department__name")}
    projects[project.pk] = project

    def in_pool(p: Project) -> ProjectInPool:
        deserved, limit, weight = _gpu_quota(p, pool)
        mine = [r for r in rows if r[1] == p.pk]
        return ProjectInPool(
            name=p.name, department=p.department.name, deserved=deserved, limit=limit, weight=weight,
            requested=sum(float(r[4]) for r in mine),
            running=[(r[0], float(r[4]), r[2] in PREEMPTIBLE_KINDS) for r in mine if r[3] in ALLOCATED_PHASES])
    return PoolState(pool=pool, capacity=float(capacity), project=in_pool(project),
                     others=[in_pool(p) for pk, p in projects.items() if pk != project.pk],
                     department_limit=None if department_limit is None else float(department_limit),
                     waiting=[r[0] for r in rows if r[1] == project.pk and r[3] not in ALLOCATED_PHASES])
