"""Writes that waited for their cluster, sent again together once it answers (workloads.cluster.reach): the task
that carries a batch of them, run in process against kubesim."""

import collections
import threading
import uuid

import pytest
from django.db.backends.signals import connection_created
from django.utils import timezone
from kubernetes import client

from tests.workloads.cluster_support import make_workload
from workloads import manifests, tasks
from workloads.cluster import push, reach
from workloads.models import WaitingWrite

pytestmark = pytest.mark.django_db(transaction=True)


class Connections:
    """The database connections the batch's threads open, and the tables their queries read from."""

    def __init__(self):
        self.opened = 0
        self.tables: collections.Counter = collections.Counter()
        self.queries = 0
        self.deletes = 0
        self.lock = threading.Lock()

    def __enter__(self):
        connection_created.connect(self.created)
        return self

    def __exit__(self, *exc):
        connection_created.disconnect(self.created)

    def created(self, sender, connection, **kwargs):
        with self.lock:
            self.opened += 1
        connection.execute_wrappers.append(self.query)

    def query(self, execute, sql, params, many, context):
        with self.lock:
            self.queries += '"workloads_workload' in sql  # the workload's rows: its own, its events
            self.deletes += sql.startswith('DELETE FROM "workloads_waitingwrite"')
            self.tables.update(t for t in ("studio_nodepool", "assets_asset", "profiles_launchsecret")
                               if f'FROM "{t}"' in sql)
        return execute(sql, params, many, context)


def test_a_batch_of_waited_pushes_puts_each_job_on_the_cluster_once_on_one_connection_per_thread(sim_org):
    """A connection for each write cost 50 ms a write of a real cluster's backlog on a busy machine (the
    apiserver_restart fault, docs/faults.md): each thread keeps one for all its writes. The pushes of one project
    read its cluster's node pools and its pull secrets once a thread at most, not once a push, and a workload
    that no catalog launch made reads no launch Secret."""
    ids = [str(make_workload(sim_org.project, f"waited-{i}").pk) for i in range(reach.WRITE_BATCH)]
    with Connections() as connections:
        tasks.workloads_write_waited("workloads.tasks.workload_push", ids)
    jobs = client.BatchV1Api(sim_org.k8s).list_namespaced_job(sim_org.namespace).items
    assert collections.Counter(j.metadata.labels[manifests.WORKLOAD_ID_LABEL] for j in jobs) == {i: 1 for i in ids}
    assert 1 <= connections.opened <= reach.WRITE_THREADS
    assert 1 <= connections.tables["studio_nodepool"] <= reach.WRITE_THREADS
    assert 1 <= connections.tables["assets_asset"] <= reach.WRITE_THREADS
    # A push of a workload submitted through the API: the write's check, the workload, its submission time and
    # its event; no launch Secret (catalog launches only). The namespace's labels and the cluster's discovery
    # are once a process or a cluster.
    assert connections.tables["profiles_launchsecret"] == 0
    assert connections.queries <= 4 * len(ids), connections.queries


def test_a_batch_removes_its_written_rows_together_and_keeps_one_parked_again_meanwhile(sim_org):
    """A released row goes once its write has run: a batch removes its threads' rows in one query each (a delete a
    write was one of a waited push's five queries). A write parked again while the batch ran (another task found
    the cluster silent) keeps its row: it waits anew, and still once a release has sent it again (its new task has
    not run yet: were its row gone, a lost task would lose that write)."""
    task = "workloads.tasks.workload_push"
    ids = [str(make_workload(sim_org.project, f"released-{i}").pk) for i in range(reach.WRITE_BATCH)]
    for workload_id in ids:
        reach.park(workload_id, sim_org.cluster.pk, task)
    WaitingWrite.objects.update(released_at=timezone.now())  # as reach.release sends them

    def write(workload_id):
        push.workload_push(workload_id)
        if workload_id in ids[:2]:
            reach.park(workload_id, sim_org.cluster.pk, task)
        if workload_id == ids[1]:  # and sent again by a release
            WaitingWrite.objects.filter(workload_id=workload_id).update(released_at=timezone.now())

    with Connections() as connections:
        reach.write_batch(task, ids, write)
    left = dict(WaitingWrite.objects.values_list("workload_id", "released_at"))
    assert set(left) == {uuid.UUID(ids[0]), uuid.UUID(ids[1])}
    assert left[uuid.UUID(ids[0])] is None and left[uuid.UUID(ids[1])] is not None
    assert 1 <= connections.deletes <= reach.WRITE_THREADS


def test_a_waited_write_sent_on_its_own_removes_its_row_and_keeps_one_parked_again_meanwhile(sim_org):
    """A waited write that runs as its own task (a retry, a second push) removes its waiting row once written, but
    only the row it read: one parked again while the write ran (another task found the cluster silent) waits anew,
    or that write would never be sent when the cluster answers."""
    task = "workloads.tasks.workload_push"
    written, parked_again = (make_workload(sim_org.project, name) for name in ("written", "parked-again"))
    for workload in (written, parked_again):
        reach.park(str(workload.pk), sim_org.cluster.pk, task)
    WaitingWrite.objects.update(released_at=timezone.now())

    def write(workload_id):
        push.workload_push(workload_id)
        if workload_id == str(parked_again.pk):
            reach.park(workload_id, sim_org.cluster.pk, task)

    for workload in (written, parked_again):
        reach.write_or_park(task, str(workload.pk), write)
    assert list(WaitingWrite.objects.values_list("workload_id", "released_at")) == [(parked_again.pk, None)]
