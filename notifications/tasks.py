"""Celery tasks of the notifications: thin, by id, idempotent, acknowledged late. A delivery that may pass later
(a server down, a 5xx) is retried with exponential backoff and jitter (NOTIFICATIONS_RETRY_BACKOFF,
NOTIFICATIONS_RETRY_BACKOFF_MAX, NOTIFICATIONS_MAX_RETRIES); one refused for good is not."""

from celery import shared_task
from django.conf import settings

from notifications import events, services
from notifications.senders import Failed


@shared_task(name="notifications.tasks.deliver", bind=True, acks_late=True, autoretry_for=(Failed,),
             retry_backoff=settings.NOTIFICATIONS_RETRY_BACKOFF,
             retry_backoff_max=settings.NOTIFICATIONS_RETRY_BACKOFF_MAX, retry_jitter=True,
             max_retries=settings.NOTIFICATIONS_MAX_RETRIES)
def deliver(self, delivery_id: int) -> None:
    services.delivery_send(delivery_id, last_try=self.request.retries >= self.max_retries)


@shared_task(name="notifications.tasks.workload_changed", acks_late=True)
def workload_changed(workload_id: str, category: str, type_: str, message: str, at: str) -> None:
    """One change a message: what the receiver sent before the batches below (messages still queued in an
    upgrade)."""
    events.workload_changed(workload_id=workload_id, category=category, type_=type_, message=message, at=at)


@shared_task(name="notifications.tasks.workloads_changed", acks_late=True)
def workloads_changed(changes: list[list[str]]) -> None:
    """A batch of [workload id, category, type, message, at] (notifications.receivers)."""
    for workload_id, category, type_, message, at in changes:
        events.workload_changed(workload_id=workload_id, category=category, type_=type_, message=message, at=at)


@shared_task(name="notifications.tasks.stream_ended", acks_late=True)
def stream_ended(session_id: str, idle: bool, message: str) -> None:
    events.stream_ended(session_id=session_id, idle=idle, message=message)


@shared_task(name="notifications.tasks.pending_scan", acks_late=True)
def pending_scan() -> None:
    events.pending_scan()
