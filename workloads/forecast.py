"""What the scheduler would do with a workload now (pure), from the same numbers the quota pages show: said by Try
it, the launch preview and `dryRun=true` before anything is submitted (issue 36, point 6). KAI's rules, in the
order its scheduler applies them in the pool the workload would be placed in (workloads/placement.py):

- over the project's or its department's limit in the pool, counting what they already hold there: it waits for
  their own work there to end;
- idle GPUs enough: it starts at once, within the project's deserved share or over it (on GPUs others may
  reclaim later: preemptible work only);
- within the project's deserved share but no idle GPUs: KAI reclaims GPUs from other projects' preemptible work
  running over their deserved share in the pool (named, most over quota first);
- else it waits for capacity, behind the workloads of the project already waiting there."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class PoolState:
    pool: str
    capacity: float  # the pool's GPUs
    allocated: float  # GPUs running in the pool, every project's
    project: str
    deserved: float
    limit: float | None
    project_allocated: float  # the project's GPUs running there
    department: str = ""
    department_limit: float | None = None
    department_allocated: float = 0.0
    # other projects' preemptible work running over their deserved share there: [(project, workload, GPUs)]
    over_quota: list[tuple[str, str, float]] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)  # the project's workloads waiting there, oldest first


def _n(value: float) -> str:
    return f"{value:g}"


def forecast(state: PoolState, gpus: float, *, preemptible: bool) -> dict:
    """{"action": "start" | "start-over-quota" | "reclaim" | "wait", "nodePool", "message", ...}."""
    s, pool = state, state.pool
    answer = {"nodePool": pool, "gpus": gpus}
    if gpus <= 0:
        return {**answer, "action": "start", "message": f"It starts at once in node pool {pool}: it asks for no GPU."}
    if s.limit is not None and s.project_allocated + gpus > s.limit:
        return {**answer, "action": "wait", "waitingFor": "ProjectLimit", "message": (
            f"It waits: project {s.project} holds {_n(s.project_allocated)} of its limit of {_n(s.limit)} GPUs in "
            f"node pool {pool}; it starts when the project's work there ends.")}
    if s.department_limit is not None and s.department_allocated + gpus > s.department_limit:
        return {**answer, "action": "wait", "waitingFor": "DepartmentLimit", "message": (
            f"It waits: department {s.department} holds {_n(s.department_allocated)} of its limit of "
            f"{_n(s.department_limit)} GPUs in node pool {pool}.")}
    within = s.project_allocated + gpus <= s.deserved
    idle = max(0.0, s.capacity - s.allocated)
    if idle >= gpus and not s.waiting:
        if within:
            return {**answer, "action": "start", "message": (
                f"It starts at once in node pool {pool}, within project {s.project}'s deserved "
                f"{_n(s.deserved)} GPUs ({_n(s.project_allocated + gpus)} with it).")}
        if preemptible:
            return {**answer, "action": "start-over-quota", "message": (
                f"It starts at once in node pool {pool} over project {s.project}'s deserved {_n(s.deserved)} GPUs, "
                f"on idle GPUs: it may be reclaimed when other projects need their share.")}
        return {**answer, "action": "wait", "waitingFor": "NonPreemptibleOverQuota", "message": (
            f"It waits: it is not preemptible and would take project {s.project} past its deserved "
            f"{_n(s.deserved)} GPUs in node pool {pool}.")}
    if within:
        victims, freed = [], idle
        for project, workload, held in sorted(s.over_quota, key=lambda v: -v[2]):
            if freed >= gpus:
                break
            victims.append({"project": project, "workload": workload, "gpus": held})
            freed += held
        if freed >= gpus:
            names = ", ".join(f"{v['project']}/{v['workload']}" for v in victims)
            return {**answer, "action": "reclaim", "victims": victims, "message": (
                f"It starts in node pool {pool} within project {s.project}'s deserved share once KAI Scheduler "
                f"reclaims GPUs from over-quota work: {names}.")}
    behind = list(s.waiting)
    return {**answer, "action": "wait", "waitingFor": "Capacity", "behind": behind, "message": (
        f"It waits for GPUs in node pool {pool} ({_n(idle)} of {_n(s.capacity)} idle)"
        + (f", behind {len(behind)} of project {s.project}'s workloads: {', '.join(behind[:5])}." if behind else "."))}
