"""Why a waiting workload waits, and where it stands in its node pool's queue. Pure: the sync
(workloads.cluster.sync) gives it what it read from the cluster and the rows of the cluster's workloads.

- `cluster_reason`: what the cluster shows — an image that cannot be pulled, the scheduler's verdict ("no node
  with room", naming the resources it lacks, or its own words), or the stage the workload is at.
- `queue`: the Pending workloads of each node pool (the first pool a workload names), by submission; for each,
  its position, and over-quota reasons (the project's GPU totals, the project's and the department's quota in
  the pool), counting the GPUs held by allocated workloads plus those of the workloads queued ahead; and an
  estimate of its start where the pool's running workloads have known ends (the project's time limits).

A reason is a dict, answered as is by the API as `pendingReason`: `{"type", "message", ...}` with
type one of TYPES.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from studio.words import gpu_count
from workloads.runai_fields import ALLOCATED_PHASES, WAITING_PHASES

TYPES = ("OverQuota", "NoNodeRoom", "Unschedulable", "ImagePull", "Scheduling", "Creating", "Starting",
         # On a cluster that schedules with KAI Scheduler (workloads.cluster.queued): evicted, waiting to run again.
         "Reclaimed", "Preempted", "Consolidated")
TITLES = {"OverQuota": "Over quota", "NoNodeRoom": "No node with room", "Unschedulable": "Cannot be scheduled",
          "ImagePull": "Image cannot be pulled", "Scheduling": "Waiting for the scheduler",
          "Creating": "Being created", "Starting": "Starting", "Reclaimed": "Reclaimed", "Preempted": "Preempted",
          "Consolidated": "Moved to pack GPUs"}
IMAGE_ERRORS = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"})
# Phases in which a workload's GPUs are held on a node.
ALLOCATED = frozenset(ALLOCATED_PHASES)
GPU = "nvidia.com/gpu"
_INSUFFICIENT = re.compile(r"Insufficient ([A-Za-z0-9./_-]+)")
# The time-limit rules (reclaim.TIME_RULE) that give a running workload a known end.
TIME_RULE = {"workspace": "interactiveJobTimeLimitSeconds", "training": "trainingJobTimeLimitSeconds"}


# --- what the cluster shows -----------------------------------------------------------------------------

def cluster_reason(phase: str, message: str, pods: list, events: list, *, pool: str) -> dict | None:
    """Why a workload in `phase` is not running yet, from its pods and Warning events; None when not waiting."""
    if phase not in WAITING_PHASES:
        return None
    pull = image_pull(pods)
    if pull:
        return pull
    said = unschedulable_message(pods) or _scheduling_event(events)
    if said:
        lacking = list(dict.fromkeys(r.rstrip(".") for r in _INSUFFICIENT.findall(said)))
        if lacking:
            return {"type": "NoNodeRoom", "resource": lacking[0], "resources": lacking, "nodePool": pool,
                    "message": f"No node in node pool {pool} has room for it: not enough {', '.join(lacking)} free.",
                    "schedulerMessage": said}
        return {"type": "Unschedulable", "nodePool": pool, "message": f"The scheduler cannot place it: {said}",
                "schedulerMessage": said}
    if phase == "Creating":
        return {"type": "Creating", "message": message or "Waiting for the cluster to accept its objects."}
    if phase == "Pending":
        return {"type": "Scheduling", "nodePool": pool, "message": message or "Waiting for the scheduler."}
    return {"type": "Starting", "message": message or "Its containers are starting."}


def image_pull(pods: list) -> dict | None:
    for pod in dicts(pods):
        status = pod.get("status") if isinstance(pod.get("status"), dict) else {}
        for container in dicts(status.get("initContainerStatuses")) + dicts(status.get("containerStatuses")):
            waiting = (container.get("state") or {}).get("waiting") if isinstance(container.get("state"), dict) \
                else None
            if isinstance(waiting, dict) and waiting.get("reason") in IMAGE_ERRORS:
                image = str(container.get("image") or _image_of(pod, container.get("name")))
                detail = str(waiting.get("message") or "")
                return {"type": "ImagePull", "image": image, "reason": waiting["reason"],
                        "message": f"Image {image} cannot be pulled ({waiting['reason']})"
                                   + (f": {detail}" if detail else ".")}
    return None


def _image_of(pod: dict, name) -> str:
    spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    for container in dicts(spec.get("initContainers")) + dicts(spec.get("containers")):
        if container.get("name") == name:
            return str(container.get("image") or "")
    return ""


def unschedulable_message(pods: list) -> str:
    for pod in dicts(pods):
        status = pod.get("status") if isinstance(pod.get("status"), dict) else {}
        for condition in dicts(status.get("conditions")):
            if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
                return str(condition.get("message") or condition.get("reason") or "")
    return ""


def _scheduling_event(events: list) -> str:
    said = [e for e in dicts(events) if e.get("reason") == "FailedScheduling"]
    return str(said[-1].get("message") or "") if said else ""


def dicts(value) -> list[dict]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, (list, tuple)) else []


# --- the queue of each node pool ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Quota:
    """A GPU quota that applies to a workload: the project's totals (pool None) or a quota in one pool."""

    scope: str  # "project" | "department"
    name: str
    pool: str | None
    deserved: float | None
    limit: float | None


@dataclass(slots=True)
class Row:
    """One live workload of the cluster, as the queue needs it. A watcher keeps one per live workload between its
    passes (100,000 of them at that size): slotted, its quotas a tuple shared by the rows of one project and pool."""

    id: str
    kind: str
    phase: str  # as derived in this round
    pool: str
    gpus: float
    submitted: datetime
    quotas: tuple[Quota, ...] | list[Quota] = ()
    ends_at: datetime | None = None  # a running workload's known end (a time limit)


@dataclass(frozen=True)
class Place:
    position: int
    of: int
    over_quota: dict | None
    estimated_start: datetime | None


def queue(rows: list[Row]) -> dict[str, Place]:
    """For each Pending row: its place in its pool's queue (1 = next), an over-quota reason, an estimate."""
    waiting = sorted((r for r in rows if r.phase == "Pending"), key=lambda r: (r.submitted, r.id))
    held = defaultdict(float)  # quota key -> GPUs held by allocated workloads
    for row in rows:
        if row.phase in ALLOCATED:
            for quota in row.quotas:
                held[_key(quota)] += row.gpus
    size = defaultdict(int)
    for row in waiting:
        size[row.pool] += 1
    ends = defaultdict(list)  # pool -> [(end, gpus)] of running workloads with a known end
    for row in rows:
        if row.phase in ALLOCATED and row.ends_at is not None and row.gpus > 0:
            ends[row.pool].append((row.ends_at, row.gpus))
    freeing = defaultdict(lambda: ([], []), {pool: _freeing(found) for pool, found in ends.items()})
    places = {}
    ahead = defaultdict(float)  # quota key -> GPUs of the workloads queued so far
    seen, needed = defaultdict(int), defaultdict(float)  # pool -> rows so far, their GPUs
    for row in waiting:
        over = None
        for quota in row.quotas:
            over = over or over_quota(row.kind, row.gpus, held[_key(quota)] + ahead[_key(quota)], quota)
        for quota in row.quotas:
            ahead[_key(quota)] += row.gpus
        seen[row.pool] += 1
        needed[row.pool] += row.gpus
        guess = _freed_by(needed[row.pool], freeing[row.pool]) if row.gpus else None
        places[row.id] = Place(seen[row.pool], size[row.pool], over, guess)
    return places


def _key(quota: Quota) -> tuple:
    return quota.scope, quota.name, quota.pool


def over_quota(kind: str, gpus: float, used: float, quota: Quota) -> dict | None:
    """Whether `gpus` more, on top of `used`, go over `quota`: a training may use up to the limit, other kinds
    up to the deserved GPUs (as the submission's check, services.quota_decision). -1 or none: no cap."""
    if gpus <= 0:
        return None
    which, cap = ("limit", quota.limit) if kind == "training" else ("deserved", quota.deserved)
    if cap is None or cap < 0 or used + gpus <= cap:
        return None
    where = f" in node pool {quota.pool}" if quota.pool else ""
    over = used + gpus - cap
    return {
        "type": "OverQuota", "scope": quota.scope, "scopeName": quota.name, "nodePool": quota.pool,
        "resource": GPU, "quota": which, "allowed": _num(cap), "used": _num(used), "requested": _num(gpus),
        "over": _num(over),
        "message": (f"Over the GPU quota of {quota.scope} {quota.name}{where}: {gpu_count(_num(used))} held or queued "
                    f"ahead + {_num(gpus):g} requested = {_num(used + gpus):g}, its {which} is {_num(cap):g} "
                    f"({_num(over):g} over)."),
    }


def estimate(needed: float, ends: list[tuple[datetime, float]]) -> datetime | None:
    """When the running workloads with a known end will have freed `needed` GPUs (this workload's and those of
    the workloads ahead of it); None when those ends do not free enough (an unknown end, or not enough GPUs)."""
    return _freed_by(needed, _freeing(ends))


def _freeing(ends: list[tuple[datetime, float]]) -> tuple[list[datetime], list[float]]:
    """The ends in time order and the GPUs freed by each of them (a running sum), sorted once per pool."""
    times, freed, total = [], [], 0.0
    for end, gpus in sorted(ends, key=lambda e: e[0]):
        total += gpus
        times.append(end)
        freed.append(total)
    return times, freed


def _freed_by(needed: float, freeing: tuple[list[datetime], list[float]]) -> datetime | None:
    times, freed = freeing
    index = bisect_left(freed, needed)
    return times[index] if index < len(times) else None


def quotas_of(*, project: str, deserved, limit, project_pools: list, department: str, department_pools: list,
              pool: str) -> list[Quota]:
    """The quotas a workload of `project` in `pool` falls under: the project's GPU totals, and the `gpu` entry
    for the pool in the project's and the department's per-pool quotas (Run:ai's `resources`), where set."""
    found = [Quota("project", project, None, _opt(deserved), _opt(limit))]
    for scope, name, entries in (("project", project, project_pools), ("department", department, department_pools)):
        for entry in dicts(entries):
            if (entry.get("nodePool") or {}).get("name") == pool and isinstance(entry.get("gpu"), dict):
                gpu = entry["gpu"]
                found.append(Quota(scope, name, pool, _opt(gpu.get("deserved")), _opt(gpu.get("limit"))))
    return found


def ends_at(kind: str, started_at: datetime | None, rules: dict) -> datetime | None:
    limit = (rules or {}).get(TIME_RULE.get(kind, ""))
    if started_at is None or not isinstance(limit, (int, float)) or limit <= 0:
        return None
    return started_at + timedelta(seconds=limit)


def _opt(value) -> float | None:
    try:
        return None if value is None else float(value)
    except (TypeError, ValueError):
        return None


def _num(value: float) -> float:
    return round(float(value), 3)


def answer(reason: dict | None, place: Place | None) -> tuple[dict | None, int | None]:
    """(pendingReason, queuePosition) of one workload: the cluster's reason, unless the queue found it over a
    quota (then that, with the scheduler's words kept), and its place in the queue with the estimate."""
    if place is None:
        return reason, None
    if place.over_quota:
        said = (reason or {}).get("schedulerMessage")
        reason = {**place.over_quota, **({"schedulerMessage": said} if said else {})}
    reason = reason or {"type": "Scheduling", "message": "Waiting for the scheduler."}
    start = place.estimated_start.isoformat().replace("+00:00", "Z") if place.estimated_start else None
    return {**reason, "queueLength": place.of, "estimatedStartAt": start}, place.position
