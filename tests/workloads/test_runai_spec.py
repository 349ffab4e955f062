"""Every operation of Run:ai's Workloads, Trainings, Workspaces and Inferences tags (and the workload pods,
events and pod metrics of its Pods and Events tags), answered as its OpenAPI documents define them."""

import copy
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.factories import allow_host_paths, seed_data_volume, seed_node_pools
from tests.runai_spec import assert_matches_spec, spec_errors
from tests.workloads.seed_bodies import INFERENCE_REQUEST, TRAINING_REQUEST, WORKSPACE_REQUEST
from workloads.models import MetricSample, Pod, Workload, WorkloadEvent

pytestmark = pytest.mark.django_db

KINDS = [("trainings", TRAINING_REQUEST), ("workspaces", WORKSPACE_REQUEST), ("inferences", INFERENCE_REQUEST)]
# The seeds' examples carry two values that latest's patterns refuse ("string" as a probe's path and
# "postgress_secret" as a secret's name); we accept and echo them as the seeds publish them.
SEED_PATTERN_SLIPS = ("probes/readiness/handler/httpGet/path", "secret/name: 'postgress_secret'")


@pytest.fixture
def member(client_for, org):
    org.a.gpu_deserved, org.a.gpu_limit = 10, 20
    org.a.save()
    allow_host_paths(org.a)  # seed 003 mounts a hostPath: allowed for this project by a platform admin
    seed_node_pools(org.cluster)  # the seeds ask for my-node-pool-a and -b
    seed_data_volume(org.a)  # and mount a data volume
    return client_for(org.users.member)


def create(member, org, path, seed):
    body = copy.deepcopy(seed)
    body.update(projectId=str(org.a.id), clusterId=str(org.cluster.id))
    response = member.post(f"/api/v1/workloads/{path}", body, format="json")
    assert response.status_code == 200, response.json()
    return response


def matches(response, method, path):
    problems = [p for p in spec_errors(response.json() if response.content else None, method, path,
                                       response.status_code) if not any(s in p for s in SEED_PATTERN_SLIPS)]
    assert not problems, f"{method.upper()} {path} differs from Run:ai's schema:\n" + "\n".join(problems)


@pytest.mark.parametrize("path,seed", KINDS, ids=[k for k, _ in KINDS])
def test_create_get_suspend_resume_delete_of_each_kind(member, org, path, seed):
    created = create(member, org, path, seed)
    matches(created, "post", f"/api/v1/workloads/{path}")
    assert created.json()["projectId"] == str(org.a.id) and created.json()["departmentId"] == str(org.department.id)
    url = f"/api/v1/workloads/{path}/{created.json()['workloadId']}"
    matches(member.get(url), "get", f"/api/v1/workloads/{path}/{{workloadId}}")
    if path != "inferences":
        for verb in ("suspend", "resume"):
            response = member.post(f"{url}/{verb}")
            assert response.status_code == 202
            assert_matches_spec(response, "post", f"/api/v1/workloads/{path}/{{workloadId}}/{verb}")
    deleted = member.delete(url)
    assert deleted.status_code == 204
    assert_matches_spec(deleted, "delete", f"/api/v1/workloads/{path}/{{workloadId}}")


def test_list_count_get_pods_events_metrics(member, org):
    ids = [create(member, org, path, seed).json()["workloadId"] for path, seed in KINDS]
    workload = Workload.objects.get(pk=ids[0])
    Workload.objects.filter(pk=workload.pk).update(actual_phase="Running", started_at=timezone.now(), running_pods=1)
    pod_uid = str(uuid.uuid4())
    Pod.objects.create(workload=workload, uid=pod_uid, name="job-0", phase="Running", node_name="node-0",
                       created_at=timezone.now())
    WorkloadEvent.objects.create(workload=workload, at=timezone.now(), reason="Running", message="Started",
                                 phase="Running")
    start = timezone.now() - timedelta(minutes=5)
    MetricSample.objects.create(workload=workload, pod_name="job-0", type="CPU_USAGE_CORES", value=0.5,
                                timestamp=start + timedelta(minutes=1))

    listed = member.get("/api/v1/workloads")
    assert {w["id"] for w in listed.json()["workloads"]} == set(ids) and "next" not in listed.json()
    assert_matches_spec(listed, "get", "/api/v1/workloads")
    first_page = member.get("/api/v1/workloads?limit=2")
    assert first_page.json()["next"] == 2
    assert_matches_spec(first_page, "get", "/api/v1/workloads")
    assert_matches_spec(member.get("/api/v1/workloads/count?filterBy=type==training"), "get", "/api/v1/workloads/count")
    got = member.get(f"/api/v1/workloads/{workload.pk}")
    assert_matches_spec(got, "get", "/api/v1/workloads/{workloadId}")
    body = got.json()
    assert (body["namespace"], body["departmentName"], body["k8sPhase"]) == (org.a.namespace, "research", "Running")
    assert body["requestedPods"] == {"number": 1, "completions": 1, "parallelism": 1}
    assert body["allocatedResources"] == {"gpu": 0.5} and body["images"] == ["python:3.8"]

    pods = member.get(f"/api/v1/workloads/{workload.pk}/pods")
    assert_matches_spec(pods, "get", "/api/v1/workloads/{workloadId}/pods")
    pod = pods.json()["pods"][0]
    assert (pod["id"], pod["workloadId"], pod["clusterId"]) == (pod_uid, str(workload.pk), str(org.cluster.id))
    assert pod["containers"] == [{"name": "main", "image": "python:3.8"}]

    events = member.get(f"/api/v1/workloads/{workload.pk}/events")
    assert_matches_spec(events, "get", "/api/v1/workloads/{workloadId}/events")
    assert events.json()["events"][0]["clusterId"] == str(org.cluster.id)
    oldest_first = member.get(f"/api/v1/workloads/{workload.pk}/events?sortOrder=asc").json()["events"]
    assert [e["id"] for e in oldest_first] == [e["id"] for e in reversed(events.json()["events"])]

    query = {"metricType": "CPU_USAGE_CORES,POD_COUNT", "start": start.isoformat(), "end": timezone.now().isoformat()}
    metrics = member.get(f"/api/v1/workloads/{workload.pk}/metrics", query)
    assert_matches_spec(metrics, "get", "/api/v1/workloads/{workloadId}/metrics")
    pod_metrics = member.get(f"/api/v1/workloads/{workload.pk}/pods/{pod_uid}/metrics",
                             {**query, "metricType": "CPU_USAGE_CORES,GPU_UTILIZATION"})
    assert pod_metrics.status_code == 207  # GPU utilisation needs the cluster's Prometheus
    assert_matches_spec(pod_metrics, "get", "/api/v1/workloads/{workloadId}/pods/{podId}/metrics")
    assert [v["value"] for v in pod_metrics.json()["measurements"][0]["values"]] == ["0.5"]
    refused = member.get(f"/api/v1/workloads/{workload.pk}/pods/{pod_uid}/metrics",
                         {**query, "metricType": "GPU_SM_ACTIVITY_PER_GPU"})
    assert refused.status_code == 400 and "GPU_SM_ACTIVITY_PER_GPU" in refused.json()["errors"][0]["message"]
    assert member.get(f"/api/v1/workloads/{workload.pk}/pods/nope/metrics", query).status_code == 404
    inference = ids[2]
    query["metricType"] = "THROUGHPUT,LATENCY"
    assert_matches_spec(member.get(f"/api/v1/workloads/inferences/{inference}/metrics", query),
                        "get", "/api/v1/workloads/inferences/{workloadId}/metrics")


def test_pods_are_paged_and_searched(member, org):
    workload_id = create(member, org, "trainings", {**TRAINING_REQUEST, "spec": {"image": "python:3.11"}}).json()[
        "workloadId"]
    workload = Workload.objects.get(pk=workload_id)
    for i in range(3):
        Pod.objects.create(workload=workload, uid=str(uuid.uuid4()), name=f"job-{i}", phase="Running",
                           created_at=timezone.now() + timedelta(seconds=i))
    first = member.get(f"/api/v1/workloads/{workload_id}/pods?limit=2")
    assert [p["name"] for p in first.json()["pods"]] == ["job-0", "job-1"] and first.json()["next"] == 2
    assert_matches_spec(first, "get", "/api/v1/workloads/{workloadId}/pods")
    last = member.get(f"/api/v1/workloads/{workload_id}/pods?limit=2&offset=2").json()
    assert [p["name"] for p in last["pods"]] == ["job-2"] and "next" not in last
    assert [p["name"] for p in member.get(f"/api/v1/workloads/{workload_id}/pods?search=B-1").json()["pods"]] == [
        "job-1"]
