"""One Celery beat at a time: real `celery beat` processes compete for the beat lease. The second waits and sends
nothing; it takes over within a few seconds when the first is killed, or when the first's database session ends
(as every session does when PostgreSQL restarts), on PostgreSQL and on the file lease of a single host."""

import os
import queue
import signal
import subprocess
import sys
import threading
import time

import psycopg
import pytest

from tests.workloads.cluster_support import ROOT

CHECK_SECONDS = 0.3
SENDING = "Sending due task clusters-sync"


class Beat:
    """`celery -A config beat` with a fast schedule, its log lines read as they come."""

    def __init__(self, database_url: str, var_dir):
        env = {**os.environ, "DATABASE_URL": database_url, "STUDIO_VAR_DIR": str(var_dir), "REDIS_URL": "",
               "LOG_FORMAT": "console", "LOG_LEVEL": "DEBUG", "SYNC_RESYNC_SECONDS": "0.3",
               "BEAT_LEASE_CHECK_SECONDS": str(CHECK_SECONDS), "PYTHONUNBUFFERED": "1"}
        env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "--quiet", "beat", "-l", "DEBUG",
             "--schedule", str(var_dir / f"schedule-{time.monotonic_ns()}")],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(line)

    def wait_for(self, text: str, timeout: float) -> float:
        """Seconds until a line holding `text` (counting from now); fails at the deadline."""
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            try:
                line = self.lines.get(timeout=0.1)
            except queue.Empty:
                assert self.process.poll() is None, "beat exited:\n" + "".join(self.seen)
                continue
            self.seen.append(line)
            if text in line:
                return time.monotonic() - started
        pytest.fail(f"no {text!r} within {timeout} s:\n" + "".join(self.seen[-30:]))

    def drain(self, seconds: float) -> str:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                self.seen.append(self.lines.get(timeout=0.05))
            except queue.Empty:
                pass
        return "".join(self.seen)

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


@pytest.fixture
def beats():
    started = []

    def start(database_url, var_dir) -> Beat:
        started.append(Beat(database_url, var_dir))
        return started[-1]

    yield start
    for beat in started:
        beat.stop()


def first_beat_then_a_waiting_one(beats, database_url, var_dir) -> tuple[Beat, Beat]:
    first = beats(database_url, var_dir)
    first.wait_for("beat lease held: this beat sends", timeout=60)
    first.wait_for(SENDING, timeout=10)
    second = beats(database_url, var_dir)
    second.wait_for("held by another beat", timeout=60)
    waiting = second.drain(3 * CHECK_SECONDS + 1)
    assert SENDING not in waiting and "this beat sends" not in waiting
    return first, second


@pytest.fixture(params=["postgresql", "file"])
def lease_database(request, tmp_path):
    if request.param == "file":
        return f"sqlite:///{tmp_path / 'beat.sqlite3'}"
    return request.getfixturevalue("own_postgres_database")


def test_a_second_beat_waits_and_takes_over_when_the_first_is_killed(beats, lease_database, tmp_path):
    first, second = first_beat_then_a_waiting_one(beats, lease_database, tmp_path)
    first.process.send_signal(signal.SIGKILL)
    took_over = second.wait_for("beat lease held: this beat sends", timeout=5 * CHECK_SECONDS + 5)
    second.wait_for(SENDING, timeout=5)
    assert took_over < 5 * CHECK_SECONDS + 5


def test_on_postgresql_a_beat_whose_session_ends_pauses_and_one_beat_goes_on(beats, own_postgres_database,
                                                                             tmp_path):
    first, second = first_beat_then_a_waiting_one(beats, own_postgres_database, tmp_path)
    with psycopg.connect(own_postgres_database, autocommit=True) as admin:
        holders = admin.execute("SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted"
                                " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
                                ).fetchall()
        assert len(holders) == 1  # one beat holds the lease
        marks = len(first.seen), len(second.seen)
        admin.execute("SELECT pg_terminate_backend(%s)", [holders[0][0]])
    first.wait_for("beat lease lost", timeout=10)
    # Both compete on new sessions: exactly one wins and sends; the other sends nothing.
    after = [beat.drain(6 * CHECK_SECONDS + 2)[len("".join(beat.seen[:mark])):]
             for beat, mark in zip((first, second), marks, strict=True)]
    after_loss = [after[0].split("beat lease lost")[-1], after[1]]
    winners = [text for text in after_loss if "this beat sends" in text]
    assert len(winners) == 1, after_loss
    loser = after_loss[1 - after_loss.index(winners[0])]
    assert SENDING not in loser and SENDING in winners[0].split("this beat sends")[-1]
