"""Idle GPU reclaim and time limits, as Run:ai's project SchedulingRules name them (`Project.scheduling_rules`):

- `interactiveJobMaxIdleDurationSeconds` / `trainingJobMaxIdleDurationSeconds`: a running workspace / training
  with GPUs whose GPU utilisation (the collected GPU_UTILIZATION samples) stayed under GPU_IDLE_THRESHOLD_PERCENT
  for that long is suspended — its GPUs go back to the pool, its storage stays, and one click resumes it (as
  Run:ai's idle timeouts and Kubeflow's notebook culler do);
- `interactiveJobTimeLimitSeconds` / `trainingJobTimeLimitSeconds`: one that has run that long is suspended.

`reclaim_reason` is the pure decision; `workloads_reclaim` is the round (beat, every RECLAIM_INTERVAL_SECONDS):
one query for the candidates, one aggregate over their samples, and for each one to suspend the same transition
as a user's suspend, recorded as an event whose reason the workload page shows.
`interactiveJobPreemptIdleDurationSeconds` (preemptible workspaces) is stored and answered, not enforced here.
"""

import logging
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Max, Min, Q
from django.utils import timezone

from studio.models import Project
from workloads.models import MetricSample, Workload
from workloads.services import workload_suspend_by_system

log = logging.getLogger(__name__)

IDLE_RULE = {Workload.Kind.WORKSPACE: "interactiveJobMaxIdleDurationSeconds",
             Workload.Kind.TRAINING: "trainingJobMaxIdleDurationSeconds"}
TIME_RULE = {Workload.Kind.WORKSPACE: "interactiveJobTimeLimitSeconds",
             Workload.Kind.TRAINING: "trainingJobTimeLimitSeconds"}
IDLE_REASON, TIME_REASON = "IdleGpuReclaimed", "TimeLimitReached"
REASONS = (IDLE_REASON, TIME_REASON)


@dataclass(frozen=True)
class Usage:
    """GPU utilisation samples of one workload since the start of its idle window."""

    first_at: datetime
    last_at: datetime
    peak: float
    count: int


def _span(seconds: int) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    parts = [f"{hours} h" if hours else "", f"{minutes} min" if minutes else "", f"{secs} s" if secs else ""]
    return " ".join(part for part in parts if part) or "0 s"


def reclaim_reason(*, kind: str, has_gpu: bool, running_since: datetime | None, rules: dict, usage: Usage | None,
                   now: datetime, threshold: float, sample_gap: float) -> tuple[str, str] | None:
    """Why a running workload should be suspended now — (reason, message) — or None.

    Idle needs evidence: the workload ran for the whole window, and samples cover it (the first within
    `sample_gap` seconds of its start, the last within `sample_gap` of now), all under `threshold`."""
    if running_since is None:
        return None
    ran = (now - running_since).total_seconds()
    limit = rules.get(TIME_RULE.get(kind, ""))
    if limit and ran >= limit:
        return TIME_REASON, (f"Ran for {_span(ran)}, past the project's limit of {_span(limit)} for {kind}s; "
                             "suspended. Resume it to run again.")
    idle = rules.get(IDLE_RULE.get(kind, ""))
    if not (idle and has_gpu and usage and ran >= idle and usage.count):
        return None
    window_start = now - timedelta(seconds=idle)
    covered = (usage.first_at - window_start).total_seconds() <= sample_gap and \
        (now - usage.last_at).total_seconds() <= sample_gap
    if covered and usage.peak < threshold:
        return IDLE_REASON, (f"GPU utilisation stayed under {threshold:g}% for {_span(idle)} (peak {usage.peak:g}%); "
                             "suspended to give its GPUs back. Resume it to start again.")
    return None


def workloads_reclaim(now: datetime | None = None) -> list[str]:
    """One round over every project with limits; returns the ids of the workloads it suspended."""
    now = now or timezone.now()
    rules_of = {pk: rules for pk, rules in Project.objects.exclude(scheduling_rules={})
                .values_list("pk", "scheduling_rules") if any(rules.get(r) for r in (*IDLE_RULE.values(),
                                                                                     *TIME_RULE.values()))}
    if not rules_of:
        return []
    candidates = list(Workload.objects.filter(
        project_id__in=rules_of, kind__in=list(IDLE_RULE), deleted_at__isnull=True,
        desired_phase=Workload.Desired.RUNNING, actual_phase=Workload.Phase.RUNNING,
    ).only("pk", "kind", "project_id", "gpu_request", "phase_updated_at", "started_at", "actual_phase",
           "desired_phase", "name"))
    windows = defaultdict(list)  # idle window (s) -> the workloads with GPUs it applies to
    for workload in candidates:
        idle = rules_of[workload.project_id].get(IDLE_RULE[workload.kind])
        if idle and workload.gpu_request > 0:
            windows[idle].append(workload.pk)
    usage = {}
    for idle, ids in windows.items():  # one aggregate per distinct window (a handful), not per workload
        usage.update({row["workload_id"]: Usage(row["first_at"], row["last_at"], row["peak"], row["count"])
                      for row in MetricSample.objects.filter(
                          workload_id__in=ids, type="GPU_UTILIZATION", pod_name="",
                          timestamp__gte=now - timedelta(seconds=idle))
                      .values("workload_id").annotate(first_at=Min("timestamp"), last_at=Max("timestamp"),
                                                      peak=Max("value"), count=Count("id"))})
    suspended = []
    sample_gap = 2 * settings.METRICS_INTERVAL_SECONDS
    for workload in candidates:
        verdict = reclaim_reason(
            kind=workload.kind, has_gpu=workload.gpu_request > 0,
            running_since=workload.phase_updated_at or workload.started_at, rules=rules_of[workload.project_id],
            usage=usage.get(workload.pk), now=now, threshold=settings.GPU_IDLE_THRESHOLD_PERCENT, sample_gap=sample_gap)
        if verdict:
            reason, message = verdict
            workload_suspend_by_system(workload=workload, reason=reason, message=message)
            log.info("workload %s suspended: %s", workload.pk, message)
            suspended.append(str(workload.pk))
    return suspended


def last_reclaim(workload: Workload) -> dict | None:
    """The reclaim that suspended this workload, while it stays suspended: {"reason", "message", "at"}."""
    if workload.desired_phase != Workload.Desired.STOPPED:
        return None
    event = workload.events.filter(Q(reason__in=REASONS) | Q(reason="Suspend") | Q(reason="Resume")).first()
    if event is None or event.reason not in REASONS:
        return None
    return {"reason": event.reason, "message": event.message, "at": event.at}
