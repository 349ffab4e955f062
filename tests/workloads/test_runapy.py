"""Run:ai's own SDK (runapy) drives every operation of the Tokens, Workloads, Trainings, Workspaces and
Inferences tags (and the workload pods, events and pod metrics) against a live server, logged in with an app
token, with the seeds' bodies as published; every answer is checked against Run:ai's schemas too."""

import copy
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone
from runai.exceptions import ApiException

from tests.factories import allow_host_paths, seed_data_volume, seed_node_pools
from tests.runai_spec import spec_errors
from tests.runapy_support import runapy_client
from tests.workloads.seed_bodies import INFERENCE_REQUEST, TRAINING_REQUEST, WORKSPACE_REQUEST
from workloads.models import MetricSample, Pod, Workload

pytestmark = pytest.mark.django_db(transaction=True)
# The seeds' examples carry two values that latest's patterns refuse; we echo them as the seeds publish them.
SEED_PATTERN_SLIPS = ("probes/readiness/handler/httpGet/path", "secret/name: 'postgress_secret'")


def checked(response, method, path):
    problems = [p for p in spec_errors(response.data, method, path, response.status_code)
                if not any(s in p for s in SEED_PATTERN_SLIPS)]
    assert not problems, "\n".join(problems)
    return response.data


def seed(org, body):
    body = copy.deepcopy(body)
    body.update(projectId=str(org.a.id), clusterId=str(org.cluster.id))
    return body


@pytest.fixture
def runai(live_server, org):
    org.a.gpu_deserved, org.a.gpu_limit = 10, 20
    org.a.save()
    allow_host_paths(org.a)  # seed 003 mounts a hostPath
    seed_node_pools(org.cluster)  # the seeds ask for my-node-pool-a and -b
    seed_data_volume(org.a)  # and mount a data volume
    return runapy_client(live_server.url, org.users.member).workloads


def test_runapy_drives_trainings_and_workspaces(runai, org):
    for api, create, path in ((runai.trainings, "create_training1", "trainings"),
                              (runai.workspaces, "create_workspace1", "workspaces")):
        noun = path[:-1]
        body = seed(org, TRAINING_REQUEST if path == "trainings" else WORKSPACE_REQUEST)
        created = checked(getattr(api, create)(body), "post", f"/api/v1/workloads/{path}")
        workload_id = created["workloadId"]
        item = f"/api/v1/workloads/{path}/{{workloadId}}"
        assert checked(getattr(api, f"get_{noun}")(workload_id), "get", item)["name"] == created["name"]
        assert getattr(api, f"suspend_{noun}")(workload_id).status_code == 202
        assert getattr(api, f"resume_{noun}")(workload_id).status_code == 202
        assert getattr(api, f"delete_{noun}")(workload_id).status_code == 204
        with pytest.raises(ApiException) as gone:
            getattr(api, f"get_{noun}")(workload_id)
        assert gone.value.status == 404


def test_runapy_drives_inferences(runai, org):
    api = runai.inferences
    created = checked(api.create_inference1(seed(org, INFERENCE_REQUEST)), "post", "/api/v1/workloads/inferences")
    workload_id = created["workloadId"]
    item = "/api/v1/workloads/inferences/{workloadId}"
    checked(api.get_inference(workload_id), "get", item)
    updated = api.update_inference_spec(workload_id, {"spec": {"image": "python:3.12"}})
    assert updated.status_code == 202 and checked(updated, "patch", item)["spec"]["image"] == "python:3.12"
    pod_uid = str(uuid.uuid4())
    Pod.objects.create(workload_id=workload_id, uid=pod_uid, name="serve-0", phase="Running",
                       created_at=timezone.now())
    start, end = timezone.now() - timedelta(minutes=5), timezone.now()
    MetricSample.objects.create(workload_id=workload_id, pod_name="serve-0", type="CPU_USAGE_CORES", value=1,
                                timestamp=start + timedelta(minutes=1))
    metrics = api.get_inference_workload_metrics(workload_id, ["CPU_USAGE_CORES", "THROUGHPUT"], start, end)
    checked(metrics, "get", "/api/v1/workloads/inferences/{workloadId}/metrics")
    pod_metrics = api.get_inference_workload_pod_metrics(workload_id, pod_uid, ["CPU_USAGE_CORES"], start, end)
    assert checked(pod_metrics, "get", "/api/v1/workloads/inferences/{workloadId}/pods/{podId}/metrics")[
        "measurements"][0]["values"][0]["value"] == "1"
    assert api.delete_inference(workload_id).status_code == 204


def test_runapy_drives_workloads_pods_and_events(runai, org):
    ids = [runai.trainings.create_training1(seed(org, TRAINING_REQUEST)).data["workloadId"],
           runai.inferences.create_inference1(seed(org, INFERENCE_REQUEST)).data["workloadId"]]
    Workload.objects.filter(pk=ids[0]).update(actual_phase="Running", started_at=timezone.now())
    pod_uid = str(uuid.uuid4())
    Pod.objects.create(workload_id=ids[0], uid=pod_uid, name="job-0", phase="Running", created_at=timezone.now())
    start, end = timezone.now() - timedelta(minutes=5), timezone.now()
    api = runai.workloads

    listed = checked(api.get_workloads(filter_by=["type==training", "phase==Running"], sort_by="name",
                                       sort_order="desc", limit=10), "get", "/api/v1/workloads")
    assert [w["id"] for w in listed["workloads"]] == [ids[0]]
    assert checked(api.count_workloads(filter_by=["allocatedGPU>=0.5"]), "get", "/api/v1/workloads/count") == {
        "count": 1}
    assert checked(api.get_workload(ids[1]), "get", "/api/v1/workloads/{workloadId}")["type"] == "inference"
    checked(api.get_workload_metrics(ids[0], ["CPU_USAGE_CORES", "GPU_ALLOCATION"], start, end),
            "get", "/api/v1/workloads/{workloadId}/metrics")
    pods = checked(runai.pods.get_workload_pods(ids[0]), "get", "/api/v1/workloads/{workloadId}/pods")
    assert [p["id"] for p in pods["pods"]] == [pod_uid]
    every = checked(runai.pods.list_pods(filter_by=[f"workloadId=={ids[0]}", "nodeName!=x"], sort_by="createdAt",
                                         sort_order="desc", verbosity="full", completed="false", search="job"),
                    "get", "/api/v1/workloads/pods")
    assert every["pods"] == pods["pods"]
    assert checked(runai.pods.count_pods(deleted=False, filter_by=["createdAt>=2020-01-01T00:00:00Z"]),
                   "get", "/api/v1/workloads/pods/count") == {"count": 1}
    checked(runai.pods.get_workload_pod_metrics(ids[0], pod_uid, ["CPU_USAGE_CORES"], start, end),
            "get", "/api/v1/workloads/{workloadId}/pods/{podId}/metrics")
    events = checked(runai.events.get_workload_events(ids[0], sort_order="asc"),
                     "get", "/api/v1/workloads/{workloadId}/events")
    assert events["events"][0]["reason"] == "Submitted"
    with pytest.raises(ApiException) as bad:
        api.get_workloads(filter_by=["nosuchfield==1"])
    assert bad.value.status == 400 and "nosuchfield" in bad.value.body


def test_runapy_drives_distributed_trainings(runai, org):
    """The Distributed tag: create (a PyTorch job of a master and two workers), get, suspend, resume, delete; the
    generic list shows its type and framework."""
    api = runai.distributed
    body = {"name": "dist", "projectId": str(org.a.id), "clusterId": str(org.cluster.id),
            "spec": {"image": "python:3.11", "distributedFramework": "PyTorch", "numWorkers": 2,
                     "compute": {"gpuDevicesRequest": 1}},
            "masterSpecSameAsWorker": True}
    created = checked(api.create_distributed(body), "post", "/api/v1/workloads/distributed")
    workload_id = created["workloadId"]
    item = "/api/v1/workloads/distributed/{workloadId}"
    got = checked(api.get_distributed(workload_id), "get", item)
    assert got["spec"]["numWorkers"] == 2 and got["masterSpecSameAsWorker"] is True
    listed = checked(runai.workloads.get_workloads(filter_by=["type==distributed"]), "get", "/api/v1/workloads")
    assert [(w["id"], w["distributedFramework"], w["requestedGpus"]) for w in listed["workloads"]] == [
        (workload_id, "PyTorch", 3.0)]
    assert api.suspend_distributed(workload_id).status_code == 202
    assert api.resume_distributed(workload_id).status_code == 202
    assert api.delete_distributed(workload_id).status_code == 204
    with pytest.raises(ApiException) as gone:
        api.get_distributed(workload_id)
    assert gone.value.status == 404
    with pytest.raises(ApiException) as bad:
        api.create_distributed({**body, "spec": {**body["spec"], "numWorkers": 0}})
    assert bad.value.status == 400 and "spec.numWorkers" in bad.value.body
