"""The cluster watcher on the real control plane, as deploy/'s least-privileged ServiceAccount: it may not read
across namespaces, so it watches the managed namespaces and each kind inside each of them; phases arrive by
watch, and drift (a Job deleted behind the product's back) is repaired as it happens."""

import pytest
from kubernetes import client

from tests.workloads.cluster_support import make_workload, run_seconds, wait_for
from workloads import manifests
from workloads.cluster import push
from workloads.models import Workload

pytestmark = [pytest.mark.real, pytest.mark.django_db(transaction=True)]


def phase_of(workload) -> str:
    return Workload.objects.values_list("actual_phase", flat=True).get(pk=workload.pk)


def test_the_watcher_follows_the_real_cluster_inside_its_namespaces_and_repairs_drift(worker, real_org,
                                                                                     start_watcher):
    watcher = start_watcher()
    wait_for(lambda: watcher.said(f"watching cluster {real_org.cluster.name}"), timeout=60,
             what="the watcher to hold the lease")
    workload = make_workload(real_org.project, "watched", annotations=run_seconds(600))
    push.workload_push(workload.pk)  # makes the namespace and the product's RoleBinding in it
    wait_for(lambda: phase_of(workload) == "Running", timeout=90, what="Running, by watch")
    assert watcher.said("reading inside each managed namespace")  # deploy/'s rights: no cluster-wide reads

    name = manifests.object_name(push.workload_ref(Workload.objects.select_related("project").get(pk=workload.pk)))
    batch = client.BatchV1Api(real_org.k8s)
    first_uid = batch.read_namespaced_job(name, real_org.namespace).metadata.uid
    batch.delete_namespaced_job(name, real_org.namespace, propagation_policy="Background")

    def recreated():
        try:
            return batch.read_namespaced_job(name, real_org.namespace).metadata.uid != first_uid
        except client.ApiException:
            return False

    wait_for(recreated, timeout=90, what="the deleted Job pushed again, with no round")
    wait_for(lambda: phase_of(workload) == "Running", timeout=90, what="Running again")
