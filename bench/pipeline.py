"""API write and pipeline: POST /api/v1/workloads/trainings with two Celery worker processes running, then the
time from the first accepted request until the simulated cluster holds every Job."""

import json
import threading
import time
import urllib.request

from bench import env, load, seed

SUBMISSIONS = 1000


def jobs_on_cluster(sim_url: str) -> int:
    """How many of our Jobs the cluster holds, counted over pages of 500 (a label selector gets no
    remainingItemCount from a Kubernetes API server)."""
    selector = "app.kubernetes.io%2Fmanaged-by%3Dpaas-studio"
    count, token = 0, ""
    while True:
        url = f"{sim_url}/apis/batch/v1/jobs?labelSelector={selector}&limit=500" + (f"&continue={token}" if token else "")
        request = urllib.request.Request(url, headers={"Authorization": "Bearer kubesim-token"})
        with urllib.request.urlopen(request, timeout=10) as response:
            body = json.load(response)
        count += len(body["items"])
        token = body["metadata"].get("continue")
        if not token:
            return count


def run() -> dict:
    env.recreate_database()
    env.setup_django()
    sim_port, web_port = env.free_port(), env.free_port()
    sim_url = f"http://127.0.0.1:{sim_port}"
    user, cluster, projects = seed.org(cluster_url=sim_url, projects=1)
    project = projects[0]
    headers = {"Authorization": f"Bearer {seed.token(user)}", "Content-Type": "application/json"}
    body = json.dumps({"name": "bench", "useGivenNameAsPrefix": True, "projectId": project.pk,
                       "clusterId": str(cluster.pk),
                       "spec": {"image": "python:3.11", "command": "python", "args": "-c pass"}}).encode()
    worker_env = env.environment(SYNC_INTERVAL_SECONDS="3600")
    with env.process([env.PY, "-m", "kubesim", "--port", str(sim_port), "--nodes", "50",
                      "--run-seconds", "3600"], wait_for_port=sim_port, log="kubesim"), \
         env.gunicorn(web_port), \
         env.process([env.PY, "-m", "celery", "-A", "config", "worker", "-c", "2", "-l", "WARNING",
                      "--without-gossip", "--without-mingle", "--without-heartbeat"], env=worker_env, log="worker"):
        from studio.clusters import kube

        kube.namespace_ensure(kube.connect(cluster), project.namespace)
        time.sleep(3)  # the worker connects to the broker
        first_accept = time.monotonic()
        done = {}

        def watch():
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline:
                if jobs_on_cluster(sim_url) >= SUBMISSIONS:
                    done["at"] = time.monotonic()
                    return
                time.sleep(0.25)

        watcher = threading.Thread(target=watch)
        watcher.start()
        writes = load.run(f"http://127.0.0.1:{web_port}/api/v1/workloads/trainings", connections=16,
                          max_requests=SUBMISSIONS, max_seconds=300, method="POST", headers=headers,
                          body_factory=lambda: body)
        watcher.join()
    from workloads.models import Workload

    rows = Workload.objects.count()
    seconds = done.get("at", float("nan")) - first_accept
    return {"writes": writes, "rows": rows, "pipeline_seconds": seconds, "pipeline_rate": SUBMISSIONS / seconds}
