"""Upgrades of catalog workloads (workloads.launch.upgrades): launch from a profile, change the profile (a new
revision on a new template version), the workload reads outdated with the diff, a dry run changes nothing,
the upgrade rolls it on kubesim (inference: the Knative Service's new generation; workspace: a new pod on the
same claim) keeping its inputs; viewers get 403, other projects 404, bad input 400 JSON."""

import pytest
from kubernetes import client

from profiles import services
from profiles.models import LaunchSecret
from studio.models import AuditEvent, Level
from tests.conftest import bearer_client
from tests.factories import MembershipFactory, UserFactory
from tests.workloads.cluster_support import wait_for
from tests.workloads.test_e2e import object_name, pods_of, wait_phase
from workloads.models import Workload

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

INFERENCE = {
    "image": "{{ image }}", "args": "--model {{ model }}", "servingPort": {"container": 8000, "protocol": "http"},
    "autoscaling": {"minReplicas": 1, "maxReplicas": "{{ max_replicas }}", "metric": "concurrency",
                    "metricThreshold": 8},
    "environmentVariables": [{"name": "HF_TOKEN", "value": "{{ hf_token }}"}],
}
INFERENCE_VARIABLES = [
    {"name": "image", "type": "string", "default": "ghcr.io/example/serve:1"},
    {"name": "model", "type": "string", "default": "tiny"},
    {"name": "max_replicas", "type": "integer", "default": 2, "min": 1, "max": 5},
    {"name": "hf_token", "type": "secret"},
]
WORKSPACE = {
    "image": "{{ image }}", "args": "serve --mode {{ mode }}",
    "storage": {"pvc": [{"claimName": "home", "path": "/home/jovyan",
                         "claimInfo": {"size": "1Gi", "accessModes": {"readWriteOnce": True}}}]},
}
WORKSPACE_VARIABLES = [
    {"name": "image", "type": "string", "default": "jupyter/base-notebook:1"},
    {"name": "mode", "type": "enum", "options": ["lab", "classic"], "default": "lab"},
]


def _profile(org, name, kind, spec, variables, inputs=()):
    root = UserFactory(username=f"root-{name}-{org.project.name}", platform_admin=True)
    template = services.template_create(actor=root, name=f"{name}-{org.project.name}")
    v1 = services.version_create(actor=root, template=template, version="1", state="active", kind=kind,
                                 spec_template=spec, variables=variables, outputs=[])
    profile = services.profile_create(actor=root, name=f"{name}-{org.project.name}", template_version=v1,
                                      service_type="custom", owner_project=org.project, inputs=list(inputs))
    return root, template, profile


def _new_version(root, template, profile, kind, spec, variables, **profile_changes):
    v2 = services.version_create(actor=root, template=template, version="2", state="active", kind=kind,
                                 spec_template=spec, variables=variables, outputs=[])
    return services.profile_update(actor=root, profile=profile, template_version=v2, **profile_changes)


def _launch(org, profile, name, inputs):
    response = org.api.post(f"/api/v1/service-profiles/{profile.id}/launch",
                            {"projectId": org.project.id, "name": name, "inputs": inputs}, format="json")
    assert response.status_code == 201, response.json()
    return response.json()["id"]


def test_an_inference_from_an_old_revision_is_outdated_previewed_and_rolled_keeping_its_inputs(worker, sim_org):
    org = sim_org
    root, template, profile = _profile(org, "serve", "inference", INFERENCE, INFERENCE_VARIABLES)
    workload_id = _launch(org, profile, "chat", {"model": "big", "max_replicas": 4, "hf_token": "s3cret"})
    wait_phase(org, workload_id, "Running")
    detail = org.api.get(f"/api/v1/workloads/{workload_id}").json()
    assert detail["profile"]["outdated"] is False and detail["profile"]["revision"] == 1
    assert org.api.post(f"/api/v1/workloads/{workload_id}/upgrade").status_code == 400  # nothing to upgrade

    spec2 = {**INFERENCE, "image": "ghcr.io/example/serve:{{ tag }}"}
    _new_version(root, template, profile, "inference", spec2,
                 [*INFERENCE_VARIABLES, {"name": "tag", "type": "string", "default": "2"}],
                 labels={"tier": "gold"})
    detail = org.api.get(f"/api/v1/workloads/{workload_id}").json()
    assert (detail["profile"]["outdated"], detail["profile"]["currentRevision"]) == (True, 2)
    listed = org.api.get("/api/v1/workloads").json()["workloads"]
    assert [w["profile"]["outdated"] for w in listed if w["id"] == workload_id] == [True]
    status = org.api.get(f"/api/v1/workloads/{workload_id}/upgrade").json()
    assert (status["outdated"], status["upgradable"], status["fromRevision"], status["toRevision"]) == (True, True, 1, 2)
    changed = {c["path"]: (c["from"], c["to"]) for c in status["changes"]}
    assert changed["image"] == ("ghcr.io/example/serve:1", "ghcr.io/example/serve:2")
    assert "labels" in changed and "args" not in changed  # the user's model is kept

    knative = client.CustomObjectsApi(org.k8s)

    def service():
        return knative.get_namespaced_custom_object("serving.knative.dev", "v1", org.namespace, "services",
                                                    object_name(org, workload_id))

    generation = service()["metadata"].get("generation", 1)
    before = Workload.objects.get(pk=workload_id)
    preview = org.api.post(f"/api/v1/workloads/{workload_id}/upgrade?dryRun=true", {}, format="json")
    assert preview.status_code == 200, preview.json()
    body = preview.json()
    assert body["dryRun"] is True and body["changes"] == status["changes"]
    assert body["inputs"]["model"] == "big" and body["inputs"]["hf_token"] == "***"
    primary = [o for o in body["objects"] if o["kind"] == "Service" and o["apiVersion"].startswith("serving")]
    assert primary[0]["action"] == "roll" and primary[0]["verdict"]["allowed"] is True, primary
    after = Workload.objects.get(pk=workload_id)
    assert (after.spec, after.profile_revision, after.updated_at) == (before.spec, 1, before.updated_at)
    assert service()["metadata"].get("generation", 1) == generation

    upgraded = org.api.post(f"/api/v1/workloads/{workload_id}/upgrade", {}, format="json")
    assert upgraded.status_code == 202, upgraded.json()
    assert upgraded.json()["toRevision"] == 2

    def rolled():
        current = service()
        return current if current["spec"]["template"]["spec"]["containers"][0]["image"].endswith(":2") else None

    current = wait_for(rolled, timeout=30, what="the Knative Service to take the new revision")
    assert current["metadata"]["generation"] > generation
    container = current["spec"]["template"]["spec"]["containers"][0]
    assert "--model big" in " ".join(container.get("args", []))  # the stored input, kept
    row = Workload.objects.get(pk=workload_id)
    assert (row.profile_revision, row.launch_inputs["max_replicas"], row.spec["labels"]) == (
        2, 4, [{"name": "tier", "value": "gold"}])
    assert LaunchSecret.objects.get(workload_id=workload_id).data["hf_token"] == "s3cret"
    wait_phase(org, workload_id, "Running")
    reasons = [e["reason"] for e in org.api.get(f"/api/v1/workloads/{workload_id}/events?limit=500").json()["events"]]
    assert "Upgraded" in reasons and "Rolled" in reasons
    assert AuditEvent.objects.filter(object_type="workloads.workload", object_id=workload_id).exists()
    assert org.api.get(f"/api/v1/workloads/{workload_id}").json()["profile"]["outdated"] is False


def test_a_workspace_upgrade_restarts_its_pod_on_the_same_claim(worker, sim_org):
    org = sim_org
    root, template, profile = _profile(org, "lab", "workspace", WORKSPACE, WORKSPACE_VARIABLES)
    workload_id = _launch(org, profile, "lab", {"mode": "classic"})
    wait_phase(org, workload_id, "Running")
    first = wait_for(lambda: [p for p in pods_of(org, workload_id) if p.status.phase == "Running"] or None,
                     timeout=30, what="the workspace's pod")[0]
    claims = [v.persistent_volume_claim.claim_name for v in first.spec.volumes if v.persistent_volume_claim]
    assert claims

    _new_version(root, template, profile, "workspace", {**WORKSPACE, "image": "jupyter/base-notebook:2"},
                 WORKSPACE_VARIABLES)
    upgraded = org.api.post(f"/api/v1/workloads/{workload_id}/upgrade", {"inputs": {}}, format="json")
    assert upgraded.status_code == 202, upgraded.json()
    assert [c["path"] for c in upgraded.json()["changes"]] == ["image"]

    def replaced():
        pods = [p for p in pods_of(org, workload_id) if p.metadata.uid != first.metadata.uid
                and p.status.phase == "Running" and not p.metadata.deletion_timestamp]
        return pods or None

    second = wait_for(replaced, timeout=40, what="a new pod of the workspace")[0]
    assert second.spec.containers[0].image == "jupyter/base-notebook:2"
    assert "classic" in " ".join(second.spec.containers[0].args)  # the input kept
    assert [v.persistent_volume_claim.claim_name for v in second.spec.volumes if v.persistent_volume_claim] == claims
    claim_names = [c.metadata.name for c in client.CoreV1Api(org.k8s).list_namespaced_persistent_volume_claim(
        org.namespace).items]
    assert claim_names == claims  # no second claim: the same storage


def test_who_may_upgrade_and_bad_input(sim_org):
    org = sim_org
    root, template, profile = _profile(org, "auth", "workspace", WORKSPACE, WORKSPACE_VARIABLES)
    workload_id = _launch(org, profile, "lab", {})
    _new_version(root, template, profile, "workspace", {**WORKSPACE, "image": "jupyter/base-notebook:2"},
                 WORKSPACE_VARIABLES)
    url = f"/api/v1/workloads/{workload_id}/upgrade"

    viewer = UserFactory(username=f"viewer-{org.project.name}")
    MembershipFactory(user=viewer, project=org.project, role=Level.VIEWER)
    as_viewer = bearer_client(viewer)
    assert as_viewer.get(url).json()["outdated"] is True  # a viewer sees it is outdated
    refused = as_viewer.post(url, {}, format="json")
    assert refused.status_code == 403 and refused["Content-Type"].startswith("application/json")
    assert as_viewer.post(url + "?dryRun=true", {}, format="json").status_code == 403

    stranger = UserFactory(username=f"stranger-{org.project.name}")
    assert bearer_client(stranger).post(url, {}, format="json").status_code == 404
    assert bearer_client(stranger).get(url).status_code == 404

    for body, fields in (({"inputs": {"mode": "turbo"}}, {"inputs.mode"}), ({"inputs": [1]}, {"inputs"}),
                         ({"nope": 1}, {"nope"}), ([1], {"request"})):
        bad = org.api.post(url, body, format="json")
        assert bad.status_code == 400, bad.content
        assert {e["field"] for e in bad.json()["errors"]} == fields
    assert org.api.post(url + "?dryRun=maybe", {}, format="json").status_code == 400
    assert Workload.objects.get(pk=workload_id).profile_revision == 1  # nothing changed by any of these


def test_a_training_is_marked_outdated_but_refused_with_why(sim_org):
    org = sim_org
    spec = {"image": "{{ image }}", "command": "python", "args": "-c 'print(1)'"}
    variables = [{"name": "image", "type": "string", "default": "python:3.11"}]
    root, template, profile = _profile(org, "train", "training", spec, variables)
    workload_id = _launch(org, profile, "job", {})
    _new_version(root, template, profile, "training", {**spec, "image": "python:3.12"}, variables)
    status = org.api.get(f"/api/v1/workloads/{workload_id}/upgrade").json()
    assert (status["outdated"], status["upgradable"]) == (True, False)
    assert "cannot be upgraded in place" in status["reason"]
    for url in (f"/api/v1/workloads/{workload_id}/upgrade", f"/api/v1/workloads/{workload_id}/upgrade?dryRun=true"):
        refused = org.api.post(url, {}, format="json")
        assert refused.status_code == 400
        assert "Launch it again from the catalog" in refused.json()["errors"][0]["message"]
    assert Workload.objects.get(pk=workload_id).spec["image"] == "python:3.11"


def test_a_profile_unshared_from_the_project_shows_nothing_of_its_new_revision(sim_org):
    """The diff renders the profile's current revision: once the profile has left the project's catalog (here:
    unshared by its owner project's admin), the upgrade says so and shows none of it."""
    from tests.factories import ProjectFactory

    org = sim_org
    root, template, profile = _profile(org, "shared", "workspace", WORKSPACE, WORKSPACE_VARIABLES)
    owner = ProjectFactory(name=f"owner-{org.project.name}", cluster=org.cluster)
    profile = services.profile_update(actor=root, profile=profile, owner_project=owner)
    profile = services.profile_share(actor=root, profile=profile, mode="selected", project_ids=[org.project.id])
    workload_id = _launch(org, profile, "desk", {"mode": "classic"})
    launched_at = Workload.objects.get(pk=workload_id).profile_revision
    profile = _new_version(root, template, profile, "workspace", {**WORKSPACE, "image": "jupyter/lab:2"},
                           WORKSPACE_VARIABLES)
    url = f"/api/v1/workloads/{workload_id}/upgrade"
    shared = org.api.get(url).json()
    assert shared["upgradable"] is True and {c["path"] for c in shared["changes"]} >= {"image"}

    services.profile_share(actor=root, profile=profile, mode="none", project_ids=[])
    unshared = org.api.get(url).json()
    assert unshared["changes"] is None and "jupyter/lab" not in str(unshared)
    assert any("no longer in project" in problem["message"] for problem in unshared["problems"]), unshared
    for target in (url, url + "?dryRun=true"):
        refused = org.api.post(target, {}, format="json")
        assert refused.status_code == 400 and "no longer in project" in refused.json()["errors"][0]["message"]
    assert Workload.objects.get(pk=workload_id).profile_revision == launched_at
