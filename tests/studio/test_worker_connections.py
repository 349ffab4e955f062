"""A Celery worker keeps its database connection between tasks as the web tier keeps one between requests: for
DB_CONN_MAX_AGE (config/celery.py, CELERY_DB_REUSE_MAX). Celery's Django fixup, as a worker process installs it,
closed the connection before and after every task: each push opened a PostgreSQL backend of its own."""

import pytest
from celery import signals
from celery.fixups.django import DjangoWorkerFixup
from django.db import connection

from config.celery import app


@pytest.fixture
def worker_fixup():
    """Celery's Django fixup as a worker process installs it at start, removed afterwards."""
    fixup = DjangoWorkerFixup(app)
    fixup.install()
    yield fixup
    for signal, handler in ((signals.task_prerun, fixup.on_task_prerun), (signals.task_postrun, fixup.on_task_postrun),
                            (signals.worker_process_init, fixup.on_worker_process_init),
                            (signals.beat_embedded_init, fixup.close_database)):
        signal.disconnect(handler)


def _run_tasks(count: int) -> list:
    """What a worker does around `count` tasks (each one's query in between); the connection each task used."""
    from workloads.tasks import workload_push

    used = []
    for number in range(count):
        signals.task_prerun.send(sender=workload_push, task_id=f"t{number}", task=workload_push, args=(), kwargs={})
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        used.append(connection.connection)
        signals.task_postrun.send(sender=workload_push, task_id=f"t{number}", task=workload_push, args=(),
                                  kwargs={}, retval=None, state="SUCCESS")
    return used


@pytest.fixture
def max_age(transactional_db):
    """Set the connection's CONN_MAX_AGE (DB_CONN_MAX_AGE) as a worker would start with it."""
    before = connection.settings_dict["CONN_MAX_AGE"]

    def set_to(seconds: int) -> None:
        connection.close()
        connection.settings_dict["CONN_MAX_AGE"] = seconds

    yield set_to
    connection.close()
    connection.settings_dict["CONN_MAX_AGE"] = before


def test_a_worker_keeps_its_connection_between_tasks_while_db_conn_max_age_allows(worker_fixup, max_age):
    max_age(60)
    used = _run_tasks(5)
    assert used[0] is not None and all(conn is used[0] for conn in used)
    assert connection.connection is used[0]  # still open after the last task


def test_a_worker_without_db_conn_max_age_closes_its_connection_after_each_task(worker_fixup, max_age):
    max_age(0)
    used = _run_tasks(3)
    assert len({id(conn) for conn in used}) == 3
    assert connection.connection is None

