"""Support for the cluster-path tests: a real Celery worker process on the test database and broker, waits
that poll with a deadline, and small request bodies."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from django.conf import settings
from django.db import connection
from django.utils import timezone

ROOT = Path(__file__).resolve().parents[2]
WORKER_LOG = Path(settings.VAR_DIR) / "test-worker.log"
# Short backoffs and a short Redis visibility timeout, so that retries and redeliveries fit in a test.
WORKER_ENV = {
    "KUBE_RETRY_BACKOFF": "1",
    "KUBE_RETRY_BACKOFF_MAX": "1",
    "KUBE_MAX_RETRIES": "60",
    "CELERY_VISIBILITY_TIMEOUT": "5",
    "LOG_FORMAT": "console",
    "PYTHONUNBUFFERED": "1",
}


def database_url() -> str:
    """The URL of the database pytest-django made, for processes started by the tests."""
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def wait_for(predicate, *, timeout: float = 30.0, interval: float = 0.2, step=None, what: str = "condition"):
    """Poll `predicate` (after `step`, e.g. a sync round) until it returns something truthy; fail at the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        if step is not None:
            step()
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}; last value: {value!r}")
        time.sleep(interval)


class Worker:
    """`celery -A config worker -P prefork -c 2` in its own process group, started and killed on demand."""

    def __init__(self):
        self.process: subprocess.Popen | None = None
        self.ready = threading.Event()
        self.lines: list[str] = []

    def start(self, *, purge: bool = True, timeout: float = 60.0) -> None:
        """Start the worker; `purge` drops queued messages first (those of earlier tests, for rows now gone)."""
        from config.celery import app

        if purge:
            app.control.purge()
        env = {**os.environ, **WORKER_ENV, "DATABASE_URL": database_url()}
        self.ready.clear()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "-P", "prefork", "-c", "2", "-l", "INFO",
             "--without-gossip", "--without-mingle", "--without-heartbeat"],
            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
        )
        threading.Thread(target=self._pump, args=(self.process,), daemon=True).start()
        if not self.ready.wait(timeout):
            self.stop()
            raise AssertionError(f"the Celery worker did not become ready; see {WORKER_LOG}")

    def _pump(self, process: subprocess.Popen) -> None:
        with open(WORKER_LOG, "a") as log:
            for line in process.stdout:
                log.write(line)
                log.flush()
                self.lines.append(line)
                if " ready." in line:
                    self.ready.set()

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL to the whole process group: the main process and its pool children, mid-task."""
        if self.alive():
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        """A warm shutdown: the main process lets its pool finish, then exits."""
        if self.alive():
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()


def training_body(project, name: str, **spec) -> dict:
    """A small training (no GPUs, a public image) for `project`; spec fields override."""
    return {
        "name": name,
        "projectId": project.id,
        "clusterId": str(project.cluster_id),
        "spec": {"image": "python:3.11", "command": "python", "args": "-c 'print(1)'", **spec},
    }


def run_seconds(seconds: int) -> list[dict]:
    """Spec annotations that make kubesim run a Job's pods for `seconds` instead of its default."""
    return [{"name": "kubesim.paas-studio/run-seconds", "value": str(seconds)}]


def make_workload(project, name: str, *, kind: str = "training", desired: str = "Running", **spec):
    """A workload row with a validated spec, written directly: no task is enqueued, so the test alone decides
    when it is pushed (in-process) and a running worker cannot race it."""
    from workloads.models import Workload
    from workloads.specs import gpu_request_of, validate_spec

    spec = validate_spec(kind, {"image": "python:3.11", **spec})
    return Workload.objects.create(
        kind=kind, name=name, requested_name=name, project=project, department=project.department,
        cluster=project.cluster, created_by_name="tests", spec=spec, gpu_request=gpu_request_of(spec),
        desired_phase=desired, deleted_at=timezone.now() if desired == "Deleted" else None,
    )


WATCHER_LOG = Path(settings.VAR_DIR) / "test-watcher.log"
# Ticks, repairs and failed rounds within a test's time.
WATCHER_ENV = {"SYNC_INTERVAL_SECONDS": "0.5", "SYNC_REPAIR_GRACE_SECONDS": "3", "SYNC_BATCH_SECONDS": "0.1",
               "KUBE_REQUEST_TIMEOUT_SECONDS": "3", "LOG_FORMAT": "console", "LOG_LEVEL": "INFO",
               "PYTHONUNBUFFERED": "1"}


class Watcher:
    """`manage.py cluster_watch` in its own process group on the test database, started and killed on demand;
    its log lines are kept (`lines`) and appended to WATCHER_LOG."""

    def __init__(self, **env):
        self.env = {**WATCHER_ENV, **{k: str(v) for k, v in env.items()}}
        self.process: subprocess.Popen | None = None
        self.lines: list[str] = []

    def start(self) -> "Watcher":
        env = {**os.environ, **self.env, "DATABASE_URL": database_url()}
        self.process = subprocess.Popen([sys.executable, "manage.py", "cluster_watch"], cwd=ROOT, env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        start_new_session=True)
        threading.Thread(target=self._pump, args=(self.process,), daemon=True).start()
        return self

    def _pump(self, process: subprocess.Popen) -> None:
        with open(WATCHER_LOG, "a") as log:
            for line in process.stdout:
                log.write(line)
                log.flush()
                self.lines.append(line)

    def said(self, text: str) -> int:
        return sum(1 for line in list(self.lines) if text in line)

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL to the whole process group: no release, no goodbye."""
        if self.alive():
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.alive():
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
