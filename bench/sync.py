"""Sync: one round over 10,000 workloads in 20 namespaces — wall time, cluster API calls against the minimum of
one list per kind per page, and database queries."""

import json
import math
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from bench import env, seed

WORKLOADS = 10_000
NAMESPACES = 20
PAGE = 500


def _call(sim_url: str, method: str, path: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(
        sim_url + path, method=method, data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": "Bearer kubesim-token", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)


def _create_objects(sim_url: str, projects, rows) -> None:
    from workloads import manifests
    from workloads.cluster.push import workload_ref

    for project in projects:
        _call(sim_url, "POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                      "metadata": {"name": project.namespace}})

    def create(workload):
        for obj in manifests.build_manifests(workload_ref(workload), workload.spec, knative=True):
            group = "/apis/batch/v1" if obj["kind"] == "Job" else "/api/v1"
            _call(sim_url, "POST", f"{group}/namespaces/{obj['metadata']['namespace']}/{obj['kind'].lower()}s", obj)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(create, rows))


def _stats(sim_url: str) -> dict[tuple[str, str], int]:
    document = _call(sim_url, "GET", "/_sim/stats")
    return {(r["verb"], r["resource"]): r["count"] for r in document["requests"]}


def run() -> dict:
    env.recreate_database()
    env.setup_django()
    sim_port = env.free_port()
    sim_url = f"http://127.0.0.1:{sim_port}"
    user, cluster, projects = seed.org(cluster_url=sim_url, projects=NAMESPACES)
    rows = seed.workloads(projects, cluster, WORKLOADS, phase="Creating")
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from workloads.cluster.sync import cluster_sync
    from workloads.models import Workload

    with env.process([env.PY, "-m", "kubesim", "--port", str(sim_port), "--nodes", "120", "--quiet",
                      "--run-seconds", "36000", "--pull-seconds", "0"], wait_for_port=sim_port, log="kubesim"):
        started = time.monotonic()
        _create_objects(sim_url, projects, Workload.objects.select_related("project").order_by("pk"))
        seeding = time.monotonic() - started
        time.sleep(3)  # the simulated controller starts every pod
        seed.analyze()
        rounds = []
        for label in ("first round (10,000 phase changes)", "steady round (nothing changed)"):
            _call(sim_url, "POST", "/_sim/stats/reset", {})
            with CaptureQueriesContext(connection) as queries:
                began = time.monotonic()
                report = cluster_sync(cluster.pk)
                seconds = time.monotonic() - began
            stats = _stats(sim_url)
            lists = {resource: n for (verb, resource), n in stats.items() if verb == "list"}
            gets = sum(n for (verb, resource), n in stats.items() if verb == "get" and resource != "discovery")
            # The floor: one list per kind and page across namespaces; Warning events are listed per namespace.
            pages = {"jobs": math.ceil(WORKLOADS / PAGE), "pods": math.ceil(WORKLOADS / PAGE), "events": NAMESPACES}
            minimum = sum(pages.get(r, 1) for r in lists)
            rounds.append({"label": label, "seconds": seconds, "lists": sum(lists.values()), "minimum": minimum,
                           "gets": gets, "queries": len(queries.captured_queries), "changed": report.changed,
                           "by_kind": lists})
        running = Workload.objects.filter(actual_phase="Running").count()
    return {"seeding_seconds": seeding, "rounds": rounds, "running": running, "rows": len(rows)}
