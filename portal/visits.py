"""The member's home: "what changed since your last visit". A visit is the home opened after more than
VISIT_GAP without it (a reload or the page's own refresh is the same visit): its changes start where the previous
visit was last seen. The changes are the user's own workloads that changed phase since then, each once, as it is
now: finished, failed, reclaimed (or stopped to free its GPUs), or in another phase."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone

from portal.models import HomeVisit
from workloads.models import Workload, WorkloadEvent

VISIT_GAP = timedelta(minutes=30)
SHOWN = 10
RECLAIMS = ("Reclaimed", "Preempted", "IdleGpuReclaimed", "TimeLimitReached")


def home_visit_record(*, user, now: datetime | None = None) -> tuple[bool, datetime | None]:
    """Note that the user opened their home: (whether they had been here before, where this visit's changes
    start; None until a visit follows an earlier one)."""
    now = now or timezone.now()
    visit = HomeVisit.objects.filter(user=user).first()
    if visit is None:
        HomeVisit.objects.create(user=user, seen_at=now, since=None)
        return False, None
    if now - visit.seen_at > VISIT_GAP:
        visit.since = visit.seen_at
    visit.seen_at = now
    visit.save(update_fields=["seen_at", "since"])
    return True, visit.since


def visit_since(user) -> tuple[bool, datetime | None]:
    """(whether the user has been here before, where the current visit's changes start), without noting a visit:
    the page's live refresh."""
    visit = HomeVisit.objects.filter(user=user).first()
    return visit is not None, (visit.since if visit else None)


@dataclass
class Change:
    workload: Workload
    at: datetime
    what: str  # finished | failed | reclaimed | changed
    words: str


def changes_since(user, since: datetime | None) -> list[Change]:
    """The user's workloads whose phase changed after `since`, the latest first, each once (two queries)."""
    if since is None:
        return []
    events = (WorkloadEvent.objects.filter(workload__created_by=user, workload__deleted_at__isnull=True, at__gt=since)
              .exclude(phase="").order_by("-at", "-id").values_list("workload_id", "at", "reason")[:500])
    latest: dict = {}
    reclaimed = set()
    for workload_id, at, reason in events:
        latest.setdefault(workload_id, at)
        if reason in RECLAIMS:
            reclaimed.add(workload_id)
    chosen = list(latest)[:SHOWN]
    rows = Workload.objects.filter(pk__in=chosen).select_related("project")
    by_pk = {row.pk: row for row in rows}
    changes = []
    for pk in chosen:
        workload = by_pk.get(pk)
        if workload is None:
            continue
        phase = workload.actual_phase
        evicted = (workload.pending_reason or {}).get("type") in RECLAIMS and phase == Workload.Phase.PENDING
        if phase == Workload.Phase.COMPLETED:
            what, words = "finished", "finished"
        elif phase == Workload.Phase.FAILED:
            what, words = "failed", "failed" + (f": {workload.phase_message[:140]}" if workload.phase_message else "")
        elif pk in reclaimed or evicted:
            what, words = "reclaimed", f"was reclaimed; now {phase}"
        else:
            what, words = "changed", f"is {phase} now"
        changes.append(Change(workload, latest[pk], what, words))
    return changes
