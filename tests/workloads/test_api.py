"""The workloads API through HTTP: the seeds' bodies, codes, roles, lists, events and metrics."""

import copy
import json
import random
import re
import string
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.factories import allow_host_paths, seed_data_volume, seed_node_pools
from tests.workloads.seed_bodies import INFERENCE_REQUEST, TRAINING_REQUEST, WORKSPACE_REQUEST
from workloads.models import MetricSample, Pod, Workload

pytestmark = pytest.mark.django_db

KINDS = [("trainings", TRAINING_REQUEST), ("workspaces", WORKSPACE_REQUEST), ("inferences", INFERENCE_REQUEST)]


def body_for(org, seed, **changes):
    body = copy.deepcopy(seed)
    body.update(projectId=org.a.id, clusterId=str(org.cluster.id), **changes)
    return body


def small(org, name="job", **spec_changes):
    """A training with no GPUs, so quotas never get in the way."""
    spec = {"image": "python:3.11", "command": "python", "args": "-c 'print(1)'", **spec_changes}
    return {"name": name, "projectId": org.a.id, "clusterId": str(org.cluster.id), "spec": spec}


@pytest.fixture
def member(client_for, org):
    org.a.gpu_deserved, org.a.gpu_limit = 10, 20
    org.a.save()
    allow_host_paths(org.a)  # seed 003 mounts a hostPath: allowed for this project by a platform admin
    seed_node_pools(org.cluster)  # the seeds ask for my-node-pool-a and -b
    seed_data_volume(org.a)  # and mount a data volume
    return client_for(org.users.member)


@pytest.mark.parametrize("path,seed", KINDS, ids=[k for k, _ in KINDS])
def test_seed_bodies_create_and_echo_the_seed_shape(member, org, path, seed):
    response = member.post(f"/api/v1/workloads/{path}", body_for(org, seed), format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert set(body) == {"name", "requestedName", "workloadId", "projectId", "departmentId", "clusterId",
                         "createdBy", "createdAt", "desiredPhase", "actualPhase", "spec"}
    assert re.fullmatch(r"my-workload-name-[a-z]{5}", body["name"])
    assert body["requestedName"] == "my-workload-name"
    # Strings, as Run:ai's spec types them (the seeds show 1 because its renderer prints the example).
    assert body["projectId"] == str(org.a.id) and body["departmentId"] == str(org.department.id)
    assert body["clusterId"] == str(org.cluster.id) and body["createdBy"] == "bob@example.com"
    assert (body["desiredPhase"], body["actualPhase"]) == ("Running", "Creating")
    # The seed's spec comes back as sent, but for the extended resource's quantity, which the spec types as a
    # string (the seed sends the number 2).
    sent = copy.deepcopy(seed["spec"])
    for resource in sent.get("compute", {}).get("extendedResources", []):
        resource["quantity"] = str(resource["quantity"])
    assert json.dumps(body["spec"], sort_keys=True) == json.dumps(
        {**sent, **{k: v for k, v in body["spec"].items() if k not in sent}}, sort_keys=True
    )
    for key, value in sent.items():
        assert body["spec"][key] == value

    got = member.get(f"/api/v1/workloads/{path}/{body['workloadId']}")
    assert got.status_code == 200 and got.json() == body


@pytest.mark.parametrize("path,seed", KINDS, ids=[k for k, _ in KINDS])
def test_delete_is_204_then_404_and_listed_as_deleted(member, org, path, seed):
    created = member.post(f"/api/v1/workloads/{path}", body_for(org, seed), format="json").json()
    url = f"/api/v1/workloads/{path}/{created['workloadId']}"
    assert member.delete(url).status_code == 204
    assert member.get(url).status_code == 404
    assert member.get(f"/api/v1/workloads/{created['workloadId']}").status_code == 404
    assert member.get("/api/v1/workloads").json()["workloads"] == []
    deleted = member.get("/api/v1/workloads?deleted=true").json()["workloads"]
    assert [(w["id"], w["desiredPhase"], w["phase"]) for w in deleted] == [
        (created["workloadId"], "Deleted", "Deleting")
    ]
    # The name is free again once the workload is deleted.
    again = member.post(f"/api/v1/workloads/{path}", body_for(org, seed, useGivenNameAsPrefix=False), format="json")
    assert again.status_code == 200


def test_given_name_without_prefix_is_kept_and_a_second_live_one_is_409(member, org):
    first = member.post("/api/v1/workloads/trainings", small(org, "exact"), format="json")
    assert first.status_code == 200 and first.json()["name"] == "exact"
    second = member.post("/api/v1/workloads/trainings", small(org, "exact"), format="json")
    assert second.status_code == 409
    assert second.json()["code"] == 409 and "exact" in second.json()["message"]


def test_a_generated_name_that_is_taken_is_drawn_again_never_a_409(member, org, settings):
    # With a fixed seed every submission draws the same suffixes in the same order, so each one meets the
    # names of the earlier ones: the first draw of the second submission collides, and so on.
    settings.WORKLOAD_NAME_SEED = 1234
    draws = random.Random(1234)
    expected = [f"job-{''.join(draws.choices(string.ascii_lowercase, k=5))}" for _ in range(3)]
    names = []
    for _ in range(3):
        answer = member.post("/api/v1/workloads/trainings", {**small(org), "useGivenNameAsPrefix": True}, format="json")
        assert answer.status_code == 200, answer.json()
        names.append(answer.json()["name"])
    assert names == expected
    assert sorted(Workload.objects.filter(project=org.a).values_list("name", flat=True)) == sorted(expected)


def test_generated_names_give_up_with_a_409_only_when_every_draw_is_taken(member, org, settings):
    from workloads.services import NAME_ATTEMPTS

    settings.WORKLOAD_NAME_SEED = 99
    for _ in range(NAME_ATTEMPTS):
        body = {**small(org), "useGivenNameAsPrefix": True}
        assert member.post("/api/v1/workloads/trainings", body, format="json").status_code == 200
    refused = member.post("/api/v1/workloads/trainings", {**small(org), "useGivenNameAsPrefix": True}, format="json")
    assert refused.status_code == 409
    assert refused.json()["message"] == (f"No free name with prefix 'job' in project {org.a.name} after "
                                         f"{NAME_ATTEMPTS} attempts.")


@pytest.mark.parametrize(
    "spec_changes,field",
    [
        ({"image": ""}, "spec.image"),
        ({"imagee": "x"}, "spec.imagee"),
        ({"compute": {"gpuDevicesRequest": 1, "gpuRequestType": "portion", "gpuPortionRequest": 1.5}},
         "spec.compute.gpuPortionRequest"),
        ({"compute": {"gpuDevicesRequest": 2, "gpuRequestType": "memory", "gpuMemoryRequest": "1Gi"}},
         "spec.compute.gpuRequestType"),
        ({"compute": {"cpuMemoryRequest": "1 Gi"}}, "spec.compute.cpuMemoryRequest"),
        ({"compute": {"cpuMemoryRequest": "NaN"}}, "spec.compute.cpuMemoryRequest"),
        ({"compute": {"cpuMemoryRequest": "-1"}}, "spec.compute.cpuMemoryRequest"),
        ({"compute": {"cpuCoreRequest": 2, "cpuCoreLimit": 1}}, "spec.compute.cpuCoreLimit"),
        ({"compute": {"gpuDevicesRequest": 1, "gpuRequestType": "migProfile", "migProfile": "9g.99gb"}},
         "spec.compute.migProfile"),
        ({"ports": [{"container": 70000}]}, "spec.ports[0].container"),
        ({"storage": {"pvc": [{"claimName": "c", "path": "/d", "claimInfo": {"size": "1 G"}}]}},
         "spec.storage.pvc[0].claimInfo.size"),
        ({"security": {"capabilities": ["FLY"]}}, "spec.security.capabilities[0]"),
        ({"completions": 0}, "spec.completions"),
    ],
)
def test_malformed_field_is_400_naming_it(member, org, spec_changes, field):
    response = member.post("/api/v1/workloads/trainings", small(org, **spec_changes), format="json")
    assert response.status_code == 400, response.json()
    body = response.json()
    assert body["code"] == 400 and body["message"]
    assert field in [e["field"] for e in body["errors"]]


def test_bad_top_level_fields_each_named(member, org):
    response = member.post(
        "/api/v1/workloads/trainings", {"name": "Bad Name", "projectId": "x", "clusterId": "nope"}, format="json"
    )
    assert response.status_code == 400
    assert {e["field"] for e in response.json()["errors"]} >= {"name", "projectId", "clusterId", "spec"}


def test_inference_autoscaling_rules(member, org):
    body = body_for(org, INFERENCE_REQUEST)
    body["spec"]["autoscaling"] = {"minReplicas": 2, "maxReplicas": 1, "scaleToZeroRetentionSeconds": 10}
    response = member.post("/api/v1/workloads/inferences", body, format="json")
    assert response.status_code == 400
    fields = {e["field"] for e in response.json()["errors"]}
    assert {"spec.autoscaling.maxReplicas", "spec.autoscaling.scaleToZeroRetentionSeconds"} <= fields


def test_wrong_cluster_for_the_project_is_400(member, org):
    response = member.post("/api/v1/workloads/trainings",
                           {**small(org), "clusterId": "71f69d83-ba66-4822-adf5-55ce55efd210"}, format="json")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "clusterId"


def test_submitting_into_another_project_is_refused(client_for, org):
    response = client_for(org.users.other).post("/api/v1/workloads/trainings", small(org), format="json")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "projectId"


def test_workload_of_another_project_is_404(member, client_for, org):
    created = member.post("/api/v1/workloads/trainings", small(org), format="json").json()
    outsider = client_for(org.users.other)
    for url in [f"/api/v1/workloads/trainings/{created['workloadId']}", f"/api/v1/workloads/{created['workloadId']}",
                f"/api/v1/workloads/{created['workloadId']}/events", f"/api/v1/workloads/{created['workloadId']}/pods"]:
        response = outsider.get(url)
        assert response.status_code == 404 and response.json()["code"] == 404
    assert outsider.delete(f"/api/v1/workloads/trainings/{created['workloadId']}").status_code == 404
    assert outsider.post(f"/api/v1/workloads/trainings/{created['workloadId']}/suspend").status_code == 404
    assert outsider.get("/api/v1/workloads").json()["workloads"] == []


def test_viewer_reads_but_may_not_submit_suspend_or_delete(member, client_for, org):
    created = member.post("/api/v1/workloads/trainings", small(org), format="json").json()
    viewer = client_for(org.users.viewer)
    assert viewer.get(f"/api/v1/workloads/trainings/{created['workloadId']}").status_code == 200
    assert viewer.post("/api/v1/workloads/trainings", small(org, "v"), format="json").status_code == 403
    response = viewer.post(f"/api/v1/workloads/trainings/{created['workloadId']}/suspend")
    assert response.status_code == 403 and response.json()["code"] == 403
    assert viewer.delete(f"/api/v1/workloads/trainings/{created['workloadId']}").status_code == 403


def test_suspend_and_resume_are_202_and_record_events(member, org):
    created = member.post("/api/v1/workloads/trainings", small(org), format="json").json()
    wid = created["workloadId"]
    response = member.post(f"/api/v1/workloads/trainings/{wid}/suspend")
    assert response.status_code == 202
    assert response.json() == {"code": 202, "message": "Request has been accepted."}
    got = member.get(f"/api/v1/workloads/trainings/{wid}").json()
    assert (got["desiredPhase"], got["actualPhase"]) == ("Stopped", "Stopping")
    assert member.post(f"/api/v1/workloads/trainings/{wid}/resume").status_code == 202
    got = member.get(f"/api/v1/workloads/trainings/{wid}").json()
    assert (got["desiredPhase"], got["actualPhase"]) == ("Running", "Resuming")
    reasons = [e["reason"] for e in member.get(f"/api/v1/workloads/{wid}/events").json()["events"]]
    assert reasons == ["Resume", "Suspend", "Submitted"]


def test_suspend_enqueues_the_cluster_work_on_commit(member, org, django_capture_on_commit_callbacks):
    created = member.post("/api/v1/workloads/trainings", small(org), format="json").json()
    with django_capture_on_commit_callbacks() as callbacks:
        member.post(f"/api/v1/workloads/trainings/{created['workloadId']}/suspend")
    assert len(callbacks) == 1


def test_suspend_of_an_inference_is_400(member, org):
    created = member.post("/api/v1/workloads/inferences", body_for(org, INFERENCE_REQUEST), format="json").json()
    for verb in ("suspend", "resume"):
        response = member.post(f"/api/v1/workloads/inferences/{created['workloadId']}/{verb}")
        assert response.status_code == 400
        assert "Only trainings, distributed trainings and workspaces" in response.json()["errors"][0]["message"]


def test_suspend_of_a_finished_workload_is_400(member, org):
    created = member.post("/api/v1/workloads/trainings", small(org), format="json").json()
    Workload.objects.filter(pk=created["workloadId"]).update(actual_phase="Completed")
    response = member.post(f"/api/v1/workloads/trainings/{created['workloadId']}/suspend")
    assert response.status_code == 400
    assert "finished" in response.json()["errors"][0]["message"]


def test_quota_inference_stays_within_deserved_training_may_go_to_limit(client_for, org):
    org.a.gpu_deserved, org.a.gpu_limit = 2, 3
    org.a.save()
    api = client_for(org.users.member)

    def gpus(name, n, kind="trainings"):
        body = small(org, name, compute={"gpuDevicesRequest": n})
        if kind == "inferences":
            body["spec"].pop("args")
        return api.post(f"/api/v1/workloads/{kind}", body, format="json")

    assert gpus("inf1", 2, "inferences").status_code == 200
    refused = gpus("inf2", 1, "inferences")
    assert refused.status_code == 400 and "deserved" in refused.json()["errors"][0]["message"]
    assert gpus("train1", 1).status_code == 200  # over deserved, within limit
    over = gpus("train2", 1)
    assert over.status_code == 400 and "limit" in over.json()["errors"][0]["message"]


def test_generic_workload_view_pods_and_count(member, org):
    created = member.post("/api/v1/workloads/trainings", small(org), format="json").json()
    wid = created["workloadId"]
    workload = Workload.objects.get(pk=wid)
    Pod.objects.create(workload=workload, uid="u-1", name="job-abc", phase="Running", node_name="n0",
                       created_at=timezone.now())
    got = member.get(f"/api/v1/workloads/{wid}").json()
    assert got["id"] == wid and got["type"] == "training" and got["projectName"] == "alpha"
    assert got["phase"] == "Creating" and got["submittedBy"] == "bob@example.com"
    pods = member.get(f"/api/v1/workloads/{wid}/pods").json()["pods"]
    # Run:ai's pod fields (tests/workloads/test_runai_spec.py checks them all against its schema) and ours.
    assert {k: pods[0][k] for k in ("id", "name", "phase", "nodeName", "message", "workloadId")} == {
        "id": "u-1", "name": "job-abc", "phase": "Running", "nodeName": "n0", "message": "", "workloadId": wid}
    assert len(pods) == 1 and pods[0]["createdAt"]
    assert member.get("/api/v1/workloads/count").json() == {"count": 1}
    assert member.get("/api/v1/workloads/count?filterBy=type==inference").json() == {"count": 0}


@pytest.fixture
def many(member, org):
    for i, (kind, phase) in enumerate([("training", "Running"), ("inference", "Pending"), ("workspace", "Running"),
                                       ("training", "Completed"), ("training", "Failed")]):
        Workload.objects.create(
            kind=kind, name=f"w{i}", requested_name=f"w{i}", project=org.a, department=org.department,
            cluster=org.cluster, created_by_name=f"user{i % 2}", actual_phase=phase,
            created_at=timezone.now(),
        )
    return member


@pytest.mark.parametrize(
    "query,expected",
    [
        ("?sortBy=name", ["w0", "w1", "w2", "w3", "w4"]),
        ("?sortBy=name&sortOrder=desc", ["w4", "w3", "w2", "w1", "w0"]),
        ("?filterBy=type==training&sortBy=name", ["w0", "w3", "w4"]),
        ("?filterBy=phase==Running&sortBy=name", ["w0", "w2"]),
        ("?filterBy=phase!=Running&filterBy=type==training&sortBy=name", ["w3", "w4"]),
        ("?filterBy=submittedBy=@user1&sortBy=name", ["w1", "w3"]),
        ("?filterBy=name=^w&sortBy=name&limit=2", ["w0", "w1"]),
        ("?sortBy=name&limit=2&offset=4", ["w4"]),
        ("?search=W2", ["w2"]),
        ("?filterBy=projectName==beta", []),
    ],
)
def test_list_filter_sort_page(many, query, expected):
    response = many.get("/api/v1/workloads" + query)
    assert response.status_code == 200, response.json()
    assert [w["name"] for w in response.json()["workloads"]] == expected


def test_list_next_offset(many):
    assert many.get("/api/v1/workloads?limit=2").json()["next"] == 2
    # Run:ai's spec types `next` as an integer: the last page has none.
    assert "next" not in many.get("/api/v1/workloads?limit=2&offset=4").json()


def test_bad_filter_is_400(many):
    response = many.get("/api/v1/workloads?filterBy=spec==x")
    assert response.status_code == 400 and response.json()["errors"][0]["field"] == "filterBy"


def test_list_query_count_is_the_same_for_1_and_100_workloads(client_for, org, django_assert_num_queries):
    api = client_for(org.users.member)

    def make(n, start):
        Workload.objects.bulk_create([
            Workload(kind="training", name=f"bulk{start + i}", requested_name="bulk", project=org.a,
                     department=org.department, cluster=org.cluster, created_by_name="bob")
            for i in range(n)
        ])

    make(1, 0)
    with CaptureQueriesContext(connection) as one:
        assert len(api.get("/api/v1/workloads?limit=500").json()["workloads"]) == 1
    make(99, 1)
    with django_assert_num_queries(len(one.captured_queries)):
        assert len(api.get("/api/v1/workloads?limit=500").json()["workloads"]) == 100


def test_a_submission_makes_a_fixed_number_of_queries_whatever_the_history(member, org):
    def statements(body):
        with CaptureQueriesContext(connection) as queries:
            assert member.post("/api/v1/workloads/trainings", body, format="json").status_code == 200
        return [q["sql"].split()[0] for q in queries.captured_queries]

    # The token's user, the caller's access rules, the project, its policies; then the row, its event and its
    # audit record (in a savepoint here, as the test runs in a transaction). A GPU adds the project's lock and
    # the quota sum.
    without_gpu = ["SELECT", "SELECT", "SELECT", "SELECT", "SAVEPOINT", "INSERT", "INSERT", "INSERT", "RELEASE"]
    with_gpu = without_gpu[:5] + ["SELECT", "SELECT"] + without_gpu[5:]
    assert statements(small(org, "a")) == without_gpu
    assert statements(small(org, "b", compute={"gpuDevicesRequest": 1})) == with_gpu
    Workload.objects.bulk_create([
        Workload(kind="training", name=f"old{i}", requested_name="old", project=org.a, department=org.department,
                 cluster=org.cluster, created_by_name="bob", gpu_request=1 if i % 20 == 0 else 0)
        for i in range(100)])
    assert statements(small(org, "c")) == without_gpu
    assert statements(small(org, "d", compute={"gpuDevicesRequest": 1})) == with_gpu


def _samples(workload, type_, values, start, pod_name=""):
    MetricSample.objects.bulk_create([
        MetricSample(workload=workload, type=type_, value=v, timestamp=start + timedelta(seconds=10 * i),
                     labels={"gpu": "0"} if type_.startswith("GPU") else {}, pod_name=pod_name)
        for i, v in enumerate(values)
    ])


def test_metrics_reduce_to_number_of_samples(member, org):
    created = member.post("/api/v1/workloads/trainings", small(org), format="json").json()
    workload = Workload.objects.get(pk=created["workloadId"])
    start = timezone.now().replace(microsecond=0) - timedelta(minutes=10)
    _samples(workload, "CPU_USAGE_CORES", [1, 3, 5, 7], start)
    params = {"metricType": ["CPU_USAGE_CORES", "POD_COUNT"], "start": start.isoformat(),
              "end": (start + timedelta(seconds=40)).isoformat(), "numberOfSamples": 2}
    response = member.get(f"/api/v1/workloads/{created['workloadId']}/metrics", params)
    assert response.status_code == 200
    cpu, pods = response.json()["measurements"]
    assert cpu["type"] == "CPU_USAGE_CORES" and [v["value"] for v in cpu["values"]] == ["2", "6"]
    assert pods == {"type": "POD_COUNT", "labels": {}, "values": []}
    every = member.get(f"/api/v1/workloads/{created['workloadId']}/metrics", {**params, "numberOfSamples": 0})
    assert [v["value"] for v in every.json()["measurements"][0]["values"]] == ["1", "3", "5", "7"]


def test_metrics_without_prometheus_are_207_and_alias_allocated_gpu(member, org):
    created = member.post("/api/v1/workloads/inferences", body_for(org, INFERENCE_REQUEST), format="json").json()
    workload = Workload.objects.get(pk=created["workloadId"])
    start = timezone.now() - timedelta(minutes=5)
    _samples(workload, "GPU_ALLOCATION", [0.5, 0.5], start)
    params = {"metricType": ["ALLOCATED_GPU", "GPU_UTILIZATION", "THROUGHPUT"], "start": start.isoformat(),
              "end": timezone.now().isoformat()}
    response = member.get(f"/api/v1/workloads/inferences/{created['workloadId']}/metrics", params)
    assert response.status_code == 207
    allocated = response.json()["measurements"][0]
    assert allocated["type"] == "ALLOCATED_GPU" and allocated["labels"] == {"gpu": "0"}
    assert allocated["values"][0]["value"] == "0.5"
    org.cluster.prometheus_url = "http://prometheus.example"
    org.cluster.save()
    assert member.get(f"/api/v1/workloads/inferences/{created['workloadId']}/metrics", params).status_code == 200


def test_pod_metrics(member, org):
    created = member.post("/api/v1/workloads/inferences", body_for(org, INFERENCE_REQUEST), format="json").json()
    workload = Workload.objects.get(pk=created["workloadId"])
    Pod.objects.create(workload=workload, uid="pod-uid-1", name="inf-pod-1", phase="Running")
    start = timezone.now() - timedelta(minutes=5)
    _samples(workload, "CPU_USAGE_CORES", [0.25], start, pod_name="inf-pod-1")
    params = {"metricType": "CPU_USAGE_CORES", "start": start.isoformat(), "end": timezone.now().isoformat()}
    url = f"/api/v1/workloads/inferences/{created['workloadId']}/pods/pod-uid-1/metrics"
    assert member.get(url, params).json()["measurements"][0]["values"][0]["value"] == "0.25"
    assert member.get(url.replace("pod-uid-1", "nope"), params).status_code == 404


@pytest.mark.parametrize(
    "params,field",
    [
        ({"start": "2026-01-01T00:00:00Z", "end": "2026-01-02T00:00:00Z"}, "metricType"),
        ({"metricType": "NOPE", "start": "2026-01-01T00:00:00Z", "end": "2026-01-02T00:00:00Z"}, "metricType"),
        ({"metricType": "POD_COUNT", "end": "2026-01-02T00:00:00Z"}, "start"),
        ({"metricType": "POD_COUNT", "start": "yesterday", "end": "2026-01-02T00:00:00Z"}, "start"),
        ({"metricType": "POD_COUNT", "start": "2026-01-03T00:00:00Z", "end": "2026-01-02T00:00:00Z"}, "end"),
        ({"metricType": "POD_COUNT", "start": "2026-01-01T00:00:00Z", "end": "2026-01-02T00:00:00Z",
          "numberOfSamples": 1001}, "numberOfSamples"),
        ({"metricType": "THROUGHPUT", "start": "2026-01-01T00:00:00Z", "end": "2026-01-02T00:00:00Z"}, "metricType"),
    ],
)
def test_bad_metrics_query_is_400(member, org, params, field):
    created = member.post("/api/v1/workloads/trainings", small(org), format="json").json()
    response = member.get(f"/api/v1/workloads/{created['workloadId']}/metrics", params)
    assert response.status_code == 400
    assert field in [e["field"] for e in response.json()["errors"]]


def test_schema_documents_every_workload_endpoint(client):
    paths = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()["paths"]
    for path in [
        "/api/v1/workloads/trainings", "/api/v1/workloads/trainings/{workloadId}",
        "/api/v1/workloads/trainings/{workloadId}/suspend", "/api/v1/workloads/trainings/{workloadId}/resume",
        "/api/v1/workloads/workspaces", "/api/v1/workloads/workspaces/{workloadId}/suspend",
        "/api/v1/workloads/inferences", "/api/v1/workloads/inferences/{workloadId}/metrics",
        "/api/v1/workloads/inferences/{workloadId}/pods/{podId}/metrics",
        "/api/v1/workloads", "/api/v1/workloads/count", "/api/v1/workloads/{workloadId}",
        "/api/v1/workloads/{workloadId}/pods", "/api/v1/workloads/{workloadId}/events",
        "/api/v1/workloads/{workloadId}/metrics",
    ]:
        assert path in paths, path


@pytest.mark.parametrize("who", ["member", "platform_admin"])
def test_a_project_id_beyond_the_columns_range_is_no_such_project_for_anyone(client_for, org, member, who):
    client = member if who == "member" else client_for(org.users.platform_admin)
    for project_id in (2**63, 2**70, str(2**80)):
        response = client.post("/api/v1/workloads/trainings", {**small(org), "projectId": project_id}, format="json")
        assert response.status_code == 400, response.content
        assert [e["field"] for e in response.json()["errors"]] == ["projectId"]


@pytest.mark.parametrize("path,seed", KINDS, ids=[k for k, _ in KINDS])
def test_the_create_answer_is_what_its_declared_fields_render(member, org, path, seed):
    """Written out by hand for speed, the answer stays what DRF's declared fields render, key for key and in order
    (the seeds' extended resources' quantities answered as strings too)."""
    from rest_framework import serializers

    from workloads.api.serializers import WorkloadCreatedSerializer

    response = member.post(f"/api/v1/workloads/{path}", body_for(org, seed), format="json")
    assert response.status_code == 200, response.content
    workload = Workload.objects.get(pk=response.json()["workloadId"])
    declared = serializers.Serializer.to_representation(WorkloadCreatedSerializer(), workload)
    assert list(response.json().items()) == list(json.loads(json.dumps(declared)).items())
    assert list(member.get(f"/api/v1/workloads/{path}/{workload.pk}").json().items()) == list(
        json.loads(json.dumps(declared)).items())
