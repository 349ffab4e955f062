"""Service profiles through HTTP (seed 002): every field, the save-time rules, revisions, sharing, system
profiles and clones, the admin list."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from profiles import services
from profiles.models import ServiceProfile
from studio.models import AuditEvent
from tests.factories import ServiceProfileFactory
from tests.profiles.conftest import version_fields

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin(client_for, org):
    return client_for(org.users.platform_admin)


def profile_body(org, **changes) -> dict:
    body = {
        "name": "trainer-job", "displayName": "Trainer job", "description": "Runs a training.",
        "projectId": org.a.id, "environmentTemplate": "trainer", "environmentTemplateVersion": "1.0.0",
        "serviceType": "jobs", "iconUrl": "https://example.com/icon.png",
        "readme": "# Trainer\n\nRun **it**.<script>alert(1)</script>",
        "labels": {"tier": "gold", "example.com/team": "ml"}, "annotations": {"example.com/owner": "ML team"},
        "extraConfig": {"LOG_LEVEL": "debug"},
        "inputs": [{"name": "image", "override": "not-allowed", "default": "python:3.12"},
                   {"name": "epochs", "override": "restricted", "allowedValues": [1, 3, 10]}],
        "outputs": [{"name": "key", "visible": False}, {"name": "url", "label": "Open"}],
        "sharing": {"mode": "selected", "projectIds": [org.b.id]},
    }
    return {**body, **changes}


def errors_of(response) -> dict:
    assert response.status_code == 400, response.json()
    return {e["field"]: e["message"] for e in response.json()["errors"]}


def test_create_read_update_delete_with_every_field_of_the_seed(admin, org, version):
    created = admin.post("/api/v1/service-profiles", profile_body(org), format="json")
    assert created.status_code == 201, created.json()
    body = created.json()
    assert set(body) == {
        "id", "name", "displayName", "description", "projectId", "environmentTemplate", "environmentTemplateId",
        "environmentTemplateVersion", "kind", "serviceType", "iconUrl", "readme", "readmeHtml", "labels",
        "annotations", "extraConfig", "inputs", "outputs", "sharing", "revision", "system", "draft", "createdAt",
        "createdBy", "updatedAt"}
    assert (body["environmentTemplate"], body["environmentTemplateVersion"], body["kind"]) == ("trainer", "1.0.0", "training")
    assert body["readmeHtml"].startswith("<h1>Trainer</h1>") and "<script" not in body["readmeHtml"]
    assert body["sharing"] == {"mode": "selected", "projectIds": [org.b.id]}
    assert (body["revision"], body["system"], body["createdBy"]) == (1, False, "root@example.com")
    assert body["inputs"][0] == {"name": "image", "default": "python:3.12", "override": "not-allowed",
                                 "allowedValues": None, "required": False, "visible": True}
    assert [i["name"] for i in body["inputs"]] == ["image", "command", "epochs", "gpus", "memory", "mode", "api_key"]
    assert body["outputs"] == [
        {"name": "url", "label": "Open", "visible": True, "sensitive": False},
        {"name": "address", "label": "Address", "visible": True, "sensitive": False},
        {"name": "epochs", "label": "Epochs", "visible": True, "sensitive": False},
        {"name": "key", "label": "API key", "visible": False, "sensitive": True},
    ]
    url = f"/api/v1/service-profiles/{body['id']}"
    assert admin.get(url).json() == body

    patched = admin.patch(url, {"description": "Better.", "labels": {"tier": "silver"}}, format="json")
    assert patched.status_code == 200 and patched.json()["revision"] == 2
    assert patched.json()["labels"] == {"tier": "silver"}
    assert admin.patch(url, {"description": "Better."}, format="json").json()["revision"] == 2  # no change
    put = admin.put(url, profile_body(org, displayName="Trainer"), format="json")
    assert put.status_code == 200 and put.json()["revision"] == 3 and put.json()["displayName"] == "Trainer"

    assert admin.delete(url).status_code == 204
    assert admin.get(url).status_code == 404
    actions = AuditEvent.objects.filter(object_type="profiles.serviceprofile").values_list("action", flat=True)
    assert sorted(actions) == ["create", "delete", "update", "update", "update"]  # the sharing is one


def test_a_null_project_id_removes_the_owner_project_and_an_absent_one_keeps_it(admin, org, version):
    url = f"/api/v1/service-profiles/{admin.post('/api/v1/service-profiles', profile_body(org), format='json').json()['id']}"
    assert admin.patch(url, {"description": "Kept."}, format="json").json()["projectId"] == org.a.id
    cleared = admin.patch(url, {"projectId": None}, format="json")
    assert cleared.status_code == 200 and cleared.json()["projectId"] is None
    assert admin.get(url).json()["projectId"] is None


def test_the_unique_name_is_immutable_and_unique(admin, org, version):
    url = f"/api/v1/service-profiles/{admin.post('/api/v1/service-profiles', profile_body(org), format='json').json()['id']}"
    assert errors_of(admin.patch(url, {"name": "renamed"}, format="json")) == {
        "name": "The unique name cannot be changed once created."}
    assert admin.patch(url, {"name": "trainer-job"}, format="json").status_code == 200
    again = admin.post("/api/v1/service-profiles", profile_body(org), format="json")
    assert again.status_code == 409 and "trainer-job" in again.json()["message"]


@pytest.mark.parametrize("changes,field,message", [
    ({"name": "Trainer Job"}, "name", "lowercase"),
    ({"serviceType": "games"}, "serviceType", "valid choice"),
    ({"iconUrl": "not a url"}, "iconUrl", "valid URL"),
    ({"labels": {"bad key!": "x"}}, "labels.bad key!", "qualified name"),
    ({"labels": {"tier": "has spaces"}}, "labels.tier", "label value"),
    ({"labels": {"tier": "x" * 64}}, "labels.tier", "63"),
    ({"labels": {"paas-studio/project": "x"}}, "labels.paas-studio/project", "set by the studio"),
    ({"labels": {"tier": 5}}, "labels.tier", "Must be a string"),
    ({"annotations": {"Example.com/x": "y"}}, "annotations.Example.com/x", "qualified name"),
    ({"extraConfig": {"1ABC": "x"}}, "extraConfig.1ABC", "environment variable name"),
    ({"inputs": [{"name": "colour"}]}, "inputs[0].name", "No variable 'colour'"),
    ({"inputs": [{"name": "gpus"}, {"name": "gpus"}]}, "inputs[1].name", "Another input setting"),
    ({"inputs": [{"name": "gpus", "default": "two"}]}, "inputs.gpus.default", "integer"),
    ({"inputs": [{"name": "gpus", "default": 3}]}, "inputs.gpus.default", "at most 2"),
    ({"inputs": [{"name": "gpus", "override": "sometimes"}]}, "inputs[0].override", "valid choice"),
    ({"inputs": [{"name": "gpus", "override": "restricted"}]}, "inputs.gpus.allowedValues", "needs allowedValues"),
    ({"inputs": [{"name": "gpus", "allowedValues": [1]}]}, "inputs.gpus.allowedValues", "Only a restricted"),
    ({"inputs": [{"name": "gpus", "override": "restricted", "allowedValues": [1, "x"]}]},
     "inputs.gpus.allowedValues[1]", "integer"),
    ({"inputs": [{"name": "gpus", "override": "restricted", "allowedValues": [1, 2]}]}, "inputs.gpus.default",
     "one of allowedValues"),
    ({"inputs": [{"name": "api_key", "default": "k"}]}, "inputs.api_key.default", "no stored default"),
    ({"inputs": [{"name": "command", "override": "not-allowed"}]}, "inputs.command.default", "needs a default"),
    ({"inputs": [{"name": "api_key", "required": True, "visible": False}]}, "inputs.api_key.default",
     "needs a default"),
    ({"inputs": [{"name": "gpus", "colour": 1}]}, "inputs[0].colour", "Unknown field"),
    ({"outputs": [{"name": "nope"}]}, "outputs[0].name", "No output 'nope'"),
    ({"environmentTemplate": "nope"}, "environmentTemplate", "No such environment template"),
    ({"environmentTemplateVersion": "9.9.9"}, "environmentTemplateVersion", "no version 9.9.9"),
    ({"sharing": {"mode": "selected", "projectIds": [999]}}, "sharing.projectIds", "No such projects: 999"),
    ({"sharing": {"mode": "all", "projectIds": [1]}}, "sharing.projectIds", "only with mode 'selected'"),
    ({"revision": 7}, "revision", "Unknown field"),
])
def test_a_profile_breaking_a_rule_is_400_naming_the_field(admin, org, version, changes, field, message):
    errors = errors_of(admin.post("/api/v1/service-profiles", profile_body(org, **changes), format="json"))
    assert field in errors and message in errors[field], errors
    assert not ServiceProfile.objects.exists()


def test_only_an_active_version_backs_a_profile(admin, org, template):
    services.version_create(actor=org.users.platform_admin, template=template, version="2.0.0", **version_fields())
    errors = errors_of(admin.post("/api/v1/service-profiles",
                                  profile_body(org, environmentTemplateVersion="2.0.0"), format="json"))
    assert errors == {"environmentTemplateVersion": "Only an active version can back a profile; trainer 2.0.0 is draft."}


def test_a_profile_default_that_breaks_the_spec_is_named_by_its_input(admin, org, template):
    services.version_create(
        actor=org.users.platform_admin, template=template, version="3.0.0", state="active", kind="workspace",
        spec_template={"image": "busybox", "workingDir": "{{ workdir }}"},
        variables=[{"name": "workdir", "type": "string", "default": "/work"}])
    body = profile_body(org, environmentTemplateVersion="3.0.0", inputs=[{"name": "workdir", "default": "relative"}],
                        outputs=[])
    assert errors_of(admin.post("/api/v1/service-profiles", body, format="json")) == {
        "inputs.workdir": "Must be an absolute path (starting with '/'). (at spec.workingDir)"}


def test_moving_to_another_version_carries_the_settings_it_still_has(admin, org, template, profile):
    variables = [v for v in version_fields()["variables"] if v["name"] != "image"]
    services.version_create(actor=org.users.platform_admin, template=template, version="1.1.0", state="active",
                            **version_fields(variables=variables, spec_template={
                                **version_fields()["spec_template"], "image": "busybox"}))
    moved = admin.patch(f"/api/v1/service-profiles/{profile.id}", {"environmentTemplateVersion": "1.1.0"}, format="json")
    assert moved.status_code == 200, moved.json()
    body = moved.json()
    assert body["environmentTemplateVersion"] == "1.1.0" and body["revision"] == 2
    assert [i["name"] for i in body["inputs"]] == ["command", "epochs", "gpus", "memory", "mode", "api_key"]
    assert body["inputs"][4]["override"] == "restricted"


def test_sharing_is_put_and_bumps_the_revision(admin, client_for, org, profile):
    url = f"/api/v1/service-profiles/{profile.id}/sharing"
    response = admin.put(url, {"mode": "selected", "projectIds": [org.b.id, org.b.id]}, format="json")
    assert response.status_code == 200 and response.json() == {"mode": "selected", "projectIds": [org.b.id]}
    assert admin.get(f"/api/v1/service-profiles/{profile.id}").json()["revision"] == 2
    assert admin.put(url, {"mode": "selected", "projectIds": [org.b.id]}, format="json").status_code == 200
    assert ServiceProfile.objects.get().revision == 2  # the same sharing again changes nothing
    assert admin.put(url, {"mode": "everyone"}, format="json").status_code == 400
    assert client_for(org.users.other).put(url, {"mode": "all"}, format="json").status_code == 403  # sees it via B
    assert client_for(org.users.admin).put(url, {"mode": "all"}, format="json").status_code == 403
    assert admin.put(url, {"mode": "none"}, format="json").json() == {"mode": "none", "projectIds": []}
    assert client_for(org.users.other).put(url, {"mode": "all"}, format="json").status_code == 404


def test_system_profiles_are_read_only_and_clone_to_an_editable_copy(admin, org, profile):
    ServiceProfile.objects.filter(pk=profile.pk).update(system=True)
    url = f"/api/v1/service-profiles/{profile.id}"
    for response in (admin.patch(url, {"description": "x"}, format="json"), admin.put(url, {}, format="json"),
                     admin.delete(url), admin.put(f"{url}/sharing", {"mode": "all"}, format="json")):
        assert response.status_code == 403
        assert response.json() == {"code": 403, "message": "System profiles are read-only; clone one to make an editable copy."}

    clone = admin.post(f"{url}/clone", {"name": "my-trainer", "projectId": org.b.id}, format="json")
    assert clone.status_code == 201, clone.json()
    body = clone.json()
    assert (body["name"], body["projectId"], body["system"], body["revision"]) == ("my-trainer", org.b.id, False, 1)
    assert body["sharing"] == {"mode": "none", "projectIds": []}
    assert body["labels"] == {"tier": "gold"} and body["inputs"] == admin.get(url).json()["inputs"]
    assert admin.patch(f"/api/v1/service-profiles/{body['id']}", {"description": "mine"}, format="json").status_code == 200
    assert admin.post(f"{url}/clone", {"name": "my-trainer"}, format="json").status_code == 409
    assert "projectId" in errors_of(admin.post(f"{url}/clone", {"name": "x", "projectId": 999}, format="json"))
    assert admin.post(f"{url}/clone", {"name": "other", "projectId": None}, format="json").json()["projectId"] is None


def test_writes_are_for_platform_admins(client_for, org, profile, version):
    project_admin = client_for(org.users.admin)
    assert project_admin.get(f"/api/v1/service-profiles/{profile.id}").status_code == 200
    for response in (
        project_admin.post("/api/v1/service-profiles", profile_body(org, name="x"), format="json"),
        project_admin.patch(f"/api/v1/service-profiles/{profile.id}", {"description": "x"}, format="json"),
        project_admin.delete(f"/api/v1/service-profiles/{profile.id}"),
        project_admin.post(f"/api/v1/service-profiles/{profile.id}/clone", {"name": "x"}, format="json"),
    ):
        assert response.status_code == 403 and response.json()["code"] == 403
    outsider = client_for(org.users.other)
    assert outsider.patch(f"/api/v1/service-profiles/{profile.id}", {"description": "x"}, format="json").status_code == 404
    assert outsider.delete(f"/api/v1/service-profiles/{profile.id}").status_code == 404


def _names(response) -> list[str]:
    assert response.status_code == 200, response.json()
    return [p["name"] for p in response.json()["serviceProfiles"]]


def test_admin_list_searches_filters_and_sorts(admin, org, make_profile):
    make_profile("notebook-a", display_name="Jupyter Lab", service_type="notebook", sharing={"mode": "all"})
    make_profile("llm", display_name="LLM server", service_type="inference",
                 sharing={"mode": "selected", "projectIds": [org.b.id]})
    make_profile("batch", display_name="Batch jobs")
    listed = admin.get("/api/v1/service-profiles").json()["serviceProfiles"]
    assert [(p["name"], p["serviceType"], p["sharing"]["mode"]) for p in listed] == [
        ("batch", "jobs", "none"), ("llm", "inference", "selected"), ("notebook-a", "notebook", "all")]
    assert all(p["createdAt"] for p in listed)
    assert _names(admin.get("/api/v1/service-profiles?search=jupyter")) == ["notebook-a"]
    assert _names(admin.get("/api/v1/service-profiles?search=LL")) == ["llm"]
    assert _names(admin.get("/api/v1/service-profiles?filterBy=serviceType==inference")) == ["llm"]
    assert _names(admin.get("/api/v1/service-profiles?serviceType=notebook")) == ["notebook-a"]
    assert _names(admin.get("/api/v1/service-profiles?filterBy=sharing!=none")) == ["llm", "notebook-a"]
    assert _names(admin.get("/api/v1/service-profiles?filterBy=createdAt>=2000-01-01T00:00:00Z")) == [
        "batch", "llm", "notebook-a"]
    assert _names(admin.get("/api/v1/service-profiles?filterBy=createdAt<=2000-01-01T00:00:00Z")) == []
    assert _names(admin.get("/api/v1/service-profiles?sortBy=serviceType&sortOrder=desc")) == [
        "notebook-a", "batch", "llm"]
    assert _names(admin.get("/api/v1/service-profiles?limit=2")) == ["batch", "llm"]
    assert admin.get("/api/v1/service-profiles?filterBy=colour==red").status_code == 400
    assert admin.get("/api/v1/service-profiles?serviceType=games").status_code == 400


def test_the_admin_list_query_count_is_flat(admin, org, version, django_assert_num_queries):
    ServiceProfileFactory(template_version=version, shared_with=[org.a, org.b], sharing_mode="selected")
    with CaptureQueriesContext(connection) as one:
        assert len(admin.get("/api/v1/service-profiles").json()["serviceProfiles"]) == 1
    for _ in range(60):
        ServiceProfileFactory(template_version=version, shared_with=[org.a], sharing_mode="selected")
    with django_assert_num_queries(len(one.captured_queries)):
        assert len(admin.get("/api/v1/service-profiles?limit=100").json()["serviceProfiles"]) == 61
