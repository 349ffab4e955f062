"""Launch preview against the real API server through the product's least-privilege account: its
dry-run verdicts are the real server's own — an object it takes is allowed, one its admission refuses (over the
namespace's own ResourceQuota, which kubesim does not have) is refused with the server's reason — and nothing is created."""

import pytest
from kubernetes import client

from tests.workloads.cluster_support import training_body, wait_for
from workloads import tasks
from workloads.models import Workload

pytestmark = [pytest.mark.real, pytest.mark.django_db(transaction=True)]


def test_a_preview_on_the_real_server_gives_its_verdicts_and_creates_nothing(real_org):
    # A first launch makes the project's namespace and the account's rights in it, as in production.
    first = real_org.api.post("/api/v1/workloads/trainings", training_body(real_org.project, "first"), format="json")
    assert first.status_code == 200, first.json()
    tasks.workload_push.apply(args=[first.json()["workloadId"]])

    body = {**training_body(real_org.project, "lab"),
            "spec": {"image": "jupyter/base-notebook",
                     "ports": [{"container": 8888}]}}
    core = client.CoreV1Api(real_org.k8s)
    core.create_namespaced_resource_quota(real_org.namespace, {
        "metadata": {"name": "no-deployments"}, "spec": {"hard": {"count/deployments.apps": "0"}}})
    wait_for(lambda: (core.read_namespaced_resource_quota("no-deployments", real_org.namespace).status.hard
                      or None), what="the quota controller to fill the quota's status")
    response = real_org.api.post("/api/v1/workloads/workspaces?dryRun=true", body, format="json")
    assert response.status_code == 200, response.json()
    verdicts = {o["kind"]: o["verdict"] for o in response.json()["objects"]}
    assert verdicts["Service"] == {"allowed": True, "code": 201, "reason": "",
                                   "message": "The cluster would accept it."}
    refused = verdicts["Deployment"]
    assert (refused["allowed"], refused["code"], refused["reason"]) == (False, 403, "Forbidden"), refused
    assert "exceeded quota: no-deployments" in refused["message"]
    assert Workload.objects.count() == 1
    assert client.AppsV1Api(real_org.k8s).list_namespaced_deployment(real_org.namespace).items == []
    assert client.CoreV1Api(real_org.k8s).list_namespaced_service(real_org.namespace).items == []
