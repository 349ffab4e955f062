"""Faults on the cluster path, each with a real Celery worker: the cluster API down while workloads are
submitted, a worker killed mid-batch, and a cluster that stops answering the sync."""

import collections

import pytest
from django.conf import settings
from kubernetes import client

from tests.workloads.cluster_support import make_workload, run_seconds, training_body, wait_for
from workloads import manifests, tasks
from workloads.cluster import push, sync
from workloads.models import Workload, WorkloadEvent

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def submit_many(org, prefix: str, count: int) -> list[str]:
    ids = []
    for i in range(count):
        body = training_body(org.project, f"{prefix}-{i}", annotations=run_seconds(600))
        response = org.api.post("/api/v1/workloads/trainings", body, format="json")
        assert response.status_code == 200, response.json()
        ids.append(response.json()["workloadId"])
    return ids


def jobs_by_workload(org) -> collections.Counter:
    jobs = client.BatchV1Api(org.k8s).list_namespaced_job(org.namespace).items
    return collections.Counter(j.metadata.labels[manifests.WORKLOAD_ID_LABEL] for j in jobs)


def retries_logged(worker) -> int:
    return sum(1 for line in worker.lines if "workloads.tasks.workload_push" in line and " retry: " in line)


def attempts_logged(worker) -> int:
    """Pushes that reached for the cluster and found it silent (each then waits for it)."""
    return sum(1 for line in list(worker.lines) if "workloads.tasks.workload_push of workload" in line
               and "did not answer" in line)


def waiting_logged(worker) -> int:
    """Pushes parked without trying, the cluster being known not to answer."""
    return sum(1 for line in list(worker.lines) if "workloads.tasks.workload_push of workload" in line
               and "waits for cluster" in line)


def test_pushes_while_the_cluster_api_is_down_wait_for_it_and_go_at_once_when_a_round_sees_it_answer(worker,
                                                                                                       sim_org):
    sim_org.sim.set_faults(outage=True)
    ids = submit_many(sim_org, "outage", 50)
    wait_for(lambda: attempts_logged(worker) + waiting_logged(worker) >= 50, timeout=60,
             what="every push to find the cluster silent and wait")
    # Only the pushes in flight when it went silent (two worker processes) tried it; the rest waited at once.
    assert 1 <= attempts_logged(worker) <= 2
    assert retries_logged(worker) == 0
    assert sync.cluster_sync(sim_org.cluster.pk) is None  # the sync cannot see the cluster either
    sim_org.sim.set_faults(outage=False)

    sync.cluster_sync(sim_org.cluster.pk)  # one round sees it answer: every waiting push is sent again at once
    wait_for(lambda: set(jobs_by_workload(sim_org)) == set(ids), timeout=60, interval=0.5,
             what="a Job for each workload, without another round")
    assert set(jobs_by_workload(sim_org).values()) == {1}
    assert Workload.objects.filter(project=sim_org.project).count() == 50
    wait_for(lambda: not Workload.objects.filter(project=sim_org.project).exclude(actual_phase="Running").exists(),
             step=lambda: sync.cluster_sync(sim_org.cluster.pk), what="every workload Running")
    assert set(jobs_by_workload(sim_org).values()) == {1}
    assert retries_logged(worker) == 0


def test_while_the_cluster_is_silent_the_watcher_probes_it_and_sends_the_waiting_pushes_when_it_answers(
        worker, sim_org, start_watcher):
    watcher = start_watcher()
    first = submit_many(sim_org, "before", 2)
    wait_for(lambda: set(jobs_by_workload(sim_org)) == set(first), what="the first Jobs")
    sim_org.sim.set_faults(outage=True)
    ids = first + submit_many(sim_org, "during", 30)
    wait_for(lambda: attempts_logged(worker) + waiting_logged(worker) >= 30, timeout=60,
             what="every push to find the cluster silent and wait")
    assert 1 <= attempts_logged(worker) <= 2 and retries_logged(worker) == 0
    sim_org.sim.set_faults(outage=False)

    wait_for(lambda: set(jobs_by_workload(sim_org)) == set(ids), timeout=60, interval=0.5,
             what="a Job for each workload once the watcher's probe sees the cluster answer")
    assert watcher.said("answers again: ") >= 1
    assert set(jobs_by_workload(sim_org).values()) == {1}
    wait_for(lambda: not Workload.objects.filter(project=sim_org.project).exclude(actual_phase="Running").exists(),
             timeout=60, what="every workload Running, by watch")
    assert set(jobs_by_workload(sim_org).values()) == {1}


def test_a_worker_killed_mid_batch_loses_and_duplicates_nothing(worker, sim_org, settings_override):
    sim_org.sim.set_faults(latency_ms=150)  # a slow cluster, so that the batch is still going when the worker dies
    ids = submit_many(sim_org, "killed", 30)
    wait_for(lambda: len(jobs_by_workload(sim_org)) >= 3, timeout=60, what="the batch to start")
    worker.kill()
    pushed_before_kill = len(jobs_by_workload(sim_org))
    assert pushed_before_kill < 30, "the worker finished the batch before it was killed: nothing was tested"
    sim_org.sim.set_faults(latency_ms=0)
    worker.start(purge=False)

    wait_for(lambda: set(jobs_by_workload(sim_org)) == set(ids), timeout=90, interval=0.5,
             step=lambda: sync.cluster_sync(sim_org.cluster.pk), what="a Job for each workload")
    assert set(jobs_by_workload(sim_org).values()) == {1}
    rows = Workload.objects.filter(project=sim_org.project)
    assert rows.count() == 30 and len(set(rows.values_list("name", flat=True))) == 30
    submitted = WorkloadEvent.objects.filter(workload__in=rows, reason="Submitted")
    assert collections.Counter(submitted.values_list("workload_id", flat=True)) == {wid: 1 for wid in
                                                                                  rows.values_list("pk", flat=True)}


@pytest.fixture
def settings_override(settings):
    # Pushes lost with the killed worker (the filesystem broker deletes a message once delivered) are found
    # by the sync after this grace: a workload never seen on the cluster is pushed again.
    settings.SYNC_REPAIR_GRACE_SECONDS = 3
    return settings


def test_a_cluster_silent_for_several_rounds_is_disconnected_and_its_workloads_unknown(sim_org):
    rounds = settings.SYNC_DISCONNECTED_AFTER_ROUNDS
    workload = make_workload(sim_org.project, "quiet", annotations=run_seconds(600))
    push.workload_push(workload.pk)
    wait_for(lambda: Workload.objects.get(pk=workload.pk).actual_phase == "Running",
             step=lambda: tasks.cluster_sync.apply(args=[str(sim_org.cluster.pk)]), what="Running")

    sim_org.sim.set_faults(outage=True)
    for _ in range(rounds - 1):
        sync.cluster_sync(sim_org.cluster.pk)
    sim_org.cluster.refresh_from_db()
    assert (sim_org.cluster.status, Workload.objects.get(pk=workload.pk).actual_phase) == ("Connected", "Running")
    for _ in range(2):
        sync.cluster_sync(sim_org.cluster.pk)
    sim_org.cluster.refresh_from_db()
    assert sim_org.cluster.status == "Disconnected" and sim_org.cluster.failed_rounds == rounds + 1
    workload.refresh_from_db()
    assert workload.actual_phase == "Unknown"
    assert workload.phase_message == f"The cluster has not answered for {rounds} sync rounds."
    assert workload.events.filter(reason="Unknown").count() == 1

    sim_org.sim.set_faults(outage=False)
    sync.cluster_sync(sim_org.cluster.pk)
    sim_org.cluster.refresh_from_db()
    assert (sim_org.cluster.status, sim_org.cluster.failed_rounds) == ("Connected", 0)
    assert Workload.objects.get(pk=workload.pk).actual_phase == "Running"
