"""Enqueue Celery tasks by name once the surrounding transaction commits.

By name, so that web processes do not import worker code (the cluster client); on commit, so that a
worker never looks for a row that a rolled-back transaction never wrote."""

from django.db import transaction

from studio.celery import app


def enqueue_on_commit(task_name: str, *args) -> None:
    # robust: with the broker down the row is committed all the same, and the request must not fail (a 500
    # would make a client retry a submission that exists). The error is logged; the sync's drift repair
    # does the lost task's work once its grace has passed.
    transaction.on_commit(lambda: app.send_task(task_name, args=list(args)), robust=True)
