"""`make run`: the simulated cluster, web, Celery worker and beat, side by side; Ctrl-C stops them all."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
HOST = os.environ.get("HOST", "127.0.0.1")
PORT = os.environ.get("PORT", "8000")
KUBESIM_PORT = os.environ.get("KUBESIM_PORT", "6443")

PROCESSES = {
    "kubesim": [PY, "-m", "studio.kubesim", "--host", "127.0.0.1", "--port", KUBESIM_PORT,
                "--run-seconds", os.environ.get("KUBESIM_RUN_SECONDS", "60"),
                "--pull-seconds", os.environ.get("KUBESIM_PULL_SECONDS", "4"),
                "--schedule-seconds", os.environ.get("KUBESIM_SCHEDULE_SECONDS", "3")],
    "web": [PY, "manage.py", "runserver", f"{HOST}:{PORT}", "--noreload"],
    "worker": [PY, "-m", "celery", "-A", "studio", "worker", "-l", "INFO", "--concurrency", "2"],
    "beat": [PY, "-m", "celery", "-A", "studio", "beat", "-l", "INFO",
             "--schedule", str(ROOT / "var" / "celerybeat-schedule")],
}


def main() -> int:
    env = {**os.environ, "KUBESIM_URL": f"http://127.0.0.1:{KUBESIM_PORT}", "PYTHONUNBUFFERED": "1"}
    env.setdefault("DEBUG", "true")
    # One /metrics for web, worker and beat: they write their counters to a shared folder, emptied per run.
    metrics_dir = ROOT / "var" / "prometheus"
    shutil.rmtree(metrics_dir, ignore_errors=True)
    metrics_dir.mkdir(parents=True)
    env.setdefault("PROMETHEUS_MULTIPROC_DIR", str(metrics_dir))
    env.setdefault("LOG_FORMAT", "console")
    # Sync often enough that a demo workload is seen in each phase on its way (the image pull takes seconds).
    env.setdefault("SYNC_INTERVAL_SECONDS", "1")
    children = {}
    for name, command in PROCESSES.items():
        children[name] = subprocess.Popen(command, cwd=ROOT, env=env)
        if name == "kubesim":
            time.sleep(1.0)  # let the cluster listen before the workers reach for it
    print(f"\nPaaS Studio: http://{HOST}:{PORT}/  (API docs: http://{HOST}:{PORT}/api/docs/)\n", flush=True)

    def stop(*_):
        for child in children.values():
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for child in children.values():
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()

    signal.signal(signal.SIGTERM, lambda *a: (stop(), sys.exit(0)))
    try:
        while all(child.poll() is None for child in children.values()):
            time.sleep(0.5)
        failed = [name for name, child in children.items() if child.poll() is not None]
        print(f"stopped: {', '.join(failed)} exited; stopping the rest", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        stop()


if __name__ == "__main__":
    sys.exit(main())
