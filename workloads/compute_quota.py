"""A workload's CPU and memory, over every pod it may run at once, against the CPU and memory limits of its project
and department where their per-pool quotas set them (Run:ai's `cpu` in millicores, `memory` in its `units`).

A workload over them could never run (its queue is held to the limit), so it is refused before anything reaches the
cluster, as one over the GPU limits is (services.quota_decision): 100,000 CPU-only workers are 100,000 pods' worth
of cores. It is enough that one of the pools the workload may use could hold it. Pure: the project row and its
department, as read for the submit."""

from __future__ import annotations

from decimal import Decimal

from studio.clusters.models import DEFAULT_NODE_POOL
from studio.org.units import MB_PER_UNIT
from workloads.specs import workload_cpu

BYTES_PER_MB = Decimal(10**6)


def _limits(resources, kind: str) -> dict[str, Decimal | None]:
    """The limit of `kind` per pool of a unit's per-pool quotas, in cores or bytes; None: none (unset or -1)."""
    out: dict[str, Decimal | None] = {}
    for entry in resources or ():
        if not isinstance(entry, dict):
            continue
        pool = (entry.get("nodePool") or {}).get("name") if isinstance(entry.get("nodePool"), dict) else None
        quota = entry.get(kind) if isinstance(entry.get(kind), dict) else {}
        limit = quota.get("limit")
        if limit is None or float(limit) < 0:
            out[pool or DEFAULT_NODE_POOL] = None
        elif kind == "cpu":
            out[pool or DEFAULT_NODE_POOL] = Decimal(str(limit)) / 1000
        else:
            scale = Decimal(str(MB_PER_UNIT.get(quota.get("units") or "MB", 1.0)))
            out[pool or DEFAULT_NODE_POOL] = Decimal(str(limit)) * scale * BYTES_PER_MB
    return out


def _n(value: Decimal) -> str:
    return f"{float(value):g}"


def _shown(kind: str, value: Decimal) -> str:
    return f"{_n(value)} CPU cores" if kind == "cpu" else f"{_n(value / BYTES_PER_MB)} MB of memory"


def _why_not(project, kind: str, total: Decimal, pool: str) -> str:
    """Why `total` of `kind` never fits `pool` for the project; "" when it does."""
    for unit, label in ((project, f"project {project.name}"), (project.department, f"department "
                                                                                   f"{project.department.name}")):
        limit = _limits(unit.node_pool_resources, kind).get(pool)
        if limit is not None and total > limit:
            return f"more than {label}'s limit of {_shown(kind, limit)} in node pool {pool}"
    return ""


def compute_quota_errors(project, kind: str, request: dict, pools: list[str]) -> dict[str, list[str]]:
    """{"spec.compute.cpuCoreRequest" | "spec.compute.cpuMemoryRequest": [why]} when the workload's CPU or memory over
    all its pods could never fit the project's or its department's limit in any of `pools`; {} when it could."""
    cores, memory = workload_cpu(kind, request)
    errors = {}
    for resource, total, field in (("cpu", cores, "cpuCoreRequest"), ("memory", memory, "cpuMemoryRequest")):
        if total <= 0:
            continue
        reasons = [_why_not(project, resource, total, pool) for pool in pools]
        if all(reasons):
            errors[f"spec.compute.{field}"] = [f"It can never run: its pods ask for {_shown(resource, total)} in all, "
                                               f"{'; '.join(reasons)}."]
    return errors
