"""Kit's periodic round (beat, every STREAMS_GOVERN_INTERVAL_SECONDS): idle streams end, queues move on."""

from celery import shared_task

from kit import sessions


@shared_task(name="kit.tasks.streams_govern", acks_late=True)
def streams_govern() -> dict:
    return sessions.sessions_govern()
