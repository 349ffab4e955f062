"""The benchmark's environment: PostgreSQL and Redis on loopback, a fresh database, gunicorn, helpers."""

import contextlib
import os
import platform
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
BENCH_DB = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/studio_bench")
BENCH_REDIS = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/3")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def environment(**extra) -> dict:
    return {**os.environ, "DATABASE_URL": BENCH_DB, "REDIS_URL": BENCH_REDIS, "DEBUG": "false",
            "LOG_LEVEL": "WARNING", "DJANGO_SETTINGS_MODULE": "config.settings", "PYTHONUNBUFFERED": "1",
            "ALLOWED_HOSTS": "127.0.0.1,localhost", "DB_CONN_MAX_AGE": "60", **extra}


def recreate_database() -> None:
    import psycopg

    if "django" in sys.modules and sys.modules["django"].apps.apps.ready:
        from django.db import connections

        connections.close_all()  # the previous scenario's connection; DROP ... WITH (FORCE) would end it anyway

    name = BENCH_DB.rsplit("/", 1)[1]
    admin = BENCH_DB.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    subprocess.run([PY, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=environment(), check=True)
    import redis

    redis.Redis.from_url(BENCH_REDIS).flushdb()


def setup_django() -> None:
    os.environ.update(environment())
    import django

    django.setup()


@contextlib.contextmanager
def process(command: list[str], *, env: dict | None = None, wait_for_port: int | None = None, log: str = ""):
    """Run a server process for the duration of the block; it is always stopped."""
    handle = open(ROOT / "var" / f"bench-{log or 'proc'}.log", "w")
    proc = subprocess.Popen(command, cwd=ROOT, env=env or environment(), stdout=handle, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        if wait_for_port:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", wait_for_port), 0.5):
                    break
                if proc.poll() is not None:
                    raise RuntimeError(f"{command[0]} exited early; see var/bench-{log}.log")
                time.sleep(0.2)
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
        handle.close()


def gunicorn(port: int, workers: int = 2, threads: int = 8, urlconf: str = "config.urls"):
    return process([PY, "-m", "gunicorn", "config.wsgi:application", "-b", f"127.0.0.1:{port}", "-w", str(workers),
                    "-k", "gthread", "--threads", str(threads), "--log-level", "warning"],
                   env=environment(ROOT_URLCONF=urlconf), wait_for_port=port, log="gunicorn")


def machine() -> str:
    cpus = os.cpu_count()
    memory = ""
    with contextlib.suppress(OSError):
        kb = int(next(line for line in open("/proc/meminfo") if line.startswith("MemTotal")).split()[1])
        memory = f", {kb / 1048576:.0f} GiB memory"
    model = ""
    with contextlib.suppress(OSError, StopIteration):
        model = next(line for line in open("/proc/cpuinfo") if line.startswith("model name")).split(":", 1)[1].strip()
    return f"{platform.system()} {platform.machine()}, {cpus} CPUs ({model}){memory}, Python {platform.python_version()}"
