"""Issue 37's replica bound on the real cluster (`make e2e-real`): a distributed training of 1,000,000 workers — what
held the simulated API server with 1,000,009 pods — is refused by the API before anything reaches the real API server
(the project's namespace, made by a workload's first push, is never made), and a bounded one still runs its master and
workers on the real Kubeflow training operator, their pods without a service-account token."""

import pytest
from kubernetes import client

from tests.workloads.cluster_support import run_seconds, wait_for
from tests.workloads.test_e2e import pods_of, submit, sync, wait_phase
from workloads.models import Workload

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def distributed_body(project, name: str, workers: int, **spec) -> dict:
    return {"name": name, "projectId": str(project.id), "clusterId": str(project.cluster_id),
            "spec": {"image": "python:3.11", "command": "python", "args": "train.py",
                     "distributedFramework": "PyTorch", "numWorkers": workers, **spec}}


def _namespace_exists(org) -> bool:
    try:
        client.CoreV1Api(org.k8s).read_namespace(org.namespace)
    except client.ApiException as exc:
        if exc.status == 404:
            return False
        raise
    return True


def _pytorch_jobs(org) -> list[dict]:
    return client.CustomObjectsApi(org.k8s).list_cluster_custom_object("kubeflow.org", "v1", "pytorchjobs")["items"]


def test_a_million_workers_never_reach_the_api_server_and_a_bounded_job_still_runs(worker, real_org):
    jobs_before = len(_pytorch_jobs(real_org))
    huge = real_org.api.post("/api/v1/workloads/distributed",
                             distributed_body(real_org.project, "huge", 1_000_000), format="json")
    assert huge.status_code == 400, huge.json()
    assert {e["field"]: e["message"] for e in huge.json()["errors"]} == {
        "spec.numWorkers": "must be at most 100 (policy: tenant default)"}
    assert not Workload.objects.filter(project=real_org.project).exists()
    sync(real_org)  # a sync round has nothing of it to push either
    assert not _namespace_exists(real_org) and len(_pytorch_jobs(real_org)) == jobs_before

    workload_id = submit(real_org, "distributed", distributed_body(real_org.project, "bounded", 2,
                                                                    annotations=run_seconds(600)))
    running = wait_phase(real_org, workload_id, "Running", timeout=180)
    assert running["requestedPods"] == {"number": 3}
    pods = wait_for(lambda: (lambda found: found if len(found) == 3 else None)(pods_of(real_org, workload_id)),
                    step=lambda: sync(real_org), timeout=120, what="the master and two workers' pods")
    for pod in pods:  # the real ServiceAccount admission adds no token volume to a pod that declines it
        assert pod.spec.automount_service_account_token is False, pod.metadata.name
        assert not [v.name for v in pod.spec.volumes or () if v.name.startswith("kube-api-access")], pod.metadata.name
    ours = [j for j in _pytorch_jobs(real_org) if j["metadata"]["namespace"] == real_org.namespace]
    assert len(ours) == 1 and ours[0]["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 2
    assert real_org.api.delete(f"/api/v1/workloads/distributed/{workload_id}").status_code == 204
