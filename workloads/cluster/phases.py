"""Kubernetes objects -> a workload's phase and message. Pure, and total: any
partial object (no status, empty conditions, wrong types) gives a phase, never an exception.

Decisions the callers rely on:
- `("Deleted", "")` once desired is Deleted and neither the primary object nor any pod is left. It is not
  an actualPhase the API answers: the caller marks the row deleted.
- desired Running with the primary object missing: `("Creating", "")` while it was never seen, else
  `("Creating", MISSING)` and the caller recreates it. A finished workload is not recreated: a Job
  removed by `ttlSecondsAfterFinished` stays Completed / Failed.
- Completed is terminal, and so is Failed for a training (the Job gave up). A Deployment or Knative
  Service that is Failed (image pull, crash loop) is re-derived every round: its controller keeps
  retrying, and a workload that recovers is Running again.
- An image that cannot be pulled fails the workload once the pod has waited IMAGE_PULL_GRACE (at once
  for an invalid name); for a Job this is final, although the Job itself would wait for ever.
- A crash loop (CRASH_LOOP_RESTARTS restarts) is Failed when no pod is healthy, else Degraded.
- `Unknown` ("the cluster has not answered") is the caller's to set; here only when every pod is on a
  lost node.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

PHASES = frozenset({
    "Creating", "Initializing", "Resuming", "Pending", "Deleting", "Running", "Updating", "Stopped",
    "Stopping", "Degraded", "Failed", "Completed", "Terminating", "Unknown",
})
DELETED = "Deleted"
MISSING = "Object missing; recreating"
IMAGE_PULL_GRACE = timedelta(minutes=2)
CRASH_LOOP_RESTARTS = 3
IMAGE_ERRORS = {"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull"}
FINAL_IMAGE_ERRORS = {"InvalidImageName", "ErrImageNeverPull"}
PENDING_EVENTS = ("FailedCreate", "FailedScheduling")  # why no pod runs yet
STARTING_EVENTS = ("FailedMount", "FailedAttachVolume")  # why a scheduled pod cannot start
UNSCHEDULABLE_HINTS = ("Unschedulable", "nodes are available", "Insufficient")
STOP_PHASES = {"Stopped", "Stopping", "Resuming"}
UP_PHASES = {"Running", "Degraded"}
REPLICA_TYPE_LABEL = "training.kubeflow.org/replica-type"  # a Kubeflow job's pod role (master, worker, …)
BATCH_KINDS = ("training", "distributed")  # run to completion: Failed is final


@dataclass(frozen=True)
class Observed:
    """What the sync saw for one workload in one round."""

    primary: dict | None  # the Job / Deployment / Knative Service; None when missing
    pods: list[dict]
    events: list[dict] = ()  # v1 Events about the workload's objects


@dataclass(frozen=True)
class PodState:
    state: str  # terminating|succeeded|failed|image_error|crash_loop|unknown|unschedulable|pending|initializing|running
    ready: bool
    message: str


def derive_phase(kind: str, desired: str, previous: str, observed: Observed, *,
                 now: datetime | None = None) -> tuple[str, str]:
    """(actualPhase, phaseMessage) for a workload of `kind` whose intent is `desired`."""
    now = _aware(now) or datetime.now(UTC)
    primary = observed.primary if isinstance(observed.primary, dict) else None
    pods = [_pod_state(pod, now) for pod in _dicts(observed.pods)]
    events = _dicts(observed.events)
    present = [p for p in pods if p.state not in ("succeeded", "failed")]
    if desired == "Deleted":
        if primary is None and not present:
            return DELETED, ""
        return "Deleting", _waiting_for(primary, present)
    terminal = previous == "Completed" or (previous == "Failed" and kind in BATCH_KINDS)
    if terminal and primary is None:
        return previous, ""
    if desired == "Stopped":
        return _stop_phase(kind, primary, present, previous)
    if primary is None:
        return "Creating", "" if previous in (None, "", "Creating") else MISSING
    if kind == "training":
        phase, message = _job_phase(primary, pods, events)
    elif kind == "distributed":
        phase, message = _kubeflow_phase(primary, pods, events)
    elif str(primary.get("apiVersion", "")).startswith("serving.knative.dev/"):
        phase, message = _knative_phase(primary, pods, events, previous)
    else:
        phase, message = _deployment_phase(primary, pods, events, previous)
    if terminal and phase not in ("Completed", "Failed"):
        return previous, ""
    if previous in STOP_PHASES and phase not in UP_PHASES | {"Completed", "Failed"}:
        return "Resuming", message
    return phase, message


def pod_summary(pod: dict, *, now: datetime | None = None) -> dict:
    """A pod as the workloads API lists it."""
    pod = pod if isinstance(pod, dict) else {}
    state = _pod_state(pod, _aware(now) or datetime.now(UTC))
    return {
        "id": _str(_dig(pod, "metadata", "uid")),
        "name": _str(_dig(pod, "metadata", "name")),
        "phase": _str(_dig(pod, "status", "phase")) or "Pending",
        "nodeName": _str(_dig(pod, "spec", "nodeName")) or None,
        "createdAt": _str(_dig(pod, "metadata", "creationTimestamp")) or None,
        "message": state.message,
        "role": _str(_dig(pod, "metadata", "labels", REPLICA_TYPE_LABEL))[:16],
    }


# --- per primary kind --------------------------------------------------------------------------------

def _stop_phase(kind: str, primary: dict | None, present: list[PodState], previous: str) -> tuple[str, str]:
    if kind == "distributed" and primary is not None:
        finished = _kubeflow_finished(primary)
        if finished:
            return finished
        parked = _dig(primary, "spec", "runPolicy", "suspend") is True
    elif kind == "training" and primary is not None:
        finished = _job_finished(primary)
        if finished:
            return finished
        parked = _dig(primary, "spec", "suspend") is True
    else:
        parked = primary is None or _dig(primary, "spec", "replicas") == 0
    if parked and not present:
        return "Stopped", ""
    if previous in ("Completed", "Failed"):
        return previous, ""
    return "Stopping", f"Waiting for {len(present)} pod(s) to stop" if present else "Suspending"


def _job_finished(job: dict) -> tuple[str, str] | None:
    # SuccessCriteriaMet / FailureTarget come first on Kubernetes >= 1.31, while pods still terminate.
    for kind, phase in (("Complete", "Completed"), ("SuccessCriteriaMet", "Completed"),
                        ("Failed", "Failed"), ("FailureTarget", "Failed")):
        condition = _condition(job, kind)
        if condition and condition.get("status") == "True":
            return phase, "" if phase == "Completed" else _text(condition.get("reason"), condition.get("message"))
    return None


def _job_phase(job: dict, pods: list[PodState], events: list[dict]) -> tuple[str, str]:
    finished = _job_finished(job)
    if finished:
        return finished
    if _dig(job, "spec", "suspend") is True:
        return "Resuming", "Job is suspended"
    image_error = next((p for p in pods if p.state == "image_error"), None)
    if image_error:
        return "Failed", image_error.message
    live = [p for p in pods if p.state not in ("succeeded", "failed", "terminating")]
    if not live:
        failed = _dig(job, "status", "failed")
        if isinstance(failed, int) and failed > 0:
            return "Pending", f"Restarting after {failed} failed attempt(s)"
    # A Job's pods need no readiness: one running pod is a running Job.
    return _pods_phase(live, wanted=1, need_ready=False, events=events, previous="")


def _kubeflow_finished(job: dict) -> tuple[str, str] | None:
    """The training operator's verdict: Succeeded (its master, or JAX's workers, succeeded) or Failed."""
    for kind, phase in (("Succeeded", "Completed"), ("Failed", "Failed")):
        condition = _condition(job, kind)
        if condition and condition.get("status") == "True":
            return phase, "" if phase == "Completed" else _text(condition.get("reason"), condition.get("message"))
    return None


def _kubeflow_phase(job: dict, pods: list[PodState], events: list[dict]) -> tuple[str, str]:
    """A Kubeflow job (PyTorchJob, TFJob, …): Running once every replica it asks for runs; until then the
    waiting pods say why (Pending on the scheduler, Initializing while they start)."""
    finished = _kubeflow_finished(job)
    if finished:
        return finished
    if _dig(job, "spec", "runPolicy", "suspend") is True:
        return "Resuming", "Job is suspended"
    image_error = next((p for p in pods if p.state == "image_error"), None)
    if image_error:
        return "Failed", image_error.message
    live = [p for p in pods if p.state not in ("succeeded", "failed", "terminating")]
    wanted = 0
    specs = next((v for k, v in (_dig(job, "spec") or {}).items() if k.endswith("ReplicaSpecs")), None)
    for replica in (specs.values() if isinstance(specs, dict) else ()):
        count = _dig(replica, "replicas")
        wanted += count if isinstance(count, int) and not isinstance(count, bool) else 1
    restarting = _condition(job, "Restarting")
    if not live and _true(restarting):
        return "Pending", _text(restarting.get("reason"), restarting.get("message"))
    return _pods_phase(live, wanted=max(wanted, 1), need_ready=False, events=events, previous="")


def _deployment_phase(deploy: dict, pods: list[PodState], events: list[dict], previous: str) -> tuple[str, str]:
    wanted = _dig(deploy, "spec", "replicas")
    wanted = wanted if isinstance(wanted, int) and not isinstance(wanted, bool) else 1
    if wanted <= 0:
        return "Resuming", "Scaling up"
    live = [p for p in pods if p.state not in ("succeeded", "failed", "terminating")]
    failure = _condition(deploy, "ReplicaFailure")
    if not live and failure and failure.get("status") == "True":
        return "Pending", _text(failure.get("reason"), failure.get("message"))
    return _pods_phase(live, wanted=wanted, need_ready=True, events=events, previous=previous)


def _knative_phase(service: dict, pods: list[PodState], events: list[dict], previous: str) -> tuple[str, str]:
    ready = _condition(service, "Ready") or {}
    message = _text(ready.get("reason"), ready.get("message"))
    live = [p for p in pods if p.state not in ("succeeded", "failed", "terminating")]
    if ready.get("status") == "True":
        min_scale = _dig(service, "spec", "template", "metadata", "annotations", "autoscaling.knative.dev/min-scale")
        scaled_to_zero = not live and str(min_scale or "0") == "0"
        return "Running", "Scaled to zero" if scaled_to_zero else ""
    if previous in UP_PHASES:
        return "Degraded", message or "Service is not ready"
    if ready.get("status") == "False":
        pending = ready.get("reason") == "RevisionMissing" or any(h in message for h in UNSCHEDULABLE_HINTS)
        return ("Pending" if pending else "Failed"), message
    phase, pod_message = _pods_phase(live, wanted=1, need_ready=True, events=events, previous="")
    if phase == "Running":  # pods are ready but Knative's route is not yet
        return "Initializing", message
    return phase, pod_message or message


def _pods_phase(live: list[PodState], *, wanted: int, need_ready: bool, events: list[dict],
                previous: str) -> tuple[str, str]:
    """The phase the live pods show: `wanted` healthy pods make it Running."""
    healthy = [p for p in live if p.state == "running" and (p.ready or not need_ready)]
    others = [p for p in live if p not in healthy]
    broken = next((p for p in others if p.state in ("image_error", "crash_loop")), None)
    if others and all(p.state == "unknown" for p in live):
        return "Unknown", others[0].message
    if broken:
        return ("Degraded" if healthy else "Failed"), broken.message
    unschedulable = next((p for p in others if p.state == "unschedulable"), None)
    if healthy and len(healthy) >= wanted and not unschedulable:
        return "Running", ""
    reason = next((p.message for p in others if p.message), "")
    if reason == "ContainerCreating":  # the kubelet's events say what it waits for
        reason = _event_message(events, STARTING_EVENTS) or reason
    if healthy:
        count = f"{len(healthy)}/{max(wanted, len(live))} pods ready"
        return "Degraded", f"{count}: {reason}" if reason else count
    if previous in UP_PHASES:
        return "Degraded", reason or "No pod is ready"
    if any(p.state in ("initializing", "running", "unknown") for p in others):
        return "Initializing", reason
    if unschedulable:
        return "Pending", unschedulable.message or _event_message(events, ("FailedScheduling",))
    waiting = "Waiting for pods to be scheduled" if live else "Waiting for pods to be created"
    return "Pending", _event_message(events, PENDING_EVENTS) or waiting


def _waiting_for(primary: dict | None, present: list[PodState]) -> str:
    if present:
        return f"Waiting for {len(present)} pod(s) to terminate"
    return f"Waiting for the {_str(primary.get('kind')) or 'object'} to be deleted" if primary else ""


# --- one pod -----------------------------------------------------------------------------------------

def _pod_state(pod: dict, now: datetime) -> PodState:
    status = pod.get("status") if isinstance(pod.get("status"), dict) else {}
    phase = status.get("phase")
    if _dig(pod, "metadata", "deletionTimestamp"):
        return PodState("terminating", False, "Terminating")
    if phase == "Succeeded":
        return PodState("succeeded", False, "")
    if phase == "Failed":
        return PodState("failed", False, _text(status.get("reason"), status.get("message")) or _exit_message(pod))
    waiting = _waiting(pod)
    for reason, message, restarts, container in waiting:
        if reason in IMAGE_ERRORS and (reason in FINAL_IMAGE_ERRORS or _pull_grace_over(pod, now)):
            return PodState("image_error", False, _text(reason, message))
        if reason == "CrashLoopBackOff" and restarts >= CRASH_LOOP_RESTARTS:
            return PodState("crash_loop", False, _text(reason, message) + _last_exit(container))
    starting = _text(*waiting[0][:2]) if waiting else _init_running(pod)
    if phase == "Running":
        ready = _true(_condition(pod, "Ready"))
        return PodState("running", ready, "" if ready else starting or "Waiting for the readiness probe")
    if phase == "Unknown":
        return PodState("unknown", False, _text(status.get("reason"), status.get("message")) or "Node unreachable")
    scheduled = _condition(pod, "PodScheduled")
    if scheduled and scheduled.get("status") == "False":
        return PodState("unschedulable", False, _str(scheduled.get("message")) or _str(scheduled.get("reason")))
    if _true(scheduled) or _dig(pod, "spec", "nodeName"):
        return PodState("initializing", False, starting or "ContainerCreating")
    return PodState("pending", False, "")


def _statuses(pod: dict) -> list[dict]:
    status = pod.get("status") if isinstance(pod.get("status"), dict) else {}
    return _dicts(status.get("initContainerStatuses")) + _dicts(status.get("containerStatuses"))


def _waiting(pod: dict) -> list[tuple[str, str, int, dict]]:
    """(reason, message, restartCount, container status) of each waiting container, init ones first."""
    found = []
    for container in _statuses(pod):
        waiting = _dig(container, "state", "waiting")
        if isinstance(waiting, dict) and waiting.get("reason"):
            restarts = container.get("restartCount")
            restarts = restarts if isinstance(restarts, int) else 0
            found.append((_str(waiting["reason"]), _str(waiting.get("message")), restarts, container))
    return found


def _init_running(pod: dict) -> str:
    status = pod.get("status") if isinstance(pod.get("status"), dict) else {}
    for container in _dicts(status.get("initContainerStatuses")):
        if isinstance(_dig(container, "state", "running"), dict):
            return f"Init container {_str(container.get('name'))} running"
    return ""


def _last_exit(container: dict) -> str:
    terminated = _dig(container, "lastState", "terminated")
    if not isinstance(terminated, dict) or terminated.get("exitCode") is None:
        return ""
    reason = f", {_str(terminated['reason'])}" if terminated.get("reason") else ""
    return f" (last exit code {_str(terminated['exitCode'])}{reason})"


def _exit_message(pod: dict) -> str:
    for container in _statuses(pod):
        terminated = _dig(container, "state", "terminated")
        if isinstance(terminated, dict) and terminated.get("exitCode") not in (None, 0):
            return _text(terminated.get("reason"), terminated.get("message")) or f"Exit code {terminated['exitCode']}"
    return ""


def _pull_grace_over(pod: dict, now: datetime) -> bool:
    """Pulling starts once the pod is scheduled; a time we cannot read counts as long ago."""
    scheduled = _condition(pod, "PodScheduled") or {}
    since = _time(scheduled.get("lastTransitionTime")) or _time(_dig(pod, "status", "startTime"))
    since = since or _time(_dig(pod, "metadata", "creationTimestamp"))
    return since is None or now - since >= IMAGE_PULL_GRACE


def _event_message(events: list[dict], reasons: tuple[str, ...]) -> str:
    """The newest warning of these reasons; the scheduler's own words for FailedScheduling."""
    warnings = [e for e in events if e.get("type") == "Warning" and e.get("reason") in reasons]
    if not warnings:
        return ""
    epoch = datetime.min.replace(tzinfo=UTC)
    latest = max(reversed(warnings), key=lambda e: _time(e.get("lastTimestamp")) or _time(e.get("eventTime"))
                 or _time(_dig(e, "metadata", "creationTimestamp")) or epoch)
    message = _str(latest.get("message"))
    return message if latest["reason"] == "FailedScheduling" else _text(latest["reason"], message)


# --- tolerant access ---------------------------------------------------------------------------------

def _dig(obj, *keys):
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def _dicts(value) -> list[dict]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, (list, tuple)) else []


def _condition(obj: dict, kind: str) -> dict | None:
    return next((c for c in _dicts(_dig(obj, "status", "conditions")) if c.get("type") == kind), None)


def _true(condition: dict | None) -> bool:
    return bool(condition) and condition.get("status") == "True"


def _str(value) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _text(*parts) -> str:
    return ": ".join(_str(p) for p in parts if p)


def _aware(moment: datetime | None) -> datetime | None:
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)


def _time(value) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return _aware(datetime.fromisoformat(value))
    except ValueError:
        return None
