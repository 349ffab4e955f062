"""Celery tasks of the usage app: thin, by id, idempotent, acknowledged late. The roll-up is a beat task: the next
beat is its retry."""

from celery import shared_task

from usage import rollup, services


@shared_task(name="usage.tasks.usage_rollup", acks_late=True)
def usage_rollup() -> int:
    return rollup.usage_rollup()


@shared_task(name="usage.tasks.report_produce", acks_late=True)
def report_produce(report_id: str) -> None:
    services.report_produce(report_id=report_id)
