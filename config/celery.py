"""The Celery app (cookiecutter-django style); the beat schedule is CELERY_BEAT_SCHEDULE in settings."""

import os

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("studio")
# The apps enqueue through celery.current_app (studio/queue.py) and never import this package: as the default
# app it is the current one in every thread and greenlet, not only the one that created it.
app.set_default()
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@signals.worker_init.connect
@signals.beat_init.connect
def _refuse_without_keys(**kwargs):
    from django.core.exceptions import ImproperlyConfigured

    from studio.keys import require_keys

    try:
        require_keys()
    except ImproperlyConfigured as exc:
        # Celery logs and swallows an Exception raised by a signal handler; SystemExit stops the process.
        raise SystemExit(f"ImproperlyConfigured: {exc}") from exc


@signals.task_prerun.connect
@signals.task_postrun.connect
def _database_connection_as_a_request_keeps_it(sender=None, **kwargs):
    """Before and after each task, what Django does before and after each request: the connection closed if it
    failed or is older than CONN_MAX_AGE (DB_CONN_MAX_AGE), else kept for the next task. A task run eagerly, in its
    caller's process and transaction, is the caller's business (as for Celery's own fixup)."""
    if sender is None or getattr(sender.request, "is_eager", False):
        return
    from django.db import close_old_connections

    close_old_connections()
