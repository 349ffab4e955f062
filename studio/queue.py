"""Enqueue Celery tasks by name once the surrounding transaction commits.

By name, so that web processes do not import worker code (the cluster client); on commit, so that a
worker never looks for a row that a rolled-back transaction never wrote. The Celery app is the project's
(config/celery.py), current once the settings are loaded."""

import logging

from celery import current_app as app
from django.db import transaction

log = logging.getLogger(__name__)


def enqueue_on_commit(task_name: str, *args, unsent: set | None = None) -> None:
    """With the broker down the row is committed all the same, and the request must not fail (a 500 would make a
    client retry a submission that exists): the error is logged, and the sync's drift repair does the lost task's
    work once its grace has passed. A repair that could not be sent either names its object in `unsent`, so that
    the sync tries it again on its next tick rather than at its next full resync."""
    def send():
        try:
            app.send_task(task_name, args=list(args))
        except Exception:  # kombu's OperationalError, a refused or reset connection, a timeout
            log.exception("could not enqueue %s for %s; the sync's repair will do its work", task_name, args[:1])
            if unsent is not None and args:
                unsent.add(args[0])

    transaction.on_commit(send)
