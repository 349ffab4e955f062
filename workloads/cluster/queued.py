"""Why a workload waits on a cluster that schedules with KAI Scheduler, in KAI's own words, and its place in its
project's queue (docs/scheduling.md). Pure: the sync (workloads.cluster.sync) gives it the pods, the PodGroups
KAI's pod-grouper made for the workload, KAI's `Evict` events on them, and what it knows of the organisation.

- `why`: an image that cannot be pulled; else the PodGroup's `UnschedulableOnNodePool` condition (KAI's structured
  reasons: `OverLimit` and `NonPreemptibleOverQuota` are over-quota waits, naming the project or department whose
  queue holds it, `PodSchedulingErrors` no node with room), else the pod's `Unschedulable` condition; and, for a
  workload KAI evicted, `Reclaimed` (another queue took its over-quota GPUs back: the project is named) or
  `Preempted` (a higher-priority workload of its own queue), with what it waits for now in `waitingFor`.
- `queue`: the Pending workloads of each project queue in KAI's order (priority class, then the PodGroup's
  creationTimestamp and UID: `created_order`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from workloads.cluster.pending import Place, dicts, image_pull, unschedulable_message
from workloads.runai_fields import WAITING_PHASES

GPU = "nvidia.com/gpu"
EVICTED = ("Reclaimed", "Preempted", "Consolidated")
RESOURCE_WORDS = {"GPUs": GPU, "CPU cores": "cpu", "memory": "memory"}
_RECLAIM = re.compile(r"^Pod (?P<ns>[^/\s]+)/(?P<pod>\S+) was preempted by workload (?P<by_ns>[^/\s]+)/(?P<by>[^\s.]+)")
_PREEMPT = re.compile(r"^Pod (?P<ns>[^/\s]+)/(?P<pod>\S+) was preempted by higher priority workload "
                      r"(?P<by_ns>[^/\s]+)/(?P<by>\S+)")
_CONSOLIDATE = re.compile(r"^Pod (?P<ns>[^/\s]+)/(?P<pod>\S+) was preempted and rescheduled due to bin packing")
_LACKING = re.compile(r"didn't have enough resources?: ([A-Za-z ]+?)(?:[,.]|$)")
_LIMIT = re.compile(r"(?:of|reached the allowable limit of) (GPUs|CPU cores|memory)")


@dataclass(frozen=True)
class Owner:
    """Whose a PodGroup is: the project and the workload (None: not known, e.g. a group made after the round
    listed them; `(namespace, "")` keys the project of a namespace)."""

    project: str
    workload: str | None = None


def eviction(event: dict, owners: dict) -> dict | None:
    """KAI's `Evict` event on a PodGroup -> {type, message, schedulerMessage, by…}; None for other events."""
    text = str(event.get("message") or "")
    head = text.split("\n", 1)[0]
    found_kind = next(((k, m) for k, pattern in (("Reclaimed", _RECLAIM), ("Preempted", _PREEMPT),
                                                 ("Consolidated", _CONSOLIDATE)) if (m := pattern.match(head))), None)
    if found_kind is None:
        return None
    kind, match = found_kind
    found = {"type": kind, "schedulerMessage": text, "at": event.get("lastTimestamp") or event.get("eventTime")}
    if kind == "Consolidated":
        return {**found, "message": "Moved by the scheduler to pack GPUs tighter; it waits to run again."}
    owner = owners.get((match["by_ns"], match["by"])) or owners.get((match["by_ns"], ""))  # else by its namespace
    by = {"namespace": match["by_ns"], "podGroup": match["by"]}
    if owner is not None:
        by.update(project=owner.project, **({"workload": owner.workload} if owner.workload else {}))
    whose = f"project {owner.project}" if owner else f"namespace {match['by_ns']}"
    what = f" (workload {owner.workload})" if owner and owner.workload else ""
    if kind == "Reclaimed":
        message = (f"Reclaimed: {whose}{what} took back GPUs of its quota that this training held over its own "
                   "quota. It waits in its queue and runs again by itself when GPUs free up.")
        return {**found, "reclaimedBy": by, "message": message}
    message = (f"Preempted by a higher-priority workload of its own project{what}. It waits in its queue and runs "
               "again by itself when GPUs free up.")
    return {**found, "preemptedBy": by, "message": message}


def _resource(text: str) -> str:
    match = _LIMIT.search(text)
    return RESOURCE_WORDS.get(match.group(1), GPU) if match else GPU


def _listed(values, name: str) -> float | None:
    try:
        return float(str((values or {}).get(name)).rstrip("m")) / (1000 if str((values or {}).get(name)).endswith("m")
                                                                   else 1)
    except (TypeError, ValueError):
        return None


def _over_quota(reason: str, text: str, details: dict | None, *, pool: str, units: dict) -> dict:
    queue = ((details or {}).get("queueDetails") or {})
    name = queue.get("name") or (text.split(" quota ", 1)[0] if reason == "OverLimit" else "")
    if reason == "NonPreemptibleOverQuota":
        match = re.search(r"but (\S+) quota is", text)
        name = match.group(1) if match else name
    scope, scope_name = units.get(name, ("project", name))
    resource = _resource(text) if reason == "OverLimit" else (
        "cpu" if "CPU cores" in text else "memory" if "GB memory" in text else GPU)
    which = "limit" if reason == "OverLimit" else "deserved"
    out = {"type": "OverQuota", "schedulerReason": reason, "scope": scope, "scopeName": scope_name, "queue": name,
           "nodePool": pool, "resource": resource, "quota": which, "schedulerMessage": text}
    allowed = _listed(queue.get("queueResourceLimits" if which == "limit" else "queueDeservedResources"), resource)
    used = _listed(queue.get("queueAllocatedResources" if which == "limit"
                             else "queueAllocatedNonPreemptibleResources"), resource)
    requested = _listed(queue.get("podGroupRequestedResources"), resource)
    if None not in (allowed, used, requested):
        out.update(allowed=allowed, used=used, requested=requested, over=round(used + requested - allowed, 3))
    if which == "limit":
        out["message"] = (f"Over the {resource} limit of {scope} {scope_name}: it waits in the queue until the "
                          f"{scope}'s workloads hold less. The scheduler: {text}")
    else:
        out["message"] = (f"Over the deserved {resource} quota of {scope} {scope_name}: it is not preemptible, so it "
                          f"runs only within that quota (trainings may go over it). The scheduler: {text}")
    return out


def _from_words(text: str, *, pool: str, units: dict) -> dict:
    """A reason from KAI's message on a pod (`OverLimit: …`, `no nodes with enough resources were found: …`)."""
    head, _, rest = text.partition(": ")
    if head in ("OverLimit", "NonPreemptibleOverQuota"):
        return _over_quota(head, rest.rstrip("."), None, pool=pool, units=units)
    lacking = [RESOURCE_WORDS.get(word.strip(), word.strip()) for word in _LACKING.findall(text)]
    lacking = list(dict.fromkeys(lacking))
    if lacking:
        return {"type": "NoNodeRoom", "resource": lacking[0], "resources": lacking, "nodePool": pool,
                "message": f"No node in node pool {pool} has room for it: not enough {', '.join(lacking)} free.",
                "schedulerMessage": text}
    return {"type": "Unschedulable", "nodePool": pool, "message": f"The scheduler cannot place it: {text}",
            "schedulerMessage": text}


def group_condition(groups: list) -> dict | None:
    for group in dicts(groups):
        for condition in dicts((group.get("status") or {}).get("schedulingConditions")):
            if condition.get("type") == "UnschedulableOnNodePool" and condition.get("status") == "True":
                return condition
    return None


def waiting_now(phase: str, message: str, pods: list, groups: list, *, pool: str, units: dict) -> dict | None:
    """Why it waits, this round, from KAI's words (no eviction history)."""
    if phase not in WAITING_PHASES:
        return None
    pull = image_pull(pods)
    if pull:
        return pull
    if phase != "Pending":  # placed: what the scheduler said before no longer holds
        if phase == "Creating":
            return {"type": "Creating", "message": message or "Waiting for the cluster to accept its objects."}
        return {"type": "Starting", "message": message or "Its containers are starting."}
    condition = group_condition(groups)
    if condition is not None:
        explained = dicts(condition.get("reasons"))
        first = explained[0] if explained else {}
        reason, text = str(first.get("reason") or ""), str(first.get("message") or condition.get("message") or "")
        if reason in ("OverLimit", "NonPreemptibleOverQuota"):
            return _over_quota(reason, text, first.get("details"), pool=pool, units=units)
        said = unschedulable_message(pods)
        return _from_words(said or text, pool=pool, units=units)
    said = unschedulable_message(pods)
    if said:
        return _from_words(said, pool=pool, units=units)
    return {"type": "Scheduling", "nodePool": pool, "message": message or "Waiting for KAI Scheduler."}


def why(phase: str, message: str, pods: list, groups: list, evictions: list[dict], *, pool: str, units: dict,
        previous: dict | None, was_running: bool) -> dict | None:
    """The workload's pendingReason on a KAI cluster. An eviction is told from the moment the workload leaves
    its allocated phase until it runs again: the newest `evictions` entry (eviction()) when it just left or while
    the cluster still lists it, else the one the previous round stored."""
    now = waiting_now(phase, message, pods, groups, pool=pool, units=units)
    if now is None:
        return None
    evicted = None
    if evictions and (was_running or (previous or {}).get("type") in EVICTED):
        # Read again while the eviction is listed: the round that saw it first may have listed the evicting
        # workload's PodGroup only after it (made meanwhile), and so not known whose it was.
        evicted = max(evictions, key=lambda e: str(e.get("at") or ""))
    elif previous and previous.get("type") in EVICTED:
        evicted = {k: v for k, v in previous.items() if k != "waitingFor"}
    if evicted is None or now["type"] == "ImagePull":
        return now
    return {**evicted, "waitingFor": now, **({"nodePool": now["nodePool"]} if now.get("nodePool") else {})}


@dataclass(slots=True)
class Row:
    id: str
    queue: str
    phase: str
    priority: int
    submitted: datetime
    created: tuple[datetime, str] | None = None  # its PodGroup's (creationTimestamp, UID): created_order


def created_order(groups: list) -> tuple[datetime, str] | None:
    """The workload's key among equal priorities in KAI's queue: its PodGroup's creationTimestamp (whole seconds, as
    the API server stamps it), then the PodGroup's UID, as KAI orders jobs that its plugins leave equal
    (NVIDIA/KAI-Scheduler pkg/scheduler/framework/session_plugins.go, Session.JobOrderFn). Not the submission: the
    PodGroup is made when the pod-grouper sees the first pod, which may come in another order than the workloads
    were submitted, and PodGroups made within one second go by their (random) UIDs. The first of its groups (a
    workload whose pods each have one); None while KAI's pod-grouper has made none."""
    keys = []
    for group in dicts(groups):
        meta = group.get("metadata") or {}
        try:
            created = datetime.fromisoformat(str(meta.get("creationTimestamp")))
        except ValueError:
            continue
        keys.append((created, str(meta.get("uid") or "")))
    return min(keys) if keys else None


def queue(rows: list[Row]) -> dict[str, Place]:
    """The Pending workloads of each project queue, in KAI's order within a queue: priority, then the PodGroup's
    creationTimestamp and UID (`created_order`); those whose PodGroup KAI's pod-grouper has not made yet (KAI does
    not see them) after them, by submission."""
    waiting = defaultdict(list)
    for row in rows:
        if row.phase == "Pending":
            waiting[row.queue].append(row)
    places = {}
    for queued in waiting.values():
        queued.sort(key=lambda r: (-r.priority, r.created is None, r.created or (), r.submitted, r.id))
        for index, row in enumerate(queued, start=1):
            places[row.id] = Place(index, len(queued), None, None)
    return places
