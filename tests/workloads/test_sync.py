"""The sync round against kubesim (drift repair on the real API server too, in make e2e-real): its cost in cluster calls and queries at 2,000 workloads, writes of changed
rows only, drift repair (missing object, lost suspension, orphans) and one round per cluster at a time."""

import math
import threading
import time

import pytest
from django.conf import settings as django_settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from kubernetes import client
from prometheus_client import REGISTRY

from studio.clusters import kube
from studio.models import Cluster
from tests.conftest import official_client
from tests.workloads.cluster_support import make_workload, run_seconds, wait_for
from workloads import manifests, tasks
from workloads.cluster import push, sync
from workloads.models import MetricSample, Pod, Workload
from workloads.specs import validate_spec

pytestmark = pytest.mark.django_db(transaction=True)
MANY = 2000


def list_calls(stats: dict) -> dict:
    return {resource: n for (verb, resource), n in stats.items() if verb == "list"}


def test_a_round_over_2000_workloads_lists_each_kind_by_page_and_never_gets_one(sim_org, start_kubesim):
    sim = start_kubesim(nodes=20, run_seconds=3600)
    sim_org.cluster.api_server_url = sim.url
    sim_org.cluster.save()
    conn = kube.connect(sim_org.cluster)
    spec = validate_spec("training", {"image": "python:3.11"})
    rows = Workload.objects.bulk_create([
        Workload(kind="training", name=f"w{i:04d}", requested_name=f"w{i:04d}", project=sim_org.project,
                 department=sim_org.project.department, cluster=sim_org.cluster, created_by_name="tests", spec=spec)
        for i in range(MANY)
    ])
    kube.namespace_ensure(conn, sim_org.namespace)
    jobs = [manifests.build_manifests(push.workload_ref(Workload(pk=w.pk, name=w.name, kind=w.kind,
                                                                 project=sim_org.project)), spec)[-1] for w in rows]
    # Straight into the simulator's API layer, as its HTTP handler would do: 2,000 requests would only time HTTP.
    jobs_api = sim.registry.by_kind("batch/v1", "Job")
    with sim.store.lock:
        for job in jobs:
            sim.api.create(jobs_api, sim_org.namespace, job)
    k8s = client.CoreV1Api(official_client(sim))
    running = "status.phase=Running"
    wait_for(lambda: len(k8s.list_namespaced_pod(sim_org.namespace, field_selector=running).items) == MANY,
             timeout=60, interval=1, what="a running pod for each Job")
    warnings = len(k8s.list_namespaced_event(sim_org.namespace, field_selector="type=Warning").items)

    sim.reset_stats()
    bound = []  # (statement, its parameters) of each write

    def record(execute, sql, params, many, context):
        if sql.startswith(("INSERT", "UPDATE")) and '"workloads_' in sql:
            bound.append((sql[:80], [type(value).__name__ for value in params or ()]))
        return execute(sql, params, many, context)

    with CaptureQueriesContext(connection) as queries, connection.execute_wrapper(record):
        started = time.perf_counter()
        report = sync.cluster_sync(sim_org.cluster.pk)
        seconds = time.perf_counter() - started
    print(f"\nsync of {MANY} workloads: {seconds:.2f}s, {sum(list_calls(sim.stats()).values())} list calls, "
          f"{len(queries)} queries")

    pages = math.ceil(MANY / kube.LIST_PAGE_SIZE)
    expected = {"secrets": 1, "persistentvolumeclaims": 1, "jobs": pages, "services": 1, "ingresses": 1, "deployments": 1,
                "horizontalpodautoscalers": 1, "services.serving.knative.dev": 1, "pods": pages,
                # kubesim serves the Kubeflow Training Operator's jobs: one list each (distributed trainings)
                "pytorchjobs": 1, "tfjobs": 1, "mpijobs": 1, "xgboostjobs": 1, "jaxjobs": 1,
                "events": max(1, math.ceil(warnings / kube.LIST_PAGE_SIZE))}
    assert list_calls(sim.stats()) == expected
    assert sum(expected.values()) <= 30
    assert {key for key in sim.stats() if key[0] == "get"} == {("get", "discovery")}
    # A fixed few reads, and bulk writes of 100+ rows a statement (SQLite's 999 parameters cap a batch).
    selects = [q["sql"] for q in queries if q["sql"].startswith("SELECT")]
    assert len(selects) <= 12, selects
    assert len(queries) <= 20 + 4 * math.ceil(MANY / 100), "\n".join(q["sql"][:150] for q in queries)
    assert report.workloads == MANY and report.changed == MANY
    assert Pod.objects.filter(workload__project=sim_org.project).count() == MANY
    assert set(Workload.objects.values_list("actual_phase", flat=True)) == {"Running"}
    pods = k8s.list_namespaced_pod(sim_org.namespace).items
    assert set(Pod.objects.values_list("uid", "name", "phase", "node_name", "created_at")) == {
        (p.metadata.uid, p.metadata.name, p.status.phase, p.spec.node_name, p.metadata.creation_timestamp) for p in pods}
    if connection.vendor == "postgresql":
        # The rows a statement writes are one JSON document made by orjson, not an array per column quoted value
        # by value in Python (docs/performance.md): 2,000 pods in one INSERT, with one parameter. (A selection,
        # `pk_in`, binds its ids as one array.)
        assert bound and all("list" not in types for sql, types in bound if sql.startswith("INSERT")), bound
        assert [types for sql, types in bound if sql.startswith('INSERT INTO "workloads_pod"')] == [["str"]]

    with CaptureQueriesContext(connection) as again:
        sync.cluster_sync(sim_org.cluster.pk)
    writes = [q["sql"] for q in again if q["sql"].startswith(("UPDATE", "INSERT")) and "workloads_" in q["sql"]]
    assert writes == []  # nothing changed on the cluster: nothing is written


def test_a_round_whose_continue_token_expires_lists_again_and_repairs_nothing(sim_org, start_kubesim):
    """The cluster compacts its history between two pages of the Jobs list (as etcd does every 5 minutes): the
    second page is 410 Expired, the list starts over, and the round sees every workload — none is taken for
    missing and pushed again."""
    count = kube.LIST_PAGE_SIZE + 20
    sim = start_kubesim(nodes=8, run_seconds=3600, pull_seconds=0.05)
    sim_org.cluster.api_server_url = sim.url
    sim_org.cluster.save()
    conn = kube.connect(sim_org.cluster)
    spec = validate_spec("training", {"image": "python:3.11"})
    rows = Workload.objects.bulk_create([
        Workload(kind="training", name=f"p{i:04d}", requested_name=f"p{i:04d}", project=sim_org.project,
                 department=sim_org.project.department, cluster=sim_org.cluster, created_by_name="tests", spec=spec)
        for i in range(count)
    ])
    kube.namespace_ensure(conn, sim_org.namespace)
    jobs_api = sim.registry.by_kind("batch/v1", "Job")
    with sim.store.lock:
        for w in rows:
            ref = push.workload_ref(Workload(pk=w.pk, name=w.name, kind=w.kind, project=sim_org.project))
            sim.api.create(jobs_api, sim_org.namespace, manifests.build_manifests(ref, spec)[-1])

    def compact_after_the_first_page():
        deadline = time.monotonic() + 60
        while sim.stats().get(("list", "jobs"), 0) < 1 and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(0.7)  # page 1 is served (in well under that) and page 2 is held by the 1.5 s latency
        with sim.store.lock:  # a write after the list's revision, then the compaction passes it
            sim.api.create(sim.registry.by_key["configmaps"], sim_org.namespace, {"metadata": {"name": "later"}})
            sim.compact()

    expired = {"cluster": sim_org.cluster.name, "verb": "list", "resource": "jobs.batch", "status": "410"}
    before = REGISTRY.get_sample_value("studio_cluster_api_errors_total", expired) or 0
    sim.reset_stats()
    sim.set_faults(latency_ms=1500)  # each request waits 1.5 s before it is served: page 2 waits for the compaction
    compactor = threading.Thread(target=compact_after_the_first_page)
    compactor.start()
    try:
        report = sync.cluster_sync(sim_org.cluster.pk)
    finally:
        compactor.join()
        sim.set_faults(latency_ms=0)

    assert REGISTRY.get_sample_value("studio_cluster_api_errors_total", expired) == before + 1
    assert list_calls(sim.stats())["jobs"] == 4  # page 1, page 2 (410), then both again
    assert report.workloads == count and report.repushed == 0 and report.removed == 0
    assert sim.stats().get(("create", "jobs"), 0) == 0


def test_an_unchanged_workload_is_not_written_again(sim_org):
    workload = make_workload(sim_org.project, "still", annotations=run_seconds(600))
    push.workload_push(workload.pk)
    wait_for(lambda: Workload.objects.get(pk=workload.pk).actual_phase == "Running",
             step=lambda: sync.cluster_sync(sim_org.cluster.pk), what="Running")
    with CaptureQueriesContext(connection) as queries:
        report = sync.cluster_sync(sim_org.cluster.pk)
    assert report.changed == 0
    assert not [q for q in queries if q["sql"].startswith("UPDATE") and '"workloads_workload"' in q["sql"]]
    assert list(Workload.objects.get(pk=workload.pk).events.filter(reason="Running").values_list("phase", flat=True)) \
        == ["Running"]


def test_a_deleted_object_of_a_running_workload_is_pushed_again(worker, cluster_org):
    workload = make_workload(cluster_org.project, "again", annotations=run_seconds(600))
    push.workload_push(workload.pk)
    name = manifests.object_name(push.workload_ref(Workload.objects.select_related("project").get(pk=workload.pk)))
    wait_for(lambda: Workload.objects.get(pk=workload.pk).actual_phase == "Running",
             step=lambda: sync.cluster_sync(cluster_org.cluster.pk), what="Running")
    batch = client.BatchV1Api(cluster_org.k8s)
    first_uid = batch.read_namespaced_job(name, cluster_org.namespace).metadata.uid
    batch.delete_namespaced_job(name, cluster_org.namespace, propagation_policy="Background")

    report = sync.cluster_sync(cluster_org.cluster.pk)
    assert report.repushed == 1
    assert Workload.objects.get(pk=workload.pk).phase_message == "Object missing; recreating"

    def recreated():
        try:
            return batch.read_namespaced_job(name, cluster_org.namespace).metadata.uid != first_uid
        except client.ApiException:
            return False

    wait_for(recreated, what="the Job to be recreated by the worker")
    wait_for(lambda: Workload.objects.get(pk=workload.pk).actual_phase == "Running",
             step=lambda: sync.cluster_sync(cluster_org.cluster.pk), what="Running again")


def test_a_job_resumed_behind_our_back_is_suspended_again(worker, sim_org, settings):
    settings.SYNC_REPAIR_GRACE_SECONDS = 0
    workload = make_workload(sim_org.project, "parked", desired="Stopped")
    push.workload_push(workload.pk)
    name = manifests.object_name(push.workload_ref(Workload.objects.select_related("project").get(pk=workload.pk)))
    batch = client.BatchV1Api(sim_org.k8s)
    batch.patch_namespaced_job(name, sim_org.namespace, {"spec": {"suspend": False}})

    report = sync.cluster_sync(sim_org.cluster.pk)
    assert report.resuspended == 1
    wait_for(lambda: batch.read_namespaced_job(name, sim_org.namespace).spec.suspend is True,
             what="the Job to be suspended again")
    wait_for(lambda: Workload.objects.get(pk=workload.pk).actual_phase == "Stopped",
             step=lambda: sync.cluster_sync(sim_org.cluster.pk), what="Stopped")


def test_objects_of_unknown_or_deleted_workloads_are_deleted_and_others_left_alone(cluster_org):
    kept = make_workload(cluster_org.project, "kept", annotations=run_seconds(600))
    gone = make_workload(cluster_org.project, "gone", annotations=run_seconds(600))
    for workload in (kept, gone):
        push.workload_push(workload.pk)
    Workload.objects.filter(pk=gone.pk).delete()  # its objects are now orphans
    foreign = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
        "name": "elsewhere", "namespace": "default",
        "labels": {manifests.MANAGED_BY_LABEL: manifests.MANAGED_BY, manifests.WORKLOAD_ID_LABEL: "x"}}}
    # Made by someone else (the cluster's admin): the product itself may write only in project namespaces.
    client.CoreV1Api(cluster_org.k8s).create_namespaced_config_map("default", foreign)

    report = sync.cluster_sync(cluster_org.cluster.pk)
    assert report.orphans_deleted == 1
    jobs = client.BatchV1Api(cluster_org.k8s).list_namespaced_job(cluster_org.namespace).items
    assert [j.metadata.labels[manifests.WORKLOAD_ID_LABEL] for j in jobs] == [str(kept.pk)]
    # Another namespace, not ours to judge.
    assert client.CoreV1Api(cluster_org.k8s).read_namespaced_config_map("elsewhere", "default")
    client.CoreV1Api(cluster_org.k8s).delete_namespaced_config_map("elsewhere", "default")


def test_the_beat_tasks_fan_out_a_sync_and_a_metrics_round_per_cluster(worker, sim_org):
    from config.celery import app

    app.loader.import_default_modules()  # every app's tasks, as a worker loads them (not only those imported so far)
    for entry in django_settings.CELERY_BEAT_SCHEDULE.values():
        assert entry["task"] in app.tasks
    workload = make_workload(sim_org.project, "beaten", annotations=run_seconds(600))
    push.workload_push(workload.pk)
    tasks.clusters_sync.apply()  # enqueues one cluster_sync per cluster, run by the worker
    wait_for(lambda: Cluster.objects.get(pk=sim_org.cluster.pk).status == "Connected", what="a sync round")
    wait_for(lambda: Workload.objects.get(pk=workload.pk).actual_phase == "Running",
             step=tasks.clusters_sync.apply, what="Running")
    tasks.clusters_collect_metrics.apply()
    wait_for(lambda: MetricSample.objects.filter(workload=workload, type="RUNNING_POD_COUNT", value=1).exists(),
             what="a metrics round")


def test_a_repair_the_broker_refused_is_named_so_that_the_next_tick_tries_it_again(sim_org, settings, monkeypatch):
    """A workload whose push was lost, found while Redis is away: the repair's enqueue fails, the round goes on,
    and the report names the workload (the watcher derives it again next tick instead of at its next resync, which
    is 30 minutes by default); once the broker answers, the next repair is sent."""
    from kombu.exceptions import OperationalError

    settings.SYNC_REPAIR_GRACE_SECONDS = 0
    workload = make_workload(sim_org.project, "push-lost")  # its push task lost: never on the cluster

    def broker_down(name, args):
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr("studio.queue.app.send_task", broker_down)
    report = sync.cluster_sync(sim_org.cluster.pk)
    assert (report.repushed, report.unsent) == (1, {str(workload.pk)})

    sent = []
    monkeypatch.setattr("studio.queue.app.send_task", lambda name, args: sent.append((name, args)))
    report = sync.cluster_sync(sim_org.cluster.pk)
    assert (report.repushed, report.unsent) == (1, set())
    assert sent == [("workloads.tasks.workload_push", [str(workload.pk)])]


def test_a_push_still_queued_behind_the_clusters_others_is_not_pushed_twice(sim_org, settings, monkeypatch):
    """A backlog of pushes longer than the repair's grace: a workload created after the newest one pushed meanwhile
    waits for its own push (a second one would double the backlog), and is derived again next tick; once pushes
    of newer workloads went by it, or none went for a grace (the queue stalled), its push was lost: pushed again."""
    from datetime import timedelta

    from django.utils import timezone

    settings.SYNC_REPAIR_GRACE_SECONDS = 60
    now = timezone.now()
    older, waiting, newer = (make_workload(sim_org.project, name) for name in ("older", "waiting", "newer"))
    for workload, age in ((older, 130), (waiting, 120), (newer, 90)):
        Workload.objects.filter(pk=workload.pk).update(created_at=now - timedelta(seconds=age))
    push.workload_push(older.pk)  # the queue's front: pushed a moment ago
    sent = []
    monkeypatch.setattr("studio.queue.app.send_task", lambda name, args: sent.append((name, args)))

    report = sync.cluster_sync(sim_org.cluster.pk)
    assert (report.repushed, report.unsent, sent) == (0, {str(waiting.pk), str(newer.pk)}, [])

    push.workload_push(newer.pk)  # the queue went past `waiting`: its push was lost
    report = sync.cluster_sync(sim_org.cluster.pk)
    assert (report.repushed, report.unsent) == (1, set())
    assert sent == [("workloads.tasks.workload_push", [str(waiting.pk)])]

    sent.clear()
    last = make_workload(sim_org.project, "last")
    Workload.objects.filter(pk=last.pk).update(created_at=now - timedelta(seconds=80))
    Workload.objects.filter(pk__in=[older.pk, newer.pk]).update(submitted_at=now - timedelta(seconds=70))
    report = sync.cluster_sync(sim_org.cluster.pk)  # no push for a grace: the queue stalled, or lost them all
    assert report.repushed == 2 and report.unsent == set()
    assert sorted(args[0] for _, args in sent) == sorted([str(waiting.pk), str(last.pk)])
