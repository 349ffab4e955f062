"""Which node pool a workload is placed in (pure): each pool is its own KAI shard with the project's own queue in
it (studio.clusters.scheduler), so the choice is made once, at submission, from the numbers of each pool the
workload may use, in their order:

1. the first pool where it starts within the project's deserved GPUs there;
2. else the first where it may start over quota (within the project's limit there, on GPUs others lend);
3. else the first where it could ever run (it waits there);
and none when no allowed pool could ever hold it: a pod larger than the pool's largest node, or over the project's
or the department's limit in that pool."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from studio.words import gpu_count


@dataclass(frozen=True)
class PoolQuota:
    name: str
    deserved: Decimal
    limit: Decimal | None  # None: none
    held: Decimal  # the project's GPUs there now (running and waiting: what its queue is asked for)
    department: str = ""
    department_limit: Decimal | None = None
    largest_node: int | None = None  # the GPUs of the pool's largest node (None: not known yet)


def _n(value) -> str:
    return f"{float(value):g}"


def never_in(pool: PoolQuota, gpus: Decimal, project: str, per_pod: Decimal = Decimal(0)) -> str:
    """Why `gpus` GPUs (`per_pod` in one pod) could never run in `pool`; "" when they could."""
    if pool.largest_node is not None and per_pod > pool.largest_node:
        return f"each pod asks for {gpu_count(per_pod)} and the largest node of node pool {pool.name} has " \
               f"{_n(pool.largest_node)}"
    if pool.limit is not None and gpus > pool.limit:
        return f"{gpu_count(gpus)} is more than project {project}'s limit of {_n(pool.limit)} in node pool {pool.name}"
    if pool.department_limit is not None and gpus > pool.department_limit:
        return (f"{gpu_count(gpus)} is more than department {pool.department}'s limit of "
                f"{_n(pool.department_limit)} in node pool {pool.name}")
    return ""


def choose(pools: list[PoolQuota], gpus: Decimal, project: str,
           per_pod: Decimal = Decimal(0)) -> tuple[PoolQuota | None, str, str]:
    """(the pool, "deserved" | "over-quota" | "waits", "") or (None, "", why none could ever hold it)."""
    possible = [p for p in pools if not never_in(p, gpus, project, per_pod)]
    if not possible:
        return None, "", "; ".join(never_in(p, gpus, project, per_pod) for p in pools)
    for pool in possible:
        if pool.held + gpus <= pool.deserved:
            return pool, "deserved", ""
    for pool in possible:
        if pool.limit is None or pool.held + gpus <= pool.limit:
            return pool, "over-quota", ""
    return possible[0], "waits", ""
