"""Each system profile launched from the API reaches Running and answers its outputs, on kubesim and (make
e2e-real) the real API server: the launch -> a real Celery worker -> studio.clusters.kube -> the cluster over HTTP, and
back through sync rounds run in the test process (which fill the endpoints the outputs read)."""

import base64
from io import StringIO

import pytest
from django.core.management import call_command
from kubernetes import client

from profiles.models import ServiceProfile
from tests.workloads.cluster_support import wait_for
from workloads import tasks
from workloads.models import Workload

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

INPUTS = {"jupyter-notebook": {}, "llm-inference-server": {"model": "Qwen/Qwen2.5-0.5B-Instruct"},
          "pytorch-training": {"args": "-c 'print(1)'"}, "pytorch-distributed": {"workers": 1}}


def phases_seen(org, workload_id: str) -> list[str]:
    events = org.api.get(f"/api/v1/workloads/{workload_id}/events?limit=500").json()["events"]
    return [e["reason"] for e in reversed(events)]


def outputs(org, workload_id: str) -> dict:
    response = org.api.get(f"/api/v1/workloads/{workload_id}/outputs")
    assert response.status_code == 200, response.json()
    return {o["name"]: o["value"] for o in response.json()["outputs"]}


@pytest.mark.parametrize("name", sorted(INPUTS))
def test_a_system_profile_launched_from_the_api_reaches_running_and_answers_outputs(worker, cluster_org, name):
    call_command("system_profiles", stdout=StringIO())
    profile = ServiceProfile.objects.get(name=name)
    response = cluster_org.api.post(f"/api/v1/service-profiles/{profile.id}/launch",
                                {"projectId": cluster_org.project.id, "name": "demo", "inputs": INPUTS[name]},
                                format="json")
    assert response.status_code == 201, response.json()
    workload_id = response.json()["id"]

    def sync():
        tasks.cluster_sync.apply(args=[str(cluster_org.cluster.pk)])

    wait_for(lambda: "Running" in phases_seen(cluster_org, workload_id), step=sync, timeout=60,
             what=f"{name} to reach Running")
    answered = wait_for(lambda: (lambda values: values if all(values.values()) else None)(outputs(cluster_org, workload_id)),
                        step=sync, timeout=30, what=f"every output of {name}")
    assert list(answered) == [o["name"] for o in profile.outputs]

    spec = Workload.objects.get(pk=workload_id).spec
    secret_refs = [e["secret"] for e in spec.get("environmentVariables", []) if "secret" in e]
    if name == "jupyter-notebook":  # the token reached the pod through the launch's Secret
        secret = client.CoreV1Api(cluster_org.k8s).read_namespaced_secret(secret_refs[0]["name"], cluster_org.namespace)
        assert base64.b64decode(secret.data["generated.token"]).decode() == answered["token"]
        assert answered["url"].startswith("http")
    else:
        assert secret_refs == []
