"""Project namespaces carry Pod Security Admission labels matching their effective policy, on the simulated
cluster over HTTP: set when the namespace is created, patched by a real Celery worker when a policy changes.
The labels are read with the official client, as kubectl would."""

import pytest
from kubernetes import client

from policies import tasks
from tests.conftest import bearer_client
from tests.factories import UserFactory
from tests.workloads.cluster_support import training_body, wait_for
from workloads.models import Workload

pytestmark = [pytest.mark.django_db(transaction=True)]
PREFIX = "pod-security.kubernetes.io/"


def psa_labels(org) -> dict:
    labels = client.CoreV1Api(org.k8s).read_namespace(org.namespace).metadata.labels or {}
    return {k: v for k, v in labels.items() if k.startswith(PREFIX)}


def expected(level: str) -> dict:
    return {f"{PREFIX}{mode}{suffix}": value for mode in ("enforce", "warn", "audit")
            for suffix, value in (("", level), ("-version", "latest"))}


def test_a_new_namespace_is_baseline_and_follows_the_policy(sim_org):
    tasks.project_namespace_security(sim_org.project.pk)  # what project creation enqueues
    assert psa_labels(sim_org) == expected("baseline")
    labels = client.CoreV1Api(sim_org.k8s).read_namespace(sim_org.namespace).metadata.labels
    assert labels["paas-studio/project"] == sim_org.project.name
    tasks.project_namespace_security(sim_org.project.pk)  # idempotent
    assert psa_labels(sim_org) == expected("baseline")


def test_a_workload_push_creates_the_namespace_with_the_labels(sim_org):
    from workloads.cluster import push

    response = sim_org.api.post("/api/v1/workloads/trainings", training_body(sim_org.project, "t"), format="json")
    assert response.status_code == 200, response.json()
    push.workload_push(Workload.objects.get(pk=response.json()["workloadId"]).pk)
    assert psa_labels(sim_org) == expected("baseline")


@pytest.mark.worker
def test_a_policy_change_relabels_the_namespace_through_the_worker(worker, sim_org):
    tasks.project_namespace_security(sim_org.project.pk)
    admin = bearer_client(UserFactory(username="psa-admin", platform_admin=True))
    meta = {"scope": "project", "projectId": sim_org.project.pk, "name": "host-network"}
    allow = {"rules": {"security": {"hostNetwork": {"canEdit": True}}}}
    assert admin.put("/api/v2/policy/workspaces", {"meta": meta, "policy": allow}, format="json").status_code == 200
    wait_for(lambda: psa_labels(sim_org) == expected("privileged"), what="privileged labels")
    # a member may now run a workspace on the host network, in this project only
    body = training_body(sim_org.project, "ws", security={"hostNetwork": True})
    body["spec"].pop("completions", None)
    assert sim_org.api.post("/api/v1/workloads/workspaces", body, format="json").status_code == 200
    url = f"/api/v2/policy/workspaces?scope=project&projectId={sim_org.project.pk}"
    assert admin.delete(url).status_code == 204
    wait_for(lambda: psa_labels(sim_org) == expected("baseline"), what="baseline labels again")


def test_the_command_labels_namespaces_made_before_policies(sim_org):
    from io import StringIO

    from django.core.management import call_command
    from kubernetes.client import V1Namespace, V1ObjectMeta

    client.CoreV1Api(sim_org.k8s).create_namespace(V1Namespace(metadata=V1ObjectMeta(name=sim_org.namespace)))
    assert psa_labels(sim_org) == {}
    out = StringIO()
    call_command("policy_namespaces", "--project", sim_org.project.name, stdout=out)
    assert out.getvalue() == f"{sim_org.namespace}: baseline\n"
    assert psa_labels(sim_org) == expected("baseline")
