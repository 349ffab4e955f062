"""Templates of assets through the HTTP API: both Run:ai shapes of one template, workloads made from them (the
template's assets fill the spec, the request's fields override), what uses an asset, and every bad input as a
clear 4xx naming it."""

import pytest

from studio.models import Level
from tests.assets.template_bodies import (
    ASSET_TEMPLATE,
    TEMPLATES,
    asset_template_body,
    make_assets,
    typed_template_body,
)
from tests.factories import MembershipFactory, UserFactory
from workloads.models import Workload

pytestmark = pytest.mark.django_db
MOST = 8  # authentication and roles, the templates, the assets they name, their uses


@pytest.fixture
def world(client_for, org):
    org.a.gpu_deserved, org.a.gpu_limit = 4, 8
    org.a.save()
    admin = client_for(org.users.admin)
    made = make_assets(admin, org.a)
    template = admin.post(ASSET_TEMPLATE, asset_template_body(made, "pytorch-train", org.a), format="json")
    assert template.status_code == 202, template.json()
    return admin, made, template.json()


def training(org, name, template_id, **spec):
    body = {"name": name, "projectId": str(org.a.pk), "clusterId": str(org.cluster.pk), "templateId": template_id}
    if spec:
        body["spec"] = spec
    return body


def test_one_template_answers_both_apis_and_names_its_assets(world, client_for, org):
    admin, made, template = world
    assets = template["spec"]["assets"]
    assert assets["environment"] == {"id": made["environment"]["meta"]["id"], "name": "tpl-environment",
                                     "toolTypes": ["jupyter-notebook"]}
    assert assets["compute"]["name"] == "tpl-compute"
    assert assets["datasources"] == [{"id": made["pvc"]["meta"]["id"], "name": "tpl-pvc", "kind": "pvc"}]
    assert template["meta"]["kind"] == "workload-template" and template["meta"]["projectId"] == org.a.pk

    # latest's view of the same row: its combined spec is what a workload would get
    same = admin.get(f"{TEMPLATES}/{template['meta']['id']}").json()
    assert same["meta"]["scopeType"] == "project" and same["meta"]["scopeId"] == str(org.a.pk)
    combined = same["combinedSpec"]
    assert combined["image"] == "nvcr.io/nvidia/pytorch:24.01-py3" and combined["args"] == "--epochs 2"
    assert combined["compute"]["gpuDevicesRequest"] == 1 and combined["compute"]["cpuMemoryRequest"] == "1Gi"
    assert combined["storage"]["pvc"][0]["path"] == "/data"
    assert combined["security"] == {"runAsUid": 1000, "uidGidSource": "custom"}
    assert same["runnable"] == {"isRunnable": True, "issue": None}

    viewer = client_for(org.users.viewer)  # reads its project's templates, may not make one
    assert [t["meta"]["name"] for t in viewer.get(ASSET_TEMPLATE).json()["entries"]] == ["pytorch-train"]
    refused = viewer.post(ASSET_TEMPLATE, asset_template_body(made, "mine", org.a), format="json")
    assert refused.status_code == 403, refused.json()
    other = client_for(org.users.other)  # project beta's member: alpha's template is not there
    assert other.get(f"{ASSET_TEMPLATE}/{template['meta']['id']}").status_code == 404
    assert other.get(f"{TEMPLATES}/trainings/{template['meta']['id']}").status_code == 404
    assert other.get(TEMPLATES).json()["entries"] == []


def test_a_training_from_a_template_takes_its_assets_and_the_request_overrides(world, client_for, org):
    _, made, template = world
    member = client_for(org.users.member)
    response = member.post("/api/v1/workloads/trainings", training(
        org, "from-template", template["meta"]["id"], image="python:3.12", args="--epochs 9",
        compute={"gpuPortionRequest": 0.25}, environmentVariables=[{"name": "EPOCHS", "value": "9"},
                                                                {"name": "SEED", "value": "1"}]), format="json")
    assert response.status_code == 200, response.json()
    spec = response.json()["spec"]
    assert spec["image"] == "python:3.12" and spec["args"] == "--epochs 9" and spec["command"] == "python"
    # objects merge key by key: the compute's CPU and request type stay, its GPU portion is the request's
    assert spec["compute"]["gpuPortionRequest"] == 0.25 and spec["compute"]["gpuRequestType"] == "portion"
    assert spec["compute"]["cpuCoreRequest"] == 1
    assert [(v["name"], v["value"]) for v in spec["environmentVariables"]] == [("EPOCHS", "9"), ("SEED", "1")]
    assert spec["storage"]["pvc"][0]["claimInfo"]["size"] == "10Gi"
    row = Workload.objects.get(pk=response.json()["workloadId"])
    assert str(row.template_id) == template["meta"]["id"]
    assert row.made_from["environment"] == made["environment"]["meta"]["id"]
    assert row.made_from["datasources"] == [made["pvc"]["meta"]["id"]]


def test_an_asset_in_use_is_not_deleted_and_says_by_what(world, client_for, org):
    admin, made, template = world
    environment = f"/api/v1/asset/environment/{made['environment']['meta']['id']}"
    used = admin.get(f"{environment}?usageInfo=true").json()["usedBy"]
    assert used["templates"] == [{"id": template["meta"]["id"], "name": "pytorch-train"}]
    refused = admin.delete(environment)
    assert refused.status_code == 409 and "template pytorch-train" in refused.json()["message"]

    member = client_for(org.users.member)
    submitted = member.post("/api/v1/workloads/trainings", training(org, "uses-it", template["meta"]["id"]),
                            format="json")
    assert submitted.status_code == 200, submitted.json()
    workload_id = submitted.json()["workloadId"]
    assert admin.get(f"{environment}?usageInfo=true").json()["usedBy"]["trainings"] == [
        {"id": workload_id, "name": "uses-it"}]
    assert admin.delete(f"{ASSET_TEMPLATE}/{template['meta']['id']}").status_code == 202
    refused = admin.delete(environment)
    assert refused.status_code == 409 and "training uses-it" in refused.json()["message"], refused.json()
    assert member.delete(f"/api/v1/workloads/trainings/{workload_id}").status_code == 204
    assert admin.delete(environment).status_code == 202


def test_bad_template_ids_and_bodies_are_4xx_naming_them(world, client_for, org):
    admin, made, template = world
    member = client_for(org.users.member)

    def submitted(body, path="trainings"):
        response = member.post(f"/api/v1/workloads/{path}", body, format="json")
        assert 400 <= response.status_code < 500, response.json()
        return {e["field"]: e["message"] for e in response.json()["errors"]}

    unknown = "0b7e8c43-5f4e-4a53-9d1a-2f3c9d1e7a10"
    assert submitted(training(org, "x", unknown)) == {"templateId": f"No such template: {unknown}."}
    assert "templateId" in submitted(training(org, "x", "not-a-uuid"))
    # a template of project beta is not alpha's member's to use, and not alpha's either
    beta_owner = UserFactory(username="beta-admin")
    MembershipFactory(user=beta_owner, project=org.b, role=Level.ADMIN)
    beta_admin = client_for(beta_owner)
    beta_made = make_assets(beta_admin, org.b)
    beta = beta_admin.post(ASSET_TEMPLATE, asset_template_body(beta_made, "beta-only", org.b), format="json")
    assert beta.status_code == 202, beta.json()
    assert submitted(training(org, "x", beta.json()["meta"]["id"])) == {
        "templateId": f"No such template: {beta.json()['meta']['id']}."}
    # a typed template makes its own type only
    inference = admin.post(f"{TEMPLATES}/inferences", typed_template_body(None, "serve", org.a, image="x:1"),
                           format="json")
    assert inference.status_code == 202, inference.json()
    assert "inference template" in submitted(training(org, "x", inference.json()["meta"]["id"]))["templateId"]
    # the request's own fields are still checked, after the template's are in
    assert "spec.compute.gpuDevicesRequest" in submitted(training(org, "x", template["meta"]["id"],
                                                                  compute={"gpuDevicesRequest": -1}))

    def refused(response, *fields):
        assert response.status_code == 400, response.json()
        assert {e["field"] for e in response.json()["errors"]} == set(fields), response.json()

    refused(admin.post(ASSET_TEMPLATE, {"meta": {"name": "t", "scope": "project", "projectId": org.a.pk},
                                        "spec": {"assets": {"compute": made["compute"]["meta"]["id"]}}},
                       format="json"), "spec.assets.environment")
    refused(admin.post(ASSET_TEMPLATE, {"meta": {"name": "t", "scope": "project", "projectId": org.a.pk},
                                        "spec": {"assets": {"environment": made["compute"]["meta"]["id"]},
                                                 "specificEnv": {"gpus": 1}}}, format="json"),
            "spec.assets.environment", "spec.specificEnv.gpus")
    refused(admin.post(f"{TEMPLATES}/trainings", {"meta": {"name": "t", "scopeType": "project",
                                                           "scopeId": str(org.b.pk)},
                                                  "spec": {"servingPort": {"container": 80}, "compute": 1}},
                       format="json"), "meta.scopeId", "spec.servingPort", "spec.compute")
    refused(admin.post(f"{TEMPLATES}/trainings", typed_template_body(beta_made, "t", org.a), format="json"),
            "assets.environment", "assets.compute", "assets.datasources[0].id")
    taken = admin.post(ASSET_TEMPLATE, asset_template_body(made, "pytorch-train", org.a), format="json")
    assert taken.status_code == 409, taken.json()
    name = admin.get(f"{TEMPLATES}/name-availability", {"templateName": "pytorch-train", "scopeType": "project",
                                                         "scopeId": str(org.a.pk)})
    assert name.status_code == 409
    assert admin.get(TEMPLATES, {"filterBy": "colour==red"}).status_code == 400
    assert admin.get(f"{TEMPLATES}/trainings/nope").status_code == 404


def test_latest_templates_list_count_patch_and_delete(world, client_for, org):
    admin, made, template = world
    made_typed = admin.post(f"{TEMPLATES}/workspaces", typed_template_body(made, "notebook", org.a, tty=True),
                            format="json")
    assert made_typed.status_code == 202, made_typed.json()
    typed_id = made_typed.json()["meta"]["id"]
    assert made_typed.json()["meta"]["workloadType"] == "Workspace"
    listed = admin.get(TEMPLATES, {"sortBy": "name", "sortOrder": "desc", "limit": 1}).json()
    assert [e["meta"]["name"] for e in listed["entries"]] == ["pytorch-train"]
    assert listed["pagination"] == {"offset": 0, "limit": 1, "nextOffset": 1}
    assert admin.get(f"{TEMPLATES}/count", {"filterBy": "name=@book"}).json() == {"count": 1}
    assert [e["meta"]["id"] for e in admin.get(f"{TEMPLATES}/workspaces").json()["entries"]] == [typed_id]
    patched = admin.patch(f"{TEMPLATES}/workspaces/{typed_id}", {"spec": {"command": "jupyter"},
                                                                 "fieldsToClear": ["spec.tty"]}, format="json")
    assert patched.status_code == 200, patched.json()
    assert patched.json()["spec"] == {"command": "jupyter"}  # tty cleared
    workspace = client_for(org.users.member).post("/api/v1/workloads/workspaces", {
        "name": "nb", "projectId": str(org.a.pk), "clusterId": str(org.cluster.pk), "templateId": typed_id},
        format="json")
    assert workspace.status_code == 200, workspace.json()
    assert workspace.json()["spec"]["command"] == "jupyter"
    assert admin.delete(f"{TEMPLATES}/workspaces/{typed_id}").status_code == 204
    assert admin.get(f"{TEMPLATES}/{typed_id}").status_code == 404


def test_a_template_list_costs_the_same_few_queries_for_1_template_as_for_20(world, client_for, org,
                                                                             django_assert_max_num_queries):
    admin, made, _ = world
    member = client_for(org.users.member)
    urls = [f"{ASSET_TEMPLATE}?usageInfo=true", TEMPLATES, f"{TEMPLATES}/trainings?complyToProject={org.a.pk}",
            f"{TEMPLATES}/count"]
    for url in urls:
        with django_assert_max_num_queries(MOST):
            assert member.get(url).status_code == 200
    for index in range(10):
        assert admin.post(ASSET_TEMPLATE, asset_template_body(made, f"more-{index}", org.a),
                          format="json").status_code == 202
        assert admin.post(f"{TEMPLATES}/trainings", typed_template_body(made, f"typed-{index}", org.a),
                          format="json").status_code == 202
    for url in urls:
        with django_assert_max_num_queries(MOST):
            assert member.get(url).status_code == 200
    assert len(member.get(f"{ASSET_TEMPLATE}?usageInfo=true").json()["entries"]) == 21
    assert len(member.get(f"{TEMPLATES}?limit=500").json()["entries"]) == 21


def test_bad_list_parameters_are_named_in_one_400(client_for, org):
    response = client_for(org.users.member).get(TEMPLATES, {
        "offset": "-1", "limit": "0", "sortOrder": "up", "sortBy": "colour", "filterBy": "name~x",
        "complyToProject": "x", "complyToWorkloadType": "Batch"})
    assert response.status_code == 400
    assert {e["field"] for e in response.json()["errors"]} == {
        "offset", "limit", "sortOrder", "sortBy", "filterBy", "complyToProject", "complyToWorkloadType"}


def test_a_private_asset_is_named_by_a_private_template_only(client_for, org):
    member = client_for(org.users.member)
    private = member.post("/api/v1/asset/environment", {
        "meta": {"name": "mine", "scope": "project", "projectId": org.a.pk, "private": True},
        "spec": {"image": "python:3.12"}}, format="json")
    assert private.status_code == 202, private.json()
    ids = {"assets": {"environment": private.json()["meta"]["id"]}}
    shared = member.post(ASSET_TEMPLATE, {"meta": {"name": "shared", "scope": "project", "projectId": org.a.pk},
                                          "spec": ids}, format="json")
    assert shared.status_code == 400 and shared.json()["errors"] == [
        {"field": "spec.assets.environment", "message": "A private asset may be named by a private template only."}]
    own = member.post(ASSET_TEMPLATE, {"meta": {"name": "own", "scope": "project", "projectId": org.a.pk,
                                                "private": True}, "spec": ids}, format="json")
    assert own.status_code == 202, own.json()
    assert client_for(org.users.admin).get(f"{ASSET_TEMPLATE}/{own.json()['meta']['id']}").status_code == 404


def test_distributed_and_inference_workloads_from_their_templates(world, client_for, org):
    admin, made, _ = world
    member = client_for(org.users.member)
    where = {"projectId": str(org.a.pk), "clusterId": str(org.cluster.pk)}
    distributed = admin.post(f"{TEMPLATES}/distributed", {
        **typed_template_body(made, "ddp", org.a, distributedFramework="PyTorch", numWorkers=2,
                              cleanPodPolicy="Running"),
        "masterSpecSameAsWorker": False, "master": {"spec": {"command": "torchrun", "args": "--master"}}},
        format="json")
    assert distributed.status_code == 202, distributed.json()
    job = member.post("/api/v1/workloads/distributed", {
        "name": "ddp", **where, "templateId": distributed.json()["meta"]["id"], "spec": {"numWorkers": 1},
        "masterSpecSameAsWorker": False}, format="json")
    assert job.status_code == 200, job.json()
    spec = Workload.objects.get(pk=job.json()["workloadId"]).spec
    assert spec["numWorkers"] == 1 and spec["distributedFramework"] == "PyTorch"  # the request's workers
    assert spec["image"] == "nvcr.io/nvidia/pytorch:24.01-py3" and spec["compute"]["gpuDevicesRequest"] == 1
    assert Workload.objects.get(pk=job.json()["workloadId"]).request["masterSpec"]["command"] == "torchrun"

    serve = admin.post(f"{TEMPLATES}/inferences", typed_template_body(
        None, "serve", org.a, image="ghcr.io/example/serve:1", servingPort={"container": 8080, "protocol": "http"}),
        format="json")
    assert serve.status_code == 202, serve.json()
    inference = member.post("/api/v1/workloads/inferences", {"name": "serve", **where,
                                                              "templateId": serve.json()["meta"]["id"]},
                            format="json")
    assert inference.status_code == 200, inference.json()
    assert inference.json()["spec"]["servingPort"]["container"] == 8080
