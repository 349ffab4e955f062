"""`make run`: the simulated cluster, web, Celery worker and beat, and the cluster watcher, side by side; Ctrl-C
stops them all.

Once the web server and the cluster answer, it prints one short banner (URLs and how to log in) as the last
thing a user sees: the periodic tasks' chatter is DEBUG-level (LOG_LEVEL=DEBUG shows it)."""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
HOST = os.environ.get("HOST", "127.0.0.1")
PORT = os.environ.get("PORT", "8000")
KUBESIM_PORT = os.environ.get("KUBESIM_PORT", "6443")
# kubectl sends its token only over TLS: the cluster also serves HTTPS there, with an admin kubeconfig for it.
KUBESIM_TLS_PORT = os.environ.get("KUBESIM_TLS_PORT", str(int(KUBESIM_PORT) + 1))
# Under STUDIO_VAR_DIR, as everything else `make run` keeps (config/settings.py's VAR_DIR).
KUBECONFIG = Path(os.environ.get("STUDIO_VAR_DIR") or ROOT / "var").resolve() / "kubesim" / "kubeconfig"
LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO")
QUIET = LOG_LEVEL.upper() != "DEBUG"


def kubesim_command(port: str, tls_port: str, kubeconfig: Path) -> list[str]:
    """The simulated cluster as `make run` starts it (the kubectl test starts this very command)."""
    return [PY, "-m", "kubesim", "--host", "127.0.0.1", "--port", port,
            "--run-seconds", os.environ.get("KUBESIM_RUN_SECONDS", "60"),
            "--pull-seconds", os.environ.get("KUBESIM_PULL_SECONDS", "4"),
            "--schedule-seconds", os.environ.get("KUBESIM_SCHEDULE_SECONDS", "3"),
            "--tls-port", tls_port, "--kubeconfig", str(kubeconfig), *(["--quiet"] * QUIET),
            # Node pools, node type and extended resource that the example bodies name (demo_setup
            # defines the same pools and gives the demo project a quota in each).
            "--nodes", "6", "--node-pools", os.environ.get("KUBESIM_NODE_POOLS", "my-node-pool-a=2,my-node-pool-b=2"),
            "--node-label", os.environ.get("KUBESIM_NODE_LABEL", "run.ai/type=my-node-type"),
            "--node-resource", os.environ.get("KUBESIM_NODE_RESOURCE", "hardware-vendor.example/foo=8"),
            # KAI Scheduler (queues per project, lending and reclaim): the product schedules through it.
            *(["--kai"] if os.environ.get("KUBESIM_KAI", "true").lower() in ("1", "true", "yes") else []),
            # A gang scheduler's PodGroup API (distributed trainings get a PodGroup where one is served).
            *(["--gang", os.environ["KUBESIM_GANG"]] if os.environ.get("KUBESIM_GANG") else []),
            # What `studio workspace port-forward NAME --port 8888:8888` reaches in every pod: a local port
            # (KUBESIM_PORT_FORWARD="8888=127.0.0.1:8888,…"; none by default).
            *[arg for rule in os.environ.get("KUBESIM_PORT_FORWARD", "").split(",") if rule.strip()
              for arg in ("--port-forward", rule.strip())]]


PROCESSES = {
    "kubesim": kubesim_command(KUBESIM_PORT, KUBESIM_TLS_PORT, KUBECONFIG),
    # The ASGI application (config/asgi.py): Django for HTTP, and the WebSocket sessions of exec, attach and
    # port-forward, which runserver cannot serve. No access log: the product logs its requests (studio.request),
    # redacted, and a path may carry a token (Kit client URLs).
    "web": [PY, "-m", "uvicorn", "config.asgi:application", "--host", HOST, "--port", PORT, "--lifespan", "off",
            "--ws", "websockets-sansio", "--no-access-log", "--log-level", "warning"],
    "worker": [PY, "-m", "celery", "-A", "config", *(["--quiet"] * QUIET), "worker", "-l", LOG_LEVEL,
               "--concurrency", "2"],
    "beat": [PY, "-m", "celery", "-A", "config", *(["--quiet"] * QUIET), "beat", "-l", LOG_LEVEL,
             "--schedule", str(ROOT / "var" / "celerybeat-schedule")],
    # Follows the cluster by watch: each phase change reaches the portal as it happens (workloads/cluster/watcher.py).
    "watcher": [PY, "manage.py", "cluster_watch"],
}


def wait_until_up(url: str, children: dict, timeout: float = 90.0) -> bool:
    """True once `url` answers; False if a child died or the time ran out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(child.poll() is not None for child in children.values()):
            return False
        try:
            with urllib.request.urlopen(url, timeout=2):
                return True
        except OSError:
            time.sleep(0.3)
    return False


def _shown(path: Path) -> str:
    """A path as the user types it from the checkout: relative inside it, absolute elsewhere."""
    return str(path.relative_to(ROOT.resolve())) if path.is_relative_to(ROOT.resolve()) else str(path)


def banner(env: dict) -> str:
    login = subprocess.run([PY, "manage.py", "demo_login"], cwd=ROOT, env=env, capture_output=True, text=True,
                           check=False).stdout.strip() or "see `manage.py demo_login`"
    base = f"http://{HOST}:{PORT}"
    lines = ["PaaS Studio is up (Ctrl-C stops it)",
             f"  Portal    {base}/",
             f"  API docs  {base}/api/docs/",
             f"  Log in    {login}",
             f"  Cluster   simulated, http://127.0.0.1:{KUBESIM_PORT} (project demo)",
             f"  kubectl   KUBECONFIG={_shown(KUBECONFIG)} kubectl get pods -A"]
    rule = "-" * max(len(line) for line in lines)
    return "\n".join(["", rule, *lines, rule, ""])


def port_taken(host: str, port: str) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex((host, int(port))) == 0


def main() -> int:
    for what, host, port, variable in (("the web server", HOST, PORT, "PORT"),
                                       ("the simulated cluster", "127.0.0.1", KUBESIM_PORT, "KUBESIM_PORT")):
        if port_taken(host, port):
            print(f"Port {port} on {host}, for {what}, is in use (another make run?). Stop that, or choose another "
                  f"port: {variable}=<port> make run", file=sys.stderr)
            return 1
    env = {**os.environ, "KUBESIM_URL": f"http://127.0.0.1:{KUBESIM_PORT}", "PYTHONUNBUFFERED": "1"}
    env.setdefault("DEBUG", "true")
    # One /metrics for web, worker and beat: they write their counters to a shared folder, emptied per run.
    metrics_dir = ROOT / "var" / "prometheus"
    shutil.rmtree(metrics_dir, ignore_errors=True)
    metrics_dir.mkdir(parents=True)
    env.setdefault("PROMETHEUS_MULTIPROC_DIR", str(metrics_dir))
    env.setdefault("LOG_FORMAT", "console")
    # "running as root" is the reader's choice; static files answered through the ASGI handler are read in a
    # thread (whitenoise's iterators are synchronous), which Django warns about on each one.
    env.setdefault("PYTHONWARNINGS", "ignore:::celery.platforms,ignore:StreamingHttpResponse must consume")
    # NVIDIA's web-viewer-sample under `npm run dev` (Vite) may call the Kit APIs from its own origin.
    env.setdefault("CORS_ALLOWED_ORIGINS", "http://localhost:5173,http://127.0.0.1:5173")
    children = {}
    for name, command in PROCESSES.items():
        children[name] = subprocess.Popen(command, cwd=ROOT, env=env)
        if name == "kubesim":  # let the cluster listen before the workers reach for it
            wait_until_up(f"http://127.0.0.1:{KUBESIM_PORT}/healthz", children, timeout=30)

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
        if wait_until_up(f"http://{HOST}:{PORT}/healthz", children):
            time.sleep(1.0)  # the worker and beat print their start-up lines; the banner comes after them
            print(banner(env), flush=True)
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
