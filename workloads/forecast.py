"""What the scheduler would do with a workload now (pure), from the numbers the quota pages show: said by Try it,
the launch preview and `dryRun=true` before anything is submitted. KAI's rules, in the pool the workload would be
placed in (workloads/placement.py):

- over the project's limit there, counting what it already holds: it waits for its own work there to end;
- each project's fair share of the pool: its deserved GPUs (up to what it asks for), then the rest of the pool
  divided by over-quota weight among the projects that ask for more, up to their limits (KAI's proportion);
- idle GPUs enough (and nothing of the project waiting before it): it starts at once, within its deserved share or
  over it (on GPUs others may reclaim later: preemptible work only);
- within its fair share but no idle GPUs, or its department at its limit there: KAI reclaims GPUs from other
  projects' preemptible work running beyond their fair share (in the same department, when it is the department's
  limit that binds), newest first;
- else it waits: for the department's limit, or for capacity, behind the project's workloads waiting there."""

from __future__ import annotations

from dataclasses import dataclass, field

from studio.words import gpu_count

EPS = 1e-9


@dataclass(frozen=True)
class ProjectInPool:
    name: str
    department: str
    deserved: float
    limit: float | None
    weight: float
    requested: float  # running and waiting there
    running: list[tuple[str, float, bool]] = field(default_factory=list)  # (workload, GPUs, preemptible), oldest first

    @property
    def allocated(self) -> float:
        return sum(gpus for _, gpus, _ in self.running)


@dataclass(frozen=True)
class PoolState:
    pool: str
    capacity: float  # the pool's GPUs
    project: ProjectInPool  # the submitting project
    others: list[ProjectInPool] = field(default_factory=list)  # the other projects with work in the pool
    department_limit: float | None = None
    waiting: list[str] = field(default_factory=list)  # the project's workloads waiting there, oldest first


def _n(value: float) -> str:
    return f"{value:g}"


def fair_shares(projects: list[ProjectInPool], capacity: float) -> dict[str, float]:
    """Deserved (up to the request) first, then what is left by weight among those asking for more."""
    share = {p.name: min(p.deserved, p.requested) for p in projects}
    left = capacity - sum(share.values())

    def room(p):
        cap = p.requested if p.limit is None else min(p.requested, p.limit)
        return cap - share[p.name]
    active = [p for p in projects if room(p) > EPS]
    while left > EPS and active:
        weights = sum(p.weight for p in active) or len(active)
        given = 0.0
        for p in active:
            g = min(left * (p.weight or 1) / weights, room(p))
            share[p.name] += g
            given += g
        left -= given
        active = [p for p in active if room(p) > EPS]
        if given <= EPS:
            break
    return share


def forecast(state: PoolState, gpus: float, *, preemptible: bool) -> dict:
    """{"action": "start" | "start-over-quota" | "reclaim" | "wait", "nodePool", "gpus", "message", ...}."""
    me, pool = state.project, state.pool
    answer = {"nodePool": pool, "gpus": gpus}
    if gpus <= 0:
        return {**answer, "action": "start", "message": f"It starts at once in node pool {pool}: it asks for no GPU."}
    if me.limit is not None and me.allocated + gpus > me.limit + EPS:
        return {**answer, "action": "wait", "waitingFor": "ProjectLimit", "message": (
            f"It waits: project {me.name} holds {_n(me.allocated)} of its limit of {gpu_count(me.limit)} in node pool "
            f"{pool}; it starts when the project's work there ends.")}
    asking = ProjectInPool(me.name, me.department, me.deserved, me.limit, me.weight, me.requested + gpus, me.running)
    fair = fair_shares([asking, *state.others], state.capacity)
    allocated = me.allocated + sum(o.allocated for o in state.others)
    idle = max(0.0, state.capacity - allocated)
    within_fair = me.allocated + gpus <= fair[me.name] + EPS
    # what others run beyond their fair share, preemptible, newest first: what KAI may reclaim
    beyond = []
    for other in state.others:
        excess = other.allocated - fair[other.name]
        for workload, held, can_go in reversed(other.running):
            if excess <= EPS:
                break
            if can_go:
                beyond.append((other, workload, held))
                excess -= held
    department_allocated = me.allocated + sum(o.allocated for o in state.others if o.department == me.department)
    over_department = state.department_limit is not None and \
        department_allocated + gpus > state.department_limit + EPS
    if over_department:
        need = department_allocated + gpus - state.department_limit
        victims = _take([b for b in beyond if b[0].department == me.department], need)
        if within_fair and victims is not None:
            return _reclaim(answer, me, pool, victims)
        return {**answer, "action": "wait", "waitingFor": "DepartmentLimit", "message": (
            f"It waits: department {me.department} holds {_n(department_allocated)} of its limit of "
            f"{gpu_count(state.department_limit)} in node pool {pool}.")}
    if idle + EPS >= gpus and not state.waiting:
        if me.allocated + gpus <= me.deserved + EPS:
            return {**answer, "action": "start", "message": (
                f"It starts at once in node pool {pool}, within project {me.name}'s deserved {gpu_count(me.deserved)} "
                f"({_n(me.allocated + gpus)} with it).")}
        if preemptible:
            return {**answer, "action": "start-over-quota", "message": (
                f"It starts at once in node pool {pool} over project {me.name}'s deserved {gpu_count(me.deserved)}, "
                f"on idle GPUs: it may be reclaimed when other projects need their share.")}
        return {**answer, "action": "wait", "waitingFor": "NonPreemptibleOverQuota", "message": (
            f"It waits: it is not preemptible and would take project {me.name} past its deserved "
            f"{gpu_count(me.deserved)} in node pool {pool}.")}
    if within_fair:
        victims = _take(beyond, gpus - idle)
        if victims is not None:
            return _reclaim(answer, me, pool, victims)
    return {**answer, "action": "wait", "waitingFor": "Capacity", "behind": list(state.waiting), "message": (
        f"It waits for GPUs in node pool {pool} ({_n(idle)} of {_n(state.capacity)} idle)"
        + (f", behind {len(state.waiting)} of project {me.name}'s workloads: {', '.join(state.waiting[:5])}."
           if state.waiting else "."))}


def _take(candidates, need: float):
    """The first candidates whose GPUs cover `need`; None when all of them do not."""
    taken, freed = [], 0.0
    for other, workload, held in candidates:
        if freed + EPS >= need:
            break
        taken.append({"project": other.name, "workload": workload, "gpus": held})
        freed += held
    return taken if freed + EPS >= need else None


def _reclaim(answer: dict, me: ProjectInPool, pool: str, victims: list[dict]) -> dict:
    names = ", ".join(f"{v['project']}/{v['workload']}" for v in victims)
    return {**answer, "action": "reclaim", "victims": victims, "message": (
        f"It starts in node pool {pool}, within project {me.name}'s fair share, once KAI Scheduler reclaims GPUs "
        f"from work over its fair share: {names}.")}
