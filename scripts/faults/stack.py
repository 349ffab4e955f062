"""The whole system on loopback, for one fault script: a scratch PostgreSQL database (on the shared server, or
on a private cluster the script may restart), a private Redis the script may stop, the simulated cluster,
gunicorn, a Celery worker (2 processes), beat and the cluster watcher. Every process runs in its own process group, so that a
fault can kill -9 all of it and cleanup leaves nothing behind. Logs go to files under a temporary folder,
named in the summary when something fails."""

import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psycopg
import requests
from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
SIM_TOKEN = "kubesim-token"
SHARED_POSTGRES = "postgres://postgres@127.0.0.1:5432"
ADMIN = ("faults-admin", "faults-password-1")
# Short watcher ticks and a short repair grace, so that each fault is repaired within the run. (A cluster that
# does not answer makes its writes wait for it rather than retry: no backoff to shorten.)
ENV = {
    "SYNC_INTERVAL_SECONDS": "2",
    "SYNC_RESYNC_SECONDS": "60",
    "SYNC_REPAIR_GRACE_SECONDS": "5",
    "METRICS_INTERVAL_SECONDS": "600",
    "CELERY_VISIBILITY_TIMEOUT": "30",
    "KUBE_REQUEST_TIMEOUT_SECONDS": "5",
    "LOG_FORMAT": "console",
    "PYTHONUNBUFFERED": "1",
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "CLUSTER_ALLOWED_NETWORKS": "127.0.0.0/8",  # the cluster (kubesim or the real server) is on loopback
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(predicate, *, timeout: float, what: str, interval: float = 0.25):
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = predicate()
        except (OSError, requests.RequestException, psycopg.Error):
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


class PrivatePostgres:
    """A PostgreSQL cluster of this script alone (initdb as the postgres user), which it may stop and start."""

    def __init__(self, folder: Path):
        self.data = folder / "pgdata"
        self.port = free_port()
        self.bin = Path(sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1])
        self.url = f"postgres://postgres@127.0.0.1:{self.port}"

    def _as_postgres(self, *command: str) -> None:
        subprocess.run(["runuser", "-u", "postgres", "--", *command], check=True, capture_output=True, cwd="/tmp")

    def init(self) -> None:
        self.data.mkdir(parents=True)
        for folder in (self.data, self.data.parent):  # the server runs as postgres and logs beside its data
            shutil.chown(folder, "postgres", "postgres")
        self._as_postgres(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust")
        self.start()

    def start(self) -> None:
        options = f"-p {self.port} -k /tmp -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        self._as_postgres(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options,
                          "-l", str(self.data.parent / "postgres.log"), "-w", "start")

    def stop(self) -> None:
        self._as_postgres(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")

    def destroy(self) -> None:
        try:
            self.stop()
        except subprocess.CalledProcessError:
            pass  # already stopped


class Stack:
    """`real_apiserver`: the cluster is a real kube-apiserver + controller manager + etcd (scripts/realkube.py),
    its nodes kubesim's node side over HTTP (`python -m kubesim.node.remote`), instead of kubesim."""

    def __init__(self, name: str, *, private_postgres: bool = False, real_apiserver: bool = False):
        self.name = name
        self.real = None
        self.real_apiserver = real_apiserver
        # The phase a load workload must settle in: Running (each runs for an hour on a cluster with room for
        # all), on the real server too since kubesim's node side retries a write the server did not take.
        self.settled_phases = {"Running"}
        self.folder = Path(tempfile.mkdtemp(prefix=f"faults-{name}-"))
        self.postgres = PrivatePostgres(self.folder) if private_postgres else None
        self.database = f"faults_{name.replace('-', '_')}"
        self.server = self.postgres.url if self.postgres else SHARED_POSTGRES
        self.redis_port, self.sim_port, self.web_port = free_port(), free_port(), free_port()
        self.url = f"http://127.0.0.1:{self.web_port}"
        self.sim_url = f"http://127.0.0.1:{self.sim_port}"
        self.processes: dict[str, subprocess.Popen] = {}
        self.keep_logs = bool(os.environ.get("FAULTS_KEEP_LOGS"))  # a failed run keeps its folder, logs and all
        self.worker_starts = 0
        self.worker_restarts = 0  # by the supervisor (supervise_worker)
        self._closing = threading.Event()
        self._supervisor: threading.Thread | None = None
        # Keys of this run alone: the servers refuse to start without them (studio/keys.py).
        keys = {"SECRET_KEY": secrets.token_urlsafe(50), "FIELD_ENCRYPTION_KEY": Fernet.generate_key().decode()}
        self.env = {**os.environ, **ENV, **keys, "STUDIO_VAR_DIR": str(self.folder / "var"),
                    "DATABASE_URL": f"{self.server}/{self.database}",
                    "REDIS_URL": f"redis://127.0.0.1:{self.redis_port}/0"}
        self.session = requests.Session()

    # --- processes ---------------------------------------------------------------------------------------

    def spawn(self, name: str, command: list[str]) -> subprocess.Popen:
        log = open(self.folder / f"{name}.log", "ab")
        process = subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        self.processes[name] = process
        return process

    def kill(self, name: str) -> None:
        """SIGKILL to the process group: the main process and every child, mid-task."""
        process = self.processes.pop(name, None)
        if process is not None and process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)

    def stop(self, name: str) -> None:
        process = self.processes.pop(name, None)
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)

    def start_redis(self) -> None:
        self.spawn("redis", ["redis-server", "--bind", "127.0.0.1", "--port", str(self.redis_port), "--save", "",
                             "--appendonly", "no"])
        wait_until(lambda: subprocess.run(["redis-cli", "-p", str(self.redis_port), "ping"], capture_output=True,
                                          text=True).stdout.strip() == "PONG", timeout=20, what="redis")

    def stop_redis(self) -> None:
        """`SHUTDOWN NOSAVE`: the broker goes away with every message it held."""
        subprocess.run(["redis-cli", "-p", str(self.redis_port), "shutdown", "nosave"], capture_output=True)
        self.processes.pop("redis").wait(timeout=15)

    def start_worker(self) -> None:
        self.spawn("worker", [PY, "-m", "celery", "-A", "config", "worker", "-P", "prefork", "-c", "2", "-l", "INFO",
                              "--without-gossip", "--without-mingle", "--without-heartbeat"])
        log = self.folder / "worker.log"  # appended to by every start: count its " ready." lines
        wait_until(lambda: log.read_text().count(" ready.") > self.worker_starts, timeout=60, what="the worker")
        self.worker_starts += 1

    def start_watcher(self, name: str = "watcher") -> None:
        """`manage.py cluster_watch` (its log: `<name>.log`); it follows the cluster once it holds the lease."""
        self.spawn(name, [PY, "manage.py", "cluster_watch"])

    def watcher_log(self, name: str = "watcher") -> str:
        path = self.folder / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def relists(self) -> int:
        """Watches the watchers listed again, from their logs: resumed into a 410 (history compacted meanwhile),
        or started again at once when the cluster answered again after an outage."""
        logs = [p.read_text(errors="replace") for p in self.folder.glob("watcher*.log")]
        again = re.compile(r"its (\d+) failing watches list again now")
        return sum(log.count("too old (410), listing again") + sum(int(n) for n in again.findall(log))
                   for log in logs)

    def compact_cluster(self) -> None:
        """The cluster's history forgotten up to now (etcd's compaction): older watch versions answer 410."""
        if self.real:
            self.real.compact()
        else:
            requests.post(self.sim_url + "/_sim/compact", json={}, headers=self.sim_headers,
                          timeout=10).raise_for_status()

    def supervise_worker(self) -> None:
        """From now on, start the worker again whenever it exits, as its supervisor would (systemd's
        Restart=always, a Deployment's pod). Celery's worker can stop with "Unrecoverable error" when its broker
        vanishes mid-reconnect (a kombu/celery race), and its shutdown may take a while: a broker outage is
        survived by the supervisor, whenever the worker exits, not by the worker alone. A worker taken away on
        purpose (`kill`, `stop`) leaves the process table first, so it is not started again."""
        def loop():
            while not self._closing.wait(0.5):
                process = self.processes.get("worker")
                if process is not None and process.poll() is not None and not self._closing.is_set():
                    self.processes.pop("worker", None)
                    self.worker_restarts += 1
                    print(f"{self.name}: the worker exited (code {process.returncode}); its supervisor starts it "
                          "again", flush=True)
                    try:
                        self.start_worker()
                    except TimeoutError as error:  # not ready yet (the broker still away): watched on the next turn
                        print(f"{self.name}: {error}", flush=True)

        self._supervisor = threading.Thread(target=loop, name="worker-supervisor", daemon=True)
        self._supervisor.start()

    def start(self) -> "Stack":
        print(f"{self.name}: logs in {self.folder}", flush=True)
        if self.postgres:
            self.postgres.init()
        self._create_database()
        subprocess.run([PY, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=self.env, check=True)
        self.start_redis()
        if self.real_apiserver:
            from scripts.realkube import RealKube

            self.real = RealKube(workdir=self.folder / "kube").start()
            self.spawn("nodes", [PY, "-m", "kubesim.node.remote", "--server", self.real.url, "--token",
                                 self.real.token, "--ca-file", self.real.ca_file, "--nodes", "8",
                                 "--run-seconds", "3600", "--pull-seconds", "0.2"])
        else:
            self.spawn("kubesim", [PY, "-m", "kubesim", "--port", str(self.sim_port), "--quiet",
                                   "--run-seconds", "3600", "--pull-seconds", "0.2", "--nodes", "8"])
        self.spawn("web", [PY, "-m", "gunicorn", "config.wsgi:application", "-b", f"127.0.0.1:{self.web_port}",
                           "-w", "3", "--timeout", "60", "--graceful-timeout", "5"])
        self.spawn("beat", [PY, "-m", "celery", "-A", "config", "beat", "-l", "WARNING",
                            "-s", str(self.folder / "beat-schedule")])
        self.start_watcher()
        self.start_worker()
        wait_until(lambda: self.session.get(self.url + "/healthz", timeout=2).ok, timeout=60, what="the web")
        wait_until(lambda: self.cluster_get("/version").ok, timeout=30, what="the cluster")
        return self

    def __enter__(self) -> "Stack":
        # SIGTERM (a CI timeout, `kill`) unwinds through __exit__ too, so that nothing is left running.
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, exc_type, *_) -> None:
        self.keep_logs = self.keep_logs or exc_type is not None
        self.close()

    def close(self) -> None:
        self._closing.set()
        if self._supervisor is not None:
            self._supervisor.join(timeout=70)  # it may be waiting for a worker it started to be ready
        for name in list(self.processes):
            self.stop(name)
        if self.real:
            self.real.stop()
        try:
            with psycopg.connect(f"{self.server}/postgres", autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
        except psycopg.Error:
            pass  # a private cluster may already be gone
        if self.postgres:
            self.postgres.destroy()
        if self.keep_logs:
            print(f"{self.name}: logs kept in {self.folder}", flush=True)
        else:
            shutil.rmtree(self.folder, ignore_errors=True)

    def _create_database(self) -> None:
        with psycopg.connect(f"{self.server}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{self.database}"')

    # --- the organisation the load runs in -----------------------------------------------------------------

    @property
    def sim_headers(self) -> dict:
        return {"Authorization": f"Bearer {SIM_TOKEN}"}

    def cluster_get(self, path: str, **params) -> requests.Response:
        """GET on the cluster's API as its admin (kubesim or the real API server)."""
        if self.real:
            return requests.get(self.real.url + path, params=params, timeout=30,
                                headers={"Authorization": f"Bearer {self.real.token}"}, verify=self.real.ca_file)
        return requests.get(self.sim_url + path, params=params, headers=self.sim_headers, timeout=30)

    def bootstrap(self) -> dict:
        """A platform admin, the simulated cluster, a department and a project with room for every workload;
        the admin's bearer header and the project's id and namespace."""
        create = ("from django.contrib.auth import get_user_model; "
                  f"get_user_model().objects.create_superuser({ADMIN[0]!r}, 'faults@example.com', {ADMIN[1]!r})")
        subprocess.run([PY, "manage.py", "shell", "-v", "0", "-c", create], cwd=ROOT, env=self.env, check=True)
        token = self.post("/api/v1/token", {"grantType": "password", "username": ADMIN[0], "password": ADMIN[1]},
                          headers={})["accessToken"]
        self.session.headers["Authorization"] = f"Bearer {token}"
        if self.real:
            cluster = self.post("/api/v1/clusters", {"name": "real", "apiServerUrl": self.real.url,
                                                     "token": self.real.token, "caCert": self.real.ca_pem,
                                                     "verifyTls": True})
        else:
            cluster = self.post("/api/v1/clusters", {"name": "sim", "apiServerUrl": self.sim_url, "token": SIM_TOKEN,
                                                     "verifyTls": False})
        department = self.post("/api/v1/org-unit/departments", {"name": "faults"})
        project = self.post("/api/v1/org-unit/projects", {
            "name": "load", "departmentId": department["id"], "clusterId": cluster["clusterId"],
            "resources": {"gpu": {"deserved": 1000, "limit": 1000}}})
        return {"headers": dict(self.session.headers), "projectId": project["id"], "clusterId": cluster["clusterId"],
                "namespace": project["namespace"]}

    def post(self, path: str, body: dict, **kwargs) -> dict:
        response = self.session.post(self.url + path, json=body, timeout=30, **kwargs)
        if not response.ok:
            raise RuntimeError(f"POST {path}: {response.status_code} {response.text[:500]}")
        return response.json()

    def set_sim_faults(self, **faults) -> None:
        requests.post(self.sim_url + "/_sim/faults", json=faults, headers=self.sim_headers,
                      timeout=10).raise_for_status()
