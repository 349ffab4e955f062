"""Writes that waited for their cluster, sent again together once it answers (workloads.cluster.reach): the task
that carries a batch of them, run in process against kubesim."""

import collections

import pytest
from django.db.backends.signals import connection_created
from kubernetes import client

from tests.workloads.cluster_support import make_workload
from workloads import manifests, tasks
from workloads.cluster import reach

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_batch_of_waited_pushes_puts_each_job_on_the_cluster_once_on_one_connection_per_thread(sim_org):
    """A connection for each write cost ~200 ms a write of a real cluster's backlog on a busy machine (the
    apiserver_restart fault, docs/faults.md): each thread keeps one for all its writes."""
    ids = [str(make_workload(sim_org.project, f"waited-{i}").pk) for i in range(reach.WRITE_BATCH)]
    opened = []

    def count(sender, connection, **kwargs):
        opened.append(connection.alias)

    connection_created.connect(count)
    try:
        tasks.workloads_write_waited("workloads.tasks.workload_push", ids)
    finally:
        connection_created.disconnect(count)
    jobs = client.BatchV1Api(sim_org.k8s).list_namespaced_job(sim_org.namespace).items
    assert collections.Counter(j.metadata.labels[manifests.WORKLOAD_ID_LABEL] for j in jobs) == {i: 1 for i in ids}
    assert 1 <= len(opened) <= reach.WRITE_THREADS
