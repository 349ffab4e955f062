"""Run:ai latest's PATCH /api/v1/workloads/inferences/{id}: a new revision of the inference, rolled on the
cluster (kubesim over HTTP, through a real Celery worker), and its answer checked against Run:ai's schema."""

import pytest
from kubernetes import client

from tests.runai_spec import assert_matches_spec
from tests.workloads.cluster_support import wait_for
from tests.workloads.test_e2e import inference_body, object_name, submit, wait_phase
from workloads.models import Workload

PATCH = "/api/v1/workloads/inferences/{workloadId}"


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_patch_rolls_the_knative_service_to_a_new_revision(worker, sim_org):
    workload_id = submit(sim_org, "inferences", inference_body(sim_org.project, "serve"))
    wait_phase(sim_org, workload_id, "Running")
    knative = client.CustomObjectsApi(sim_org.k8s)

    def service():
        return knative.get_namespaced_custom_object("serving.knative.dev", "v1", sim_org.namespace, "services",
                                                    object_name(sim_org, workload_id))

    generation = service()["metadata"].get("generation", 1)
    response = sim_org.api.patch(f"/api/v1/workloads/inferences/{workload_id}",
                                 {"spec": {"image": "ghcr.io/example/serve:2",
                                           "autoscaling": {"minReplicas": 1, "maxReplicas": 5, "metric": "concurrency",
                                                           "metricThreshold": 20}}}, format="json")
    assert response.status_code == 202, response.json()
    assert_matches_spec(response, "patch", PATCH)
    assert response.json()["spec"]["image"] == "ghcr.io/example/serve:2"
    assert response.json()["spec"]["servingPort"] == {"container": 8080, "protocol": "http"}  # kept

    def rolled():
        current = service()
        template = current["spec"]["template"]
        image = template["spec"]["containers"][0]["image"]
        return current if image == "ghcr.io/example/serve:2" else None

    current = wait_for(rolled, timeout=30, what="the Knative Service to take the new image")
    annotations = current["spec"]["template"]["metadata"]["annotations"]
    assert annotations["autoscaling.knative.dev/max-scale"] == "5"
    assert annotations["autoscaling.knative.dev/target"] == "20"
    assert current["metadata"].get("generation", 1) > generation
    wait_phase(sim_org, workload_id, "Running")
    reasons = [e["reason"] for e in sim_org.api.get(f"/api/v1/workloads/{workload_id}/events?limit=500").json()["events"]]
    assert "Updated" in reasons and "Rolled" in reasons


@pytest.mark.django_db
def test_patch_validates_the_merged_spec_and_refuses_other_kinds(client_for, org):
    member = client_for(org.users.member)
    body = {"name": "serve", "projectId": org.a.id, "clusterId": str(org.cluster.id),
            "spec": {"image": "example/serve:1", "servingPort": {"container": 8000}}}
    created = member.post("/api/v1/workloads/inferences", body, format="json").json()
    url = f"/api/v1/workloads/inferences/{created['workloadId']}"
    bad = member.patch(url, {"spec": {"servingPort": {"container": 70000}, "nope": 1}}, format="json")
    assert bad.status_code == 400
    assert {e["field"] for e in bad.json()["errors"]} == {"spec.servingPort.container", "spec.nope"}
    assert member.patch(url, {"name": "other"}, format="json").status_code == 400
    viewer = client_for(org.users.viewer).patch(url, {"spec": {"image": "x:1"}}, format="json")
    assert viewer.status_code == 403
    assert Workload.objects.get(pk=created["workloadId"]).spec["image"] == "example/serve:1"
    training = member.post("/api/v1/workloads/trainings", {**body, "name": "job", "spec": {"image": "python:3.11"}},
                           format="json").json()
    assert member.patch(f"/api/v1/workloads/trainings/{training['workloadId']}", {"spec": {}},
                        format="json").status_code == 405


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_patch_takes_away_what_the_new_spec_drops(worker, sim_org):
    """A merge patch alone would keep a dropped annotation, label or autoscaling key: the object must match the
    new spec exactly (read with the official client)."""
    body = inference_body(sim_org.project, "serve")
    body["spec"].update(annotations=[{"name": "team", "value": "a"}, {"name": "old-note", "value": "x"}],
                        labels=[{"name": "tier", "value": "gold"}],
                        environmentVariables=[{"name": "KEEP", "value": "1"}, {"name": "DROP", "value": "2"}])
    workload_id = submit(sim_org, "inferences", body)
    wait_phase(sim_org, workload_id, "Running")
    knative = client.CustomObjectsApi(sim_org.k8s)

    def service():
        return knative.get_namespaced_custom_object("serving.knative.dev", "v1", sim_org.namespace, "services",
                                                    object_name(sim_org, workload_id))

    before = service()
    assert before["metadata"]["annotations"]["old-note"] == "x" and before["metadata"]["labels"]["tier"] == "gold"
    retention = "autoscaling.knative.dev/scale-to-zero-pod-retention-period"
    assert retention in before["spec"]["template"]["metadata"]["annotations"]
    response = sim_org.api.patch(PATCH.format(workloadId=workload_id), {"spec": {
        "annotations": [{"name": "team", "value": "b"}], "labels": [],
        "environmentVariables": [{"name": "KEEP", "value": "1"}],
        "autoscaling": {"minReplicas": 1, "maxReplicas": 3, "metric": "concurrency", "metricThreshold": 10}}},
        format="json")
    assert response.status_code == 202, response.json()

    def rolled():
        current = service()
        return current if current["metadata"]["annotations"].get("team") == "b" else None

    current = wait_for(rolled, timeout=30, what="the Knative Service to take the new spec")
    meta, template = current["metadata"], current["spec"]["template"]
    assert "old-note" not in meta["annotations"] and "tier" not in meta["labels"]
    assert "old-note" not in template["metadata"]["annotations"] and "tier" not in template["metadata"]["labels"]
    assert retention not in template["metadata"]["annotations"]
    assert template["metadata"]["annotations"]["autoscaling.knative.dev/min-scale"] == "1"
    assert [e["name"] for e in template["spec"]["containers"][0]["env"] if e["name"] in ("KEEP", "DROP")] == ["KEEP"]
    wait_phase(sim_org, workload_id, "Running")
