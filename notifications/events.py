"""The work of the event tasks: load what an announced change is about and notify its subscribers; and the
periodic look for workloads pending too long (no change announces the passing of time)."""

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from kit.models import StreamSession
from notifications import catalogue, services
from notifications.models import Subscription
from workloads.models import Workload
from workloads.runai_fields import WAITING_PHASES


def workload_changed(*, workload_id: str, category: str, type_: str, message: str, at: str) -> None:
    workload = Workload.objects.select_related("project", "cluster").filter(pk=workload_id).first()
    if workload is not None:
        services.workload_event_notify(workload=workload, category=category, type_=type_, message=message,
                                       at=datetime.fromisoformat(at))


def stream_ended(*, session_id: str, idle: bool, message: str) -> None:
    session = StreamSession.objects.select_related("project").filter(pk=session_id).first()
    if session is not None:
        services.stream_notify(session=session, type_=catalogue.stream_type(idle=idle)[1], message=message)


def pending_scan(now: datetime | None = None) -> int:
    """Notify the subscribers of PendingTooLong of each workload waiting longer than their minutes (once per
    spell of waiting: the key holds when it started to wait). Returns the notifications made."""
    now = now or timezone.now()
    category, type_ = catalogue.WORKLOAD, "PendingTooLong"
    wanted = [s for s in Subscription.objects.filter(user__is_active=True).select_related("user")
              if catalogue.subscribed(s.events, category, type_)]
    if not wanted:
        return 0
    by_minutes: dict = {}
    for subscription in wanted:
        by_minutes.setdefault(subscription.pending_minutes or settings.NOTIFICATIONS_PENDING_MINUTES, []).append(
            subscription)
    made = 0
    for minutes, subscriptions in sorted(by_minutes.items()):
        waiting = Workload.objects.live().select_related("project", "cluster").filter(
            actual_phase__in=WAITING_PHASES, phase_updated_at__lte=now - timedelta(minutes=minutes))
        for workload in waiting:
            users = {}
            for subscription in subscriptions:
                if services.in_scope(subscription, workload.project):
                    users.setdefault(subscription.user, set()).update(subscription.channels)
            users = services.may_see(users, workload.project)
            made += len(services.workload_event_notify(
                workload=workload, category=category, type_=type_, at=workload.phase_updated_at, users=users,
                message=f"Pending for more than {minutes} minutes: {workload.phase_message}".strip(": ")))
    return made
