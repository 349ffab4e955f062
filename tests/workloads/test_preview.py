"""Launch preview (`?dryRun=true`) through HTTP against kubesim over HTTP: the objects a launch would create,
each with the cluster's own dry-run verdict, the quota and policy decisions — and nothing created, neither a
row nor a cluster object (looked at with the official client, as kubectl would)."""

import pytest
from kubernetes import client

from studio.models import AuditEvent, Level
from tests.factories import MembershipFactory, UserFactory
from tests.workloads.cluster_support import training_body
from workloads.models import Workload, WorkloadEvent

pytestmark = pytest.mark.django_db(transaction=True)


def preview(org, path: str, body: dict, api=None):
    return (api or org.api).post(f"/api/v1/workloads/{path}?dryRun=true", body, format="json")


def make_namespace(org) -> None:
    client.CoreV1Api(org.k8s).create_namespace({"metadata": {"name": org.namespace}})


def nothing_written() -> tuple:
    return Workload.objects.count(), WorkloadEvent.objects.count(), AuditEvent.objects.count()


def cluster_jobs(org) -> list:
    return client.BatchV1Api(org.k8s).list_namespaced_job(org.namespace).items


def test_a_valid_preview_lists_the_objects_with_the_cluster_verdict_and_creates_nothing(sim_org):
    make_namespace(sim_org)
    before = nothing_written()
    response = preview(sim_org, "trainings", training_body(sim_org.project, "train", compute={"gpuDevicesRequest": 2}))
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["dryRun"] is True and body["name"] == "train"
    [job] = body["objects"]
    assert (job["apiVersion"], job["kind"], job["namespace"]) == ("batch/v1", "Job", sim_org.namespace)
    assert job["name"].startswith("train-") and job["manifest"]["metadata"]["name"] == job["name"]
    assert job["verdict"] == {"allowed": True, "code": 201, "reason": "", "message": "The cluster would accept it."}
    container = job["manifest"]["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"]["nvidia.com/gpu"] in (2, "2")
    assert body["quota"] == {"allowed": True, "project": sim_org.project.name, "requested": 2.0, "deserved": 64.0,
                             "limit": 64.0, "used": 0.0, "allocated": 0.0, "message": "Within the project's GPU quota."}
    assert body["policy"] == {"allowed": True, "violations": []}
    assert nothing_written() == before
    assert cluster_jobs(sim_org) == []


def test_a_namespace_not_made_yet_is_previewed_itself_and_the_rest_is_not_checked(sim_org):
    response = preview(sim_org, "workspaces", {**training_body(sim_org.project, "lab"),
                                               "spec": {"image": "jupyter/base-notebook",
                                                        "ports": [{"container": 8888}]}})
    assert response.status_code == 200, response.json()
    objects = response.json()["objects"]
    assert [o["kind"] for o in objects] == ["Namespace", "Deployment", "Service"]
    assert objects[0]["verdict"]["allowed"] is True
    for obj in objects[1:]:
        assert obj["verdict"]["allowed"] is None and obj["verdict"]["reason"] == "NamespaceNotFound"
    with pytest.raises(client.ApiException) as missing:
        client.CoreV1Api(sim_org.k8s).read_namespace(sim_org.namespace)
    assert missing.value.status == 404


def test_an_object_the_cluster_refuses_shows_the_server_reason(sim_org):
    make_namespace(sim_org)
    body = {**training_body(sim_org.project, "lab"),
            "spec": {"image": "jupyter/base-notebook",
                     "ports": [{"container": 8888, "serviceType": "NodePort", "external": 8080}]}}
    response = preview(sim_org, "workspaces", body)
    assert response.status_code == 200, response.json()
    verdicts = {o["kind"]: o["verdict"] for o in response.json()["objects"]}
    assert verdicts["Deployment"]["allowed"] is True
    refused = verdicts["Service"]
    assert refused["allowed"] is False and refused["code"] == 422 and refused["reason"] == "Invalid"
    assert "spec.ports[0].nodePort" in refused["message"] and "30000-32767" in refused["message"]
    assert client.CoreV1Api(sim_org.k8s).list_namespaced_service(sim_org.namespace).items == []


def test_a_preview_over_quota_says_so_with_the_numbers(sim_org):
    make_namespace(sim_org)
    sim_org.project.gpu_deserved = 4
    sim_org.project.save()
    body = {**training_body(sim_org.project, "big"), "spec": {"image": "jupyter/base-notebook",
                                                              "compute": {"gpuDevicesRequest": 6}}}
    response = preview(sim_org, "workspaces", body)
    assert response.status_code == 200, response.json()
    quota = response.json()["quota"]
    assert quota["allowed"] is False
    assert (quota["requested"], quota["deserved"], quota["used"]) == (6.0, 4.0, 0.0)
    assert "deserved is 4" in quota["message"]
    # the real submit refuses the same
    assert sim_org.api.post("/api/v1/workloads/workspaces", body, format="json").status_code == 400


def test_a_policy_violation_is_listed_with_field_and_rule(sim_org):
    make_namespace(sim_org)
    body = training_body(sim_org.project, "root", security={"uidGidSource": "custom", "runAsUid": 0})
    response = preview(sim_org, "trainings", body)
    assert response.status_code == 200, response.json()
    policy = response.json()["policy"]
    assert policy["allowed"] is False
    assert {"field": "spec.security.runAsUid", "rule": "min",
            "message": "must be at least 1 (policy: tenant default)"} in policy["violations"]
    assert Workload.objects.count() == 0


def test_a_viewer_gets_403_and_a_bad_body_400_as_for_a_real_submit(sim_org):
    from tests.conftest import bearer_client

    viewer = UserFactory(username="viewer-preview")
    MembershipFactory(user=viewer, project=sim_org.project, role=Level.VIEWER)
    body = training_body(sim_org.project, "train")
    assert preview(sim_org, "trainings", body, api=bearer_client(viewer)).status_code == 403
    bad = preview(sim_org, "trainings", {**body, "spec": {"command": "x"}})
    assert bad.status_code == 400 and "spec.image" in {e["field"] for e in bad.json()["errors"]}
    assert sim_org.api.post("/api/v1/workloads/trainings?dryRun=maybe", body,
                            format="json").status_code == 400


def test_an_unreachable_cluster_is_a_200_with_classified_verdicts(sim_org):
    sim_org.cluster.api_server_url = "http://127.0.0.1:9"  # nothing listens on the discard port
    sim_org.cluster.has_knative = None
    sim_org.cluster.save()
    response = preview(sim_org, "trainings", training_body(sim_org.project, "train"))
    assert response.status_code == 200, response.json()
    [job] = response.json()["objects"]
    assert job["verdict"] == {"allowed": None, "code": 0, "reason": "ClusterUnavailable",
                              "message": "The cluster API is unreachable: connection refused"}


def test_preview_query_count_is_small(sim_org, django_assert_max_num_queries):
    make_namespace(sim_org)
    body = training_body(sim_org.project, "train")
    with django_assert_max_num_queries(20):
        assert preview(sim_org, "trainings", body).status_code == 200
