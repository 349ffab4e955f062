"""A cluster's round (sync, metrics) is exclusive through a lock that dies with its holder: a holder killed
mid-round, or whose database session ends (a PostgreSQL restart ends every session), leaves the next round free
to start at once, not after a lease's expiry. The holders are other processes, as Celery workers are."""

import os
import signal
import subprocess
import sys
import time
import uuid

import psycopg
import pytest
from django.conf import settings

from tests.workloads.cluster_support import ROOT, database_url, wait_for
from workloads.cluster import collect, sync
from workloads.cluster.round_locks import cluster_round

pytestmark = pytest.mark.django_db(transaction=True)


class Holder:
    """`python -m tests.workloads.round_holder`: another process that takes the round lock (or finds it busy)."""

    def __init__(self, cluster_id, purpose: str, url: str):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.workloads.round_holder", str(cluster_id), purpose], cwd=ROOT,
            env={**os.environ, "DATABASE_URL": url, "LOG_FORMAT": "console"},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.answer = self.process.stdout.readline().strip()  # `held <backend pid>` or `busy`

    @property
    def held(self) -> bool:
        return self.answer.startswith("held")

    @property
    def backend_pid(self) -> int:
        return int(self.answer.split()[1])

    def release(self) -> str:
        self.process.stdin.write("release\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline().strip()
        self.process.wait(timeout=10)
        return line

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def close(self) -> None:
        if self.process.poll() is None:
            self.kill()


@pytest.fixture
def holders():
    started = []

    def start(cluster_id, purpose: str, url: str) -> Holder:
        started.append(Holder(cluster_id, purpose, url))
        return started[-1]

    yield start
    for holder in started:
        holder.close()


def started_within_one_interval(round_once) -> float:
    """Seconds until `round_once()` runs instead of being skipped; fails after one sync interval."""
    started = time.monotonic()
    wait_for(lambda: round_once() is not None, timeout=settings.SYNC_INTERVAL_SECONDS, interval=0.05,
             what="the next round")
    return time.monotonic() - started


def test_the_next_sync_round_starts_at_once_after_its_holder_is_killed_mid_round(sim_org, holders):
    holder = holders(sim_org.cluster.pk, "sync", database_url())
    assert holder.held
    assert sync.cluster_sync(sim_org.cluster.pk) is None  # skipped: the other process holds the cluster
    assert not [key for key in sim_org.sim.stats() if key[0] == "list"]
    holder.kill()
    started_within_one_interval(lambda: sync.cluster_sync(sim_org.cluster.pk))


def test_the_next_metrics_round_starts_at_once_after_its_holder_is_killed(sim_org, holders):
    holder = holders(sim_org.cluster.pk, "metrics", database_url())
    assert holder.held
    assert collect.cluster_collect_metrics(sim_org.cluster.pk) is None
    holder.kill()
    started_within_one_interval(lambda: collect.cluster_collect_metrics(sim_org.cluster.pk))


def test_a_round_finished_normally_frees_the_cluster(sim_org, holders):
    holder = holders(sim_org.cluster.pk, "sync", database_url())
    assert holder.release() == "released"
    assert sync.cluster_sync(sim_org.cluster.pk) is not None


def test_a_process_does_not_take_its_own_round_twice(sim_org):
    with cluster_round(sim_org.cluster.pk, "sync") as held:
        assert held
        assert sync.cluster_sync(sim_org.cluster.pk) is None
        with cluster_round(sim_org.cluster.pk, "metrics") as other_purpose:
            assert other_purpose  # sync and metrics rounds of one cluster do not exclude each other
    assert sync.cluster_sync(sim_org.cluster.pk) is not None


# --- the PostgreSQL mechanism, whatever database the suite runs on --------------------------------------------


def test_on_postgresql_the_lock_ends_with_the_holders_session(own_postgres_database, holders):
    cluster_id = str(uuid.uuid4())
    holder = holders(cluster_id, "sync", own_postgres_database)
    assert holder.held and holder.backend_pid > 0
    assert not holders(cluster_id, "sync", own_postgres_database).held  # another worker is refused
    assert holders(cluster_id, "metrics", own_postgres_database).held  # another purpose is not

    # The holder's session ends as every session does when PostgreSQL restarts; its process lives on.
    with psycopg.connect(own_postgres_database, autocommit=True) as admin:
        assert admin.execute("SELECT pg_terminate_backend(%s)", [holder.backend_pid]).fetchone()[0]
    wait_for(lambda: holders(cluster_id, "sync", own_postgres_database).held, timeout=settings.SYNC_INTERVAL_SECONDS,
             interval=0.05, what="the next holder")
    assert holder.release() == "released"  # leaving the round with its session gone is no error


def test_on_postgresql_the_lock_ends_with_a_killed_holder(own_postgres_database, holders):
    cluster_id = str(uuid.uuid4())
    holder = holders(cluster_id, "sync", own_postgres_database)
    assert holder.held
    holder.kill()
    wait_for(lambda: holders(cluster_id, "sync", own_postgres_database).held, timeout=settings.SYNC_INTERVAL_SECONDS,
             interval=0.05, what="the next holder")
