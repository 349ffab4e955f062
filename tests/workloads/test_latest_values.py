"""Run:ai latest's field values where they only add to 2.18's: priority class names, an emptyDir's `medium`,
custom autoscaling metrics, `restartPolicy`, a toleration's `Any` effect, NIM metric types. Each is a valid request
of latest's document, accepted through the API, and becomes what Kubernetes takes: checked in the dry-run preview,
whose verdicts come from the simulated cluster's API server; a value neither version has is a 400 naming it."""

import pytest
from kubernetes import client

from studio.models import Level
from tests.conftest import SIM_TOKEN
from tests.factories import ClusterFactory, MembershipFactory, ProjectFactory
from tests.runai_spec import request_errors
from tests.workloads.cluster_support import training_body

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def org(sim_org):
    """sim_org with its namespace made, so that the preview asks the API server about each object."""
    client.CoreV1Api(sim_org.k8s).create_namespace({"metadata": {"name": sim_org.namespace}})
    return sim_org


def preview(org, path: str, body: dict, versions=("latest",)) -> dict:
    """The objects of a dry-run submit, by kind, each allowed by the cluster's API server."""
    body = {**body, "projectId": str(body["projectId"])}
    errors = request_errors(body, "post", f"/api/v1/workloads/{path}", versions)
    assert not errors, errors  # a request the document takes
    response = org.api.post(f"/api/v1/workloads/{path}?dryRun=true", body, format="json")
    assert response.status_code == 200, response.json()
    objects = {o["kind"]: o for o in response.json()["objects"]}
    assert all(o["verdict"]["allowed"] for o in objects.values()), [o["verdict"] for o in objects.values()]
    return {kind: o["manifest"] for kind, o in objects.items()}


def refused(org, path: str, body: dict) -> set[str]:
    response = org.api.post(f"/api/v1/workloads/{path}", body, format="json")
    assert response.status_code == 400, response.json()
    return {e["field"] for e in response.json()["errors"]}


def inference(org, name: str, **spec) -> dict:
    return {"name": name, "projectId": str(org.project.pk), "clusterId": str(org.cluster.pk),
            "spec": {"image": "python:3.11", "servingPort": {"container": 8000}, **spec}}


@pytest.mark.parametrize("value", ["very-high", "medium-low", "build", "train"])
def test_latest_and_2_18_priority_class_names_are_accepted(org, value):
    job = preview(org, "trainings", training_body(org.project, "prio", priorityClass=value))["Job"]
    assert job["spec"]["template"]["spec"]["priorityClassName"] == value


def test_a_priority_class_that_is_no_kubernetes_name_is_refused(org):
    assert refused(org, "trainings", training_body(org.project, "prio", priorityClass="Very High")) == {
        "spec.priorityClass"}


@pytest.mark.parametrize("medium", ["", "Memory", "HugePages", "HugePages-2Mi"])
def test_an_empty_dir_takes_every_medium_kubernetes_takes(org, medium):
    body = {"name": "scratch", "projectId": str(org.project.pk), "clusterId": str(org.cluster.pk), "spec": {
        "image": "python:3.11", "storage": {"emptyDirVolume": [{"path": "/scratch", "medium": medium,
                                                                "sizeLimit": "1Gi"}]}}}
    deployment = preview(org, "workspaces", body, ("latest",) if medium else ("2.18",))["Deployment"]
    volume = next(v for v in deployment["spec"]["template"]["spec"]["volumes"] if "emptyDir" in v)
    assert volume["emptyDir"].get("medium", "") == medium


def test_an_empty_dir_medium_kubernetes_does_not_know_is_refused(org):
    body = {"name": "scratch", "projectId": str(org.project.pk), "clusterId": str(org.cluster.pk), "spec": {
        "image": "python:3.11", "storage": {"emptyDirVolume": [{"path": "/scratch", "medium": "Disk"},
                                                               {"path": "/pages", "medium": "HugePages-2M"}]}}}
    assert refused(org, "workspaces", body) == {"spec.storage.emptyDirVolume[0].medium",
                                                "spec.storage.emptyDirVolume[1].medium"}


def test_a_custom_autoscaling_metric_scales_the_knative_service_with_its_hpa_class(org):
    body = inference(org, "custom", autoscaling={"minReplicas": 1, "maxReplicas": 4,
                                                 "metric": "http_requests_total", "metricThreshold": 10})
    service = preview(org, "inferences", body)["Service"]
    annotations = service["spec"]["template"]["metadata"]["annotations"]
    assert annotations["autoscaling.knative.dev/class"] == "hpa.autoscaling.knative.dev"
    assert annotations["autoscaling.knative.dev/metric"] == "http_requests_total"
    assert annotations["autoscaling.knative.dev/target"] == "10"
    # 2.18's own metrics keep Knative's default class.
    body = inference(org, "rps", autoscaling={"minReplicas": 1, "maxReplicas": 4, "metric": "throughput",
                                              "metricThreshold": 10})
    annotations = preview(org, "inferences", body)["Service"]["spec"]["template"]["metadata"]["annotations"]
    assert annotations["autoscaling.knative.dev/metric"] == "rps" and "autoscaling.knative.dev/class" not in annotations


def test_a_custom_autoscaling_metric_is_the_hpas_pods_metric_without_knative(org, start_kubesim):
    plain = start_kubesim(knative=False)
    cluster = ClusterFactory(name="plain", api_server_url=plain.url, token=SIM_TOKEN, verify_tls=False)
    project = ProjectFactory(name=f"{org.project.name}-plain", cluster=cluster, gpu_deserved=8, gpu_limit=8)
    MembershipFactory(user=org.user, project=project, role=Level.MEMBER)
    body = {"name": "custom", "projectId": str(project.pk), "clusterId": str(cluster.pk), "spec": {
        "image": "python:3.11", "servingPort": {"container": 8000},
        "autoscaling": {"minReplicas": 1, "maxReplicas": 4, "metric": "http_requests_total", "metricThreshold": 10}}}
    response = org.api.post("/api/v1/workloads/inferences?dryRun=true", body, format="json")
    assert response.status_code == 200, response.json()
    hpa = next(o["manifest"] for o in response.json()["objects"] if o["kind"] == "HorizontalPodAutoscaler")
    assert hpa["spec"]["metrics"] == [{"type": "Pods", "pods": {
        "metric": {"name": "http_requests_total"}, "target": {"type": "AverageValue", "averageValue": "10"}}}]


def test_an_autoscaling_metric_that_is_no_metric_name_is_refused(org):
    body = inference(org, "custom", autoscaling={"minReplicas": 1, "maxReplicas": 4, "metric": "requests/s",
                                                 "metricThreshold": 10})
    assert refused(org, "inferences", body) == {"spec.autoscaling.metric"}


@pytest.mark.parametrize("policy, pods", [("Always", "OnFailure"), ("OnFailure", "OnFailure"), ("Never", "Never")])
def test_a_training_takes_every_restart_policy_of_latest(org, policy, pods):
    job = preview(org, "trainings", training_body(org.project, "restarts", restartPolicy=policy))["Job"]
    assert job["spec"]["template"]["spec"]["restartPolicy"] == pods


@pytest.mark.parametrize("policy", ["Always", "OnFailure", "Never"])
def test_a_workspace_takes_every_restart_policy_of_latest_and_its_pods_restart_always(org, policy):
    body = {"name": "restarts", "projectId": str(org.project.pk), "clusterId": str(org.cluster.pk),
            "spec": {"image": "python:3.11", "restartPolicy": policy}}
    deployment = preview(org, "workspaces", body)["Deployment"]
    assert deployment["spec"]["template"]["spec"].get("restartPolicy", "Always") == "Always"
    made = org.api.post("/api/v1/workloads/workspaces", body, format="json")
    assert made.status_code == 200 and made.json()["spec"]["restartPolicy"] == policy  # kept and answered


def test_a_restart_policy_neither_version_has_is_refused(org):
    assert refused(org, "trainings", training_body(org.project, "restarts", restartPolicy="ExitCode")) == {
        "spec.restartPolicy"}


def test_a_toleration_of_any_effect_tolerates_every_effect(org):
    job = preview(org, "trainings", training_body(org.project, "tolerant", tolerations=[
        {"name": "gpu", "operator": "Exists", "key": "nvidia.com/gpu", "effect": "Any"}]))["Job"]
    assert job["spec"]["template"]["spec"]["tolerations"][-1] == {"operator": "Exists", "key": "nvidia.com/gpu"}


@pytest.mark.parametrize("path", ["inferences", "trainings"])
def test_nim_metric_types_are_accepted_and_answered_without_values(org, path):
    body = inference(org, "nim") if path == "inferences" else training_body(org.project, "nim")
    made = org.api.post(f"/api/v1/workloads/{path}", body, format="json")
    assert made.status_code == 200, made.json()
    workload = made.json()["workloadId"]
    url = f"/api/v1/workloads/{path}/{workload}/metrics" if path == "inferences" else \
        f"/api/v1/workloads/{workload}/metrics"
    query = "metricType=NIM_NUM_REQUESTS_RUNNING&metricType=NIM_TIME_TO_FIRST_TOKEN_SECONDS&metricType=POD_COUNT" \
            "&start=2026-01-01T00:00:00Z&end=2026-01-01T01:00:00Z"
    answer = org.api.get(f"{url}?{query}")
    assert answer.status_code == 207, answer.json()
    types = {m["type"]: m["values"] for m in answer.json()["measurements"]}
    assert types["NIM_NUM_REQUESTS_RUNNING"] == [] and types["NIM_TIME_TO_FIRST_TOKEN_SECONDS"] == []
    unknown = org.api.get(f"{url}?metricType=NIM_SOMETHING&start=2026-01-01T00:00:00Z&end=2026-01-01T01:00:00Z")
    assert unknown.status_code == 400 and unknown.json()["errors"][0]["field"].startswith("metricType")
