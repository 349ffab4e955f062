"""PaaS Studio beside raw Kubernetes, on the real cluster of `make e2e-real` (scripts/kube_stack.py: kube-apiserver,
etcd, the controller manager, KAI Scheduler, KWOK's GPU nodes): `--count` one-GPU trainings submitted by 16
clients, and the time until the scheduler has bound every pod.

- PaaS Studio: `POST /api/v1/workloads/trainings` to gunicorn, with a Celery worker (2 processes) pushing the Jobs
  and the cluster watcher following the cluster, as a deployment runs them.
- The floor: the same Jobs (built by the product's pure manifest functions: labels, KAI queue, priority class,
  namespace) created by 16 clients straight through the Kubernetes API.

Each side gets a fresh cluster of its own (the same size: `--count` GPUs and a few nodes spare), so that neither
schedules beside the other's pods. A pod is bound when it has `spec.nodeName` (or PodScheduled True): a watch on
pods in a process of its own takes the time each arrives; a workload's submit is the moment its request was sent.

    python -m bench.versus_kube --count 1000     # make bench-real COUNT=1000
"""

import argparse
import http.client
import json
import math
import multiprocessing
import os
import signal
import ssl
import statistics
import sys
import threading
import time
import urllib.parse
import uuid

import requests

from bench import api_requests, cpu_share, env

CLIENTS = 16
MANAGED = "app.kubernetes.io/managed-by=paas-studio"
WORKLOAD_ID = "paas-studio/workload-id"
PROJECT, DEPARTMENT = "versus", "versus"
SPEC = {"image": "python:3.11", "command": "python", "args": "-c pass", "compute": {"gpuDevicesRequest": 1}}
# Its own database and Redis database: `make bench` (studio_bench, Redis 3) may run beside it on a shared machine.
env.BENCH_DB = os.environ.get("BENCH_REAL_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/studio_bench_real")
env.BENCH_REDIS = os.environ.get("BENCH_REAL_REDIS_URL", "redis://127.0.0.1:6379/7")


# --- the pod watch, in a process of its own ------------------------------------------------------------------

def _watch_bound(url: str, token: str, ca_file: str, count: int, conn) -> None:
    """Watch the Jobs and pods of managed workloads until `count` workloads have a bound pod (or the parent says
    stop); send ({workload id: time.monotonic() when its first bound pod arrived}, {the same for its Job})."""
    stop = threading.Event()
    bound: dict[str, float] = {}
    created: dict[str, float] = {}
    ready = [threading.Event(), threading.Event()]

    def follow(path: str, found: dict, keep, ready: threading.Event):
        session = requests.Session()
        session.trust_env = False  # REQUESTS_CA_BUNDLE would replace the cluster's CA
        session.headers["Authorization"] = f"Bearer {token}"
        session.verify = ca_file

        def listed() -> str:
            """Every object now (those not seen yet taken as arriving now); the version to watch from."""
            after = ""
            while True:
                page = session.get(url + path, params={"labelSelector": MANAGED, "limit": 500, "continue": after},
                                   timeout=60)
                page.raise_for_status()
                answer, arrived = page.json(), time.monotonic()
                for obj in answer["items"]:
                    workload = (obj["metadata"].get("labels") or {}).get(WORKLOAD_ID)
                    if workload and workload not in found and keep(obj):
                        found[workload] = arrived
                after = answer["metadata"].get("continue") or ""
                if not after:
                    return answer["metadata"]["resourceVersion"]

        def watched(params: dict, version: str) -> str:
            with session.get(url + path, params=params, stream=True, timeout=60) as response:
                response.raise_for_status()
                for line in response.iter_lines(chunk_size=None):
                    arrived = time.monotonic()
                    if not line:
                        continue
                    event = json.loads(line)
                    obj = event["object"]
                    if event["type"] == "ERROR":
                        raise ValueError(obj.get("message") or "the watch ended with an error")
                    version = obj["metadata"].get("resourceVersion", version)
                    workload = (obj["metadata"].get("labels") or {}).get(WORKLOAD_ID)
                    if event["type"] in ("ADDED", "MODIFIED") and workload and workload not in found and keep(obj):
                        found[workload] = arrived
                        if len(bound) >= count:
                            stop.set()
                    if stop.is_set():
                        break
            return version

        version = listed()
        ready.set()
        while len(bound) < count and not stop.is_set():
            params = {"labelSelector": MANAGED, "watch": "1", "resourceVersion": version,
                      "allowWatchBookmarks": "true", "timeoutSeconds": "30"}
            try:
                version = watched(params, version)
            except (requests.RequestException, ValueError):  # a watch cut or refused (410): what it missed, listed
                time.sleep(0.5)
                version = listed()
            if len(bound) >= count:
                stop.set()

    threads = [threading.Thread(target=follow, args=("/api/v1/pods", bound, _is_bound, ready[0]), daemon=True),
               threading.Thread(target=follow, args=("/apis/batch/v1/jobs", created, bool, ready[1]), daemon=True)]
    for thread in threads:
        thread.start()
    for event in ready:
        event.wait(60)
    conn.send("watching")
    threading.Thread(target=lambda: (conn.poll(None), stop.set()), daemon=True).start()
    threads[0].join()
    stop.set()
    conn.send((bound, created, time.process_time()))


def _is_bound(pod: dict) -> bool:
    if (pod.get("spec") or {}).get("nodeName"):
        return True
    return any(c.get("type") == "PodScheduled" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or ())


class BoundWatch:
    def __init__(self, stack, count: int):
        self.cpu_seconds = 0.0  # the watch's own, once it ended
        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_watch_bound, args=(stack.url, stack.token, stack.ca_file, count,
                                                                  child), daemon=True)
        self.process.start()
        if not self.conn.poll(60) or self.conn.recv() != "watching":
            raise RuntimeError("the pod watch did not start")

    def result(self, timeout: float) -> tuple[dict[str, float], dict[str, float]]:
        """The times pods were bound and Jobs created, once every pod is bound or when `timeout` ran out."""
        if not self.conn.poll(timeout):
            self.conn.send("stop")
            self.conn.poll(90)
        bound, created, self.cpu_seconds = self.conn.recv()
        self.process.join(10)
        return bound, created


# --- the clients ---------------------------------------------------------------------------------------------

class Poster:
    """One client's connection to a server, kept open between its requests: POST a JSON body, read the answer.
    http.client rather than requests, on both sides: the clients share the two cores with what they measure, and
    requests spent ~4 ms of CPU a request there (its headers, hooks and adapters: cProfile of the client threads at
    1,000, docs/benchmarks.md, stop 54)."""

    def __init__(self, base: str, *, ca_file: str | None = None, headers: dict | None = None):
        parts = urllib.parse.urlsplit(base)
        self.host, self.port, self.https = parts.hostname, parts.port, parts.scheme == "https"
        self.context = ssl.create_default_context(cafile=ca_file) if self.https else None
        self.headers = {"Content-Type": "application/json", "Accept": "application/json", **(headers or {})}
        self.conn: http.client.HTTPConnection | None = None

    def post(self, path: str, body: dict) -> tuple[int, bytes]:
        """(status, body). A connection the server closed while idle is opened again once; a request that then
        fails as well is an error of the run (a second send of a submission would answer 409: counted too)."""
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = (http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=120)
                             if self.https else http.client.HTTPConnection(self.host, self.port, timeout=120))
            try:
                self.conn.request("POST", path, body=json.dumps(body), headers=self.headers)
                answer = self.conn.getresponse()
                return answer.status, answer.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self._drop()
                if attempt == 2:
                    raise
            except Exception:
                self._drop()  # a timeout or a refused connection: the next request opens another
                raise
        raise AssertionError("unreachable")

    def _drop(self) -> None:
        if self.conn is not None:
            self.conn.close()
        self.conn = None


def clients(count: int, submit, poster) -> tuple[dict[str, float], list[str], float, float]:
    """`count` submissions by CLIENTS threads, each with a connection of its own (`poster()`, a `Poster`):
    `submit(poster, index)` sends one and answers the workload's id. ({id: when its request was sent}, errors,
    first send, last answer)."""
    sent: dict[str, float] = {}
    errors: list[str] = []
    lock = threading.Lock()
    next_index = [0]

    def client():
        session = poster()
        while True:
            with lock:
                index = next_index[0]
                next_index[0] += 1
            if index >= count:
                return
            started = time.monotonic()
            try:
                workload = submit(session, index)
            except Exception as exc:  # noqa: BLE001 — counted and shown: the run is then not comparable
                with lock:
                    errors.append(str(exc)[:300])
                continue
            with lock:
                sent[workload] = started

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    first = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sent, errors, first, time.monotonic()


def figures(sent: dict, watched: tuple[dict, dict], errors: list, first: float, answered: float,
            load_before: float) -> dict:
    bound, created = watched
    latencies = sorted(bound[w] - sent[w] for w in sent if w in bound)
    to_job = sorted(created[w] - sent[w] for w in sent if w in created)
    job_to_bound = sorted(bound[w] - created[w] for w in created if w in bound)
    last = max(bound.values(), default=float("nan"))
    total = last - first

    def pct(p, values=latencies):
        return values[min(len(values) - 1, math.ceil(p / 100 * len(values)) - 1)] if values else math.nan

    return {"load": (load_before, os.getloadavg()[0]), "submitted": len(sent), "errors": len(errors), "error_examples": errors[:3], "bound": len(bound),
            "submit_seconds": answered - first, "all_bound_seconds": total,
            "throughput": len(bound) / total if total > 0 else math.nan,
            "p50": pct(50), "p90": pct(90), "p99": pct(99), "max": latencies[-1] if latencies else math.nan,
            "mean": statistics.fmean(latencies) if latencies else math.nan,
            "job_p50": pct(50, to_job), "job_p99": pct(99, to_job),
            "job_bound_p50": pct(50, job_to_bound), "job_bound_p99": pct(99, job_to_bound)}


# --- the cluster ---------------------------------------------------------------------------------------------

def start_cluster(count: int, gpus_per_node: int):
    from scripts.kube_stack import Stack

    nodes = math.ceil(count / gpus_per_node) + 2
    started = time.monotonic()
    # Pods run for an hour: every bound pod keeps its GPU for the whole run.
    stack = Stack(gpu_nodes=nodes, gpus_per_node=gpus_per_node, training_operator=False, job_run_ms=3_600_000)
    try:
        stack.start()
    except BaseException:
        stack.stop()
        raise
    print(f"  cluster: {nodes} KWOK nodes x {gpus_per_node} GPUs, up in {time.monotonic() - started:.0f}s",
          flush=True)
    return stack


def _admin_session(stack) -> requests.Session:
    session = requests.Session()
    session.trust_env = False  # REQUESTS_CA_BUNDLE would replace the cluster's CA
    session.headers.update({"Authorization": f"Bearer {stack.token}", "Content-Type": "application/json"})
    session.verify = stack.ca_file
    return session


def _wait(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = predicate()
        except (OSError, requests.RequestException, ValueError, KeyError):
            value = None
        if value:
            return value
        time.sleep(0.5)
    raise TimeoutError(f"no {what} after {timeout:.0f}s")


# --- the two sides -------------------------------------------------------------------------------------------

def _watcher_command() -> list[str]:
    """`manage.py cluster_watch`; under cProfile when BENCH_REAL_PROFILE names where its profile goes."""
    profile = os.environ.get("BENCH_REAL_PROFILE")
    return [env.PY, "-m", "bench.profile_watcher", profile] if profile else [env.PY, "manage.py", "cluster_watch"]


def paas_side(count: int, gpus_per_node: int, timeout: float) -> tuple[dict, dict]:
    """PaaS Studio's figures, and what the floor copies: the namespace's labels and one Job as it made it."""
    env.recreate_database()
    env.setup_django()
    from django.contrib.auth import get_user_model

    from bench import seed

    stack = start_cluster(count, gpus_per_node)
    try:
        user = get_user_model().objects.create_superuser("bench", "bench@example.com", "bench-password-1")
        web_port = env.free_port()
        web = f"http://127.0.0.1:{web_port}"
        headers = {"Authorization": f"Bearer {seed.token(user)}", "Content-Type": "application/json"}
        environment = env.environment(LOG_LEVEL=os.environ.get("BENCH_LOG_LEVEL", "WARNING"))
        with env.gunicorn(web_port), \
             env.process([env.PY, "-m", "celery", "-A", "config", "worker", "-c", "2", "-l", os.environ.get("BENCH_LOG_LEVEL", "WARNING"),
                          "--without-gossip", "--without-mingle", "--without-heartbeat"], env=environment,
                         log="real-worker"), \
             env.process(_watcher_command(), env=environment, log="real-watcher"):
            api = requests.Session()
            api.headers.update(headers)

            def post(path, body):
                answer = api.post(web + path, json=body, timeout=60)
                if not answer.ok:
                    raise RuntimeError(f"POST {path}: {answer.status_code} {answer.text[:300]}")
                return answer.json()

            from scripts.realkube import kubeconfig_text

            cluster = post("/api/v1/clusters", {"name": "real", "gpuScheduler": "auto", "kubeconfig": kubeconfig_text(
                server=stack.url, ca_pem=stack.ca_pem, token=stack.token)})["clusterId"]
            department = post("/api/v1/org-unit/departments", {"name": DEPARTMENT})["id"]
            project = post("/api/v1/org-unit/projects", {
                "name": PROJECT, "departmentId": department, "clusterId": cluster,
                "resources": {"gpu": {"deserved": count, "limit": count}}})
            admin = _admin_session(stack)
            _wait(lambda: admin.get(f"{stack.url}/apis/scheduling.run.ai/v2/queues/{PROJECT}", timeout=10).ok,
                  120, "project queue on the cluster")
            watch = BoundWatch(stack, count)

            def submit(poster, index):
                status, answer = poster.post("/api/v1/workloads/trainings", {
                    "name": f"t{index:05d}", "projectId": project["id"], "clusterId": cluster, "spec": SPEC})
                if status != 200:
                    raise RuntimeError(f"{status} {answer[:200]!r}")
                return json.loads(answer)["workloadId"]

            load, cpu, asked = os.getloadavg()[0], cpu_share.snapshot(), api_requests.snapshot(admin, stack.url)
            sessions = _database_sessions()
            sent, errors, first, answered = clients(count, submit, lambda: Poster(web, headers=headers))
            watched = watch.result(timeout)
            result = figures(sent, watched, errors, first, answered, load)
            result["cpu"] = cpu_share.spent(cpu, cpu_share.snapshot(), apart={"bench (pod watch)": watch.cpu_seconds})
            result["api"] = api_requests.spent(asked, api_requests.snapshot(admin, stack.url))
            result["database_sessions"] = _database_sessions() - sessions
            namespace = project["namespace"]
            copied = {"namespace_labels": admin.get(f"{stack.url}/api/v1/namespaces/{namespace}", timeout=30)
                      .json()["metadata"].get("labels") or {},
                      "job": admin.get(f"{stack.url}/apis/batch/v1/namespaces/{namespace}/jobs",
                                       params={"limit": 1}, timeout=30).json()["items"][0],
                      "namespace": namespace}
    finally:
        stack.stop()
    return result, copied


def _database_sessions() -> int:
    """Connections opened to the bench's database so far (PostgreSQL's count: each one a backend started)."""
    import psycopg

    with psycopg.connect(env.BENCH_DB, autocommit=True) as conn:
        return conn.execute("SELECT sessions FROM pg_stat_database WHERE datname = current_database()").fetchone()[0]


def floor_jobs(count: int, namespace: str) -> list[dict]:
    """The Jobs PaaS Studio makes for these trainings, built by its own pure functions."""
    from django.conf import settings

    from studio.clusters.scheduler import Placement, project_queue
    from workloads import manifests
    from workloads.manifests import parts
    from workloads.specs import validate_spec

    spec = validate_spec("training", SPEC)
    placement = Placement(queue=project_queue(PROJECT), priority_class=parts.priority_class_of("training", spec))
    jobs = []
    for index in range(count):
        ref = manifests.WorkloadRef(id=str(uuid.uuid4()), name=f"t{index:05d}", kind="training", project=PROJECT,
                                    namespace=namespace)
        objects = manifests.build_manifests(ref, spec, knative=False, gpu_scheduler=settings.GPU_SCHEDULER_NAME,
                                            placement=placement)
        jobs += [obj for obj in objects if obj["kind"] == "Job"]
    return jobs


def _shape(job: dict) -> dict:
    """A Job with what differs between two workloads (ids, names) and what the server fills taken out."""
    text = json.dumps(job["spec"]["template"], sort_keys=True)
    labels = job["metadata"]["labels"]
    for value in (labels[WORKLOAD_ID], job["metadata"]["name"]):
        text = text.replace(value, "X")
    template = json.loads(text)
    for key in ("controller-uid", "batch.kubernetes.io/controller-uid", "job-name", "batch.kubernetes.io/job-name"):
        template["metadata"]["labels"].pop(key, None)
    template["metadata"]["labels"].pop(WORKLOAD_ID, None)
    return {"labels": {k: v for k, v in labels.items() if k != WORKLOAD_ID}, "template": template,
            "podFailurePolicy": job["spec"].get("podFailurePolicy")}


def floor_side(count: int, gpus_per_node: int, timeout: float, copied: dict) -> dict:
    from studio.clusters import scheduler as sched

    jobs = floor_jobs(count, copied["namespace"])
    mine, theirs = _shape(jobs[0]), _shape(copied["job"])
    for key in ("labels", "podFailurePolicy"):
        if mine[key] != theirs[key]:
            raise AssertionError(f"the floor's Job differs from PaaS Studio's in {key}: {mine[key]} != {theirs[key]}")
    # the server fills the template's defaults (terminationMessagePath, dnsPolicy...): the product's own fields
    # must be there as it sent them
    if not _within(mine["template"], theirs["template"]):
        raise AssertionError(f"the floor's pod template is not PaaS Studio's: {mine['template']} vs "
                             f"{theirs['template']}")
    stack = start_cluster(count, gpus_per_node)
    try:
        admin = _admin_session(stack)
        namespace = copied["namespace"]
        admin.post(f"{stack.url}/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": namespace, "labels": copied["namespace_labels"]}}, timeout=30).raise_for_status()
        queues = sched.desired_queues([{"name": DEPARTMENT, "resources": []}], [{
            "name": PROJECT, "department": DEPARTMENT, "resources": [], "gpu_deserved": count, "gpu_limit": count}])
        for queue in queues:
            admin.post(f"{stack.url}/apis/scheduling.run.ai/v2/queues", json=queue, timeout=30).raise_for_status()
        _wait(lambda: admin.get(f"{stack.url}/api/v1/namespaces/{namespace}/serviceaccounts/default",
                                timeout=10).ok, 60, "the namespace's default service account")
        watch = BoundWatch(stack, count)
        path = f"/apis/batch/v1/namespaces/{namespace}/jobs"
        auth = {"Authorization": f"Bearer {stack.token}"}

        def submit(poster, index):
            job = jobs[index]
            status, answer = poster.post(path, job)
            if status != 201:
                raise RuntimeError(f"{status} {answer[:200]!r}")
            return job["metadata"]["labels"][WORKLOAD_ID]

        load, cpu, asked = os.getloadavg()[0], cpu_share.snapshot(), api_requests.snapshot(admin, stack.url)
        sent, errors, first, answered = clients(count, submit, lambda: Poster(stack.url, ca_file=stack.ca_file,
                                                                              headers=auth))
        result = figures(sent, watch.result(timeout), errors, first, answered, load)
        result["cpu"] = cpu_share.spent(cpu, cpu_share.snapshot(), apart={"bench (pod watch)": watch.cpu_seconds})
        result["api"] = api_requests.spent(asked, api_requests.snapshot(admin, stack.url))
        return result
    finally:
        stack.stop()


def _within(part, whole) -> bool:
    """Whether every field of `part` is in `whole` with the same value (the server adds defaults)."""
    if isinstance(part, dict):
        return isinstance(whole, dict) and all(k in whole and _within(v, whole[k]) for k, v in part.items())
    if isinstance(part, list):
        return isinstance(whole, list) and len(part) == len(whole) and all(map(_within, part, whole))
    return part == whole


# --- the report ----------------------------------------------------------------------------------------------

def report(count: int, paas: dict, floor: dict) -> bool:
    rows = (("submissions answered (s)", "submit_seconds", "{:.1f}"), ("all pods bound (s)", "all_bound_seconds", "{:.1f}"),
            ("throughput (bound/s)", "throughput", "{:.1f}"), ("submit -> bound p50 (s)", "p50", "{:.2f}"),
            ("submit -> bound p90 (s)", "p90", "{:.2f}"), ("submit -> bound p99 (s)", "p99", "{:.2f}"),
            ("submit -> bound max (s)", "max", "{:.2f}"), ("submit -> Job seen p50 / p99 (s)", "job_p50", "job_p99"),
            ("Job seen -> bound p50 / p99 (s)", "job_bound_p50", "job_bound_p99"),
            ("bound / submitted / errors", None, None), ("load average, start -> end", "load", None))
    print(f"\n{count} one-GPU trainings, {CLIENTS} clients | PaaS Studio | raw Kubernetes | ratio")
    for label, key, fmt in rows:
        if key == "load":
            cells = [f"{s['load'][0]:.1f} -> {s['load'][1]:.1f}" for s in (paas, floor)]
            print(f"{label} | {cells[0]} | {cells[1]} |")
            continue
        if key is None:
            cells = [f"{s['bound']} / {s['submitted']} / {s['errors']}" for s in (paas, floor)]
            print(f"{label} | {cells[0]} | {cells[1]} |")
            continue
        if not fmt.startswith("{"):
            cells = [f"{s[key]:.2f} / {s[fmt]:.2f}" for s in (paas, floor)]
            print(f"{label} | {cells[0]} | {cells[1]} |")
            continue
        ratio = paas[key] / floor[key] if floor[key] else math.nan
        print(f"{label} | {fmt.format(paas[key])} | {fmt.format(floor[key])} | {ratio:.2f}")
    throughput = paas["throughput"] / floor["throughput"]
    p99 = paas["p99"] - floor["p99"]
    complete = paas["bound"] == floor["bound"] == count and not paas["errors"] and not floor["errors"]
    met = complete and throughput >= 0.8 and p99 <= 1.0
    print(f"throughput {throughput:.2f} of the floor (target >= 0.8); p99 {p99:+.2f} s beside the floor's "
          f"(target <= +1 s) — {'met' if met else 'MISSED'}")
    for side, figures_ in (("PaaS Studio", paas), ("raw Kubernetes", floor)):
        used = figures_.get("cpu") or {}
        print(f"  {side}: CPU seconds from the first submission to the last pod bound "
              f"({sum(used.values()):.0f} s of {figures_['all_bound_seconds'] * (os.cpu_count() or 1):.0f} s): "
              + ", ".join(f"{group} {seconds:.0f}" for group, seconds in used.items() if seconds >= 0.5))
        if "database_sessions" in figures_:
            print(f"  {side}: database connections opened meanwhile: {figures_['database_sessions']}")
        asked = figures_.get("api") or {}
        print(f"  {side}: asked of the API server meanwhile: " + ", ".join(f"{key} {n}" for key, n in asked.items()))
        for example in figures_["error_examples"]:
            print(f"  {side} error: {example}")
    return met


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, action="append", help="trainings per side (repeat for more sizes)")
    parser.add_argument("--gpus-per-node", type=int, default=32)
    parser.add_argument("--timeout", type=float, default=1200, help="seconds to wait for every pod to be bound")
    args = parser.parse_args(argv)
    # SIGTERM (and SIGINT, which a shell's background job ignores) unwind through the `finally`s: the clusters,
    # gunicorn, the worker and the watcher all stop
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    (env.ROOT / "var").mkdir(exist_ok=True)
    os.environ.setdefault("CLUSTER_ALLOWED_NETWORKS", "127.0.0.0/8")  # the cluster is on loopback
    print(f"bench.versus_kube: {env.machine()}; load average {os.getloadavg()[0]:.2f}", flush=True)
    met = True
    for count in args.count or [1000]:
        print(f"{count}: PaaS Studio", flush=True)
        paas, copied = paas_side(count, args.gpus_per_node, args.timeout)
        print(f"{count}: raw Kubernetes", flush=True)
        floor = floor_side(count, args.gpus_per_node, args.timeout, copied)
        met = report(count, paas, floor) and met
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
