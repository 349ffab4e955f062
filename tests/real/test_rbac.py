"""deploy/rbac.yaml on a real API server (issue 12, finding 5): the product's ServiceAccount has cluster-wide
only namespaces, nodes and metrics; it binds paas-studio-namespace in each project namespace it creates and
can do its work there — and nothing of the kind anywhere else."""

import pytest
from kubernetes import client

from studio.clusters import kube
from studio.models import Cluster
from tests.conftest import real_official_client
from tests.workloads.cluster_support import make_workload
from workloads.cluster import push, sync

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def as_product(real_cluster):
    api = real_official_client(real_cluster.server, token=real_cluster.product_token)
    yield api
    api.close()


def status_of(call) -> int:
    try:
        call()
    except client.ApiException as exc:
        return exc.status
    return 200


def test_the_product_cannot_read_kube_systems_secrets_or_any_outside_its_namespaces(real_cluster, as_product):
    core = client.CoreV1Api(as_product)
    assert status_of(lambda: core.list_namespaced_secret("kube-system")) == 403
    assert status_of(lambda: core.list_secret_for_all_namespaces()) == 403
    assert status_of(lambda: core.read_namespaced_secret("paas-studio-token", "paas-studio")) == 403
    assert status_of(lambda: client.BatchV1Api(as_product).list_job_for_all_namespaces()) == 403
    assert status_of(lambda: core.list_namespaced_pod("kube-system")) == 403
    # What it holds cluster-wide: namespaces and nodes (read).
    assert status_of(lambda: core.list_namespace()) == 200
    assert status_of(lambda: core.list_node()) == 200
    assert status_of(lambda: core.delete_namespace("kube-system")) == 403


def test_it_may_bind_only_the_namespace_role_never_grant_itself_more(real_cluster, as_product, real_org):
    workload = make_workload(real_org.project, "rbac")
    push.workload_push(workload.pk)  # creates the namespace and the product's RoleBinding in it
    rbac = client.RbacAuthorizationV1Api(as_product)
    binding = rbac.read_namespaced_role_binding("paas-studio", real_org.namespace)
    assert binding.role_ref.kind == "ClusterRole" and binding.role_ref.name == kube.NAMESPACE_ROLE
    assert [(s.kind, s.namespace, s.name) for s in binding.subjects] == [("ServiceAccount", "paas-studio",
                                                                          "paas-studio")]
    escalation = {"metadata": {"name": "mine"}, "subjects": binding.to_dict()["subjects"],
                  "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"}}
    assert status_of(lambda: rbac.create_namespaced_role_binding(real_org.namespace, escalation)) == 403
    assert status_of(lambda: rbac.create_cluster_role_binding(escalation)) == 403
    # Inside its project namespace it does its work: secrets of catalog launches, pods, logs.
    core = client.CoreV1Api(as_product)
    assert status_of(lambda: core.list_namespaced_secret(real_org.namespace)) == 200
    assert status_of(lambda: core.list_namespaced_pod(real_org.namespace)) == 200
    assert status_of(lambda: core.list_namespaced_config_map(real_org.namespace)) == 403  # not needed: not held


def test_the_sync_lists_in_each_managed_namespace_when_it_may_not_list_across(real_org):
    workload = make_workload(real_org.project, "listed")
    push.workload_push(workload.pk)
    conn = kube.connect(real_org.cluster)
    jobs = kube.list_managed(conn, "batch/v1", "Job")
    assert conn.namespaced_reads is True
    assert [j["metadata"]["labels"][kube.WORKLOAD_ID_LABEL] for j in jobs
            if j["metadata"]["namespace"] == real_org.namespace] == [str(workload.pk)]


def test_a_sync_round_before_a_projects_first_push_succeeds(real_org):
    """The project's namespace and the product's RoleBinding in it come with the first push; until then the
    product may not read there (403), which is no reason to fail the round (three would make it Disconnected)."""
    make_workload(real_org.project, "queued")
    assert sync.cluster_sync(real_org.cluster.pk) is not None
    real_org.cluster.refresh_from_db()
    assert real_org.cluster.status == Cluster.Status.CONNECTED and real_org.cluster.failed_rounds == 0
