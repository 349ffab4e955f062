"""Environment templates and their versions through HTTP: CRUD, the save-time rules, states, roles."""

import copy

import pytest

from profiles.models import TemplateVersion
from tests.profiles.conftest import OUTPUTS, SPEC_TEMPLATE, VARIABLES

pytestmark = pytest.mark.django_db


def version_body(**changes) -> dict:
    body = {"version": "1.0.0", "kind": "training", "specTemplate": copy.deepcopy(SPEC_TEMPLATE),
            "variables": copy.deepcopy(VARIABLES), "outputs": copy.deepcopy(OUTPUTS)}
    return {**body, **changes}


@pytest.fixture
def admin(client_for, org):
    return client_for(org.users.platform_admin)


@pytest.fixture
def template_id(admin):
    response = admin.post("/api/v1/environment-templates", {"name": "trainer", "description": "Trains."}, format="json")
    assert response.status_code == 201, response.json()
    return response.json()["id"]


def errors_of(response) -> dict:
    assert response.status_code == 400, response.json()
    return {e["field"]: e["message"] for e in response.json()["errors"]}


def test_template_and_version_crud(admin, template_id, org):
    versions = f"/api/v1/environment-templates/{template_id}/versions"
    created = admin.post(versions, version_body(), format="json")
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["state"] == "draft" and body["templateId"] == template_id
    assert body["variables"][2] == {"name": "epochs", "type": "integer", "required": False, "default": 3,
                                    "description": "", "min": 1, "max": 100, "pattern": None, "options": None}
    assert admin.post(versions, version_body(version="1.1.0", kind="workspace"), format="json").status_code == 201

    listed = admin.get(versions).json()
    assert [v["version"] for v in listed["versions"]] == ["1.0.0", "1.1.0"] and listed["next"] is None
    template = admin.get(f"/api/v1/environment-templates/{template_id}").json()
    assert template["versions"] == [{"version": "1.0.0", "kind": "training", "state": "draft"},
                                    {"version": "1.1.0", "kind": "workspace", "state": "draft"}]
    assert template["sharing"] == {"mode": "none", "projectIds": []} and template["system"] is False

    patched = admin.patch(f"{versions}/1.1.0", {"variables": VARIABLES[:1] + VARIABLES[1:]}, format="json")
    assert patched.status_code == 200
    assert admin.delete(f"{versions}/1.1.0").status_code == 204
    assert admin.get(f"{versions}/1.1.0").status_code == 404

    shared = admin.put(f"/api/v1/environment-templates/{template_id}/sharing",
                       {"mode": "selected", "projectIds": [org.b.id]}, format="json")
    assert shared.status_code == 200 and shared.json() == {"mode": "selected", "projectIds": [org.b.id]}
    renamed = admin.patch(f"/api/v1/environment-templates/{template_id}", {"name": "other"}, format="json")
    assert errors_of(renamed) == {"name": "The unique name cannot be changed once created."}
    assert admin.delete(f"/api/v1/environment-templates/{template_id}").status_code == 204


def test_duplicate_names_and_versions_are_409(admin, template_id):
    assert admin.post("/api/v1/environment-templates", {"name": "trainer"}, format="json").status_code == 409
    versions = f"/api/v1/environment-templates/{template_id}/versions"
    assert admin.post(versions, version_body(), format="json").status_code == 201
    assert admin.post(versions, version_body(), format="json").status_code == 409


@pytest.mark.parametrize("changes,field,message", [
    ({"specTemplate": {**SPEC_TEMPLATE, "workingDir": "{{ workdir }}"}}, "specTemplate.workingDir",
     "Unknown placeholder {{ workdir }}"),
    ({"specTemplate": {**SPEC_TEMPLATE, "args": "--key {{ api_key }}"}}, "specTemplate.args",
     "whole value of an environment variable"),
    ({"specTemplate": {**SPEC_TEMPLATE, "compute": {"gpuDevicesRequest": 1, "gpuPortionRequest": 2}}},
     "specTemplate.compute.gpuPortionRequest", "at most 1"),
    ({"specTemplate": {**SPEC_TEMPLATE, "completions": "{{ epochs }}x"}}, "specTemplate.completions", "integer"),
    ({"specTemplate": {**SPEC_TEMPLATE, "imagee": "x"}}, "specTemplate.imagee", "Unknown field"),
    ({"kind": "inference", "specTemplate": {**SPEC_TEMPLATE, "completions": 2}}, "specTemplate.completions",
     "Unknown field"),
    ({"variables": VARIABLES + [{"name": "epochs", "type": "string"}]}, "variables[7].name", "Another variable"),
    ({"variables": VARIABLES + [{"name": "x-y", "type": "string"}]}, "variables[7].name", "letter"),
    ({"variables": VARIABLES + [{"name": "e", "type": "enum"}]}, "variables[7].options", "needs options"),
    ({"variables": VARIABLES + [{"name": "e", "type": "enum", "options": ["a"], "default": "b"}]},
     "variables[7].default", "one of: a"),
    ({"variables": VARIABLES + [{"name": "n", "type": "integer", "default": "many"}]}, "variables[7].default",
     "integer"),
    ({"variables": VARIABLES + [{"name": "n", "type": "integer", "min": 5, "max": 1}]}, "variables[7].max",
     "at least min"),
    ({"variables": VARIABLES + [{"name": "n", "type": "integer", "min": 1, "default": 0}]},
     "variables[7].default", "at least 1"),
    ({"variables": VARIABLES + [{"name": "s", "type": "string", "min": 1}]}, "variables[7].min", "bounds"),
    ({"variables": VARIABLES + [{"name": "s", "type": "string", "pattern": "("}]}, "variables[7].pattern",
     "regular expression"),
    ({"variables": VARIABLES + [{"name": "s", "type": "secret", "default": "x"}]}, "variables[7].default",
     "no stored default"),
    ({"variables": VARIABLES + [{"name": "s", "type": "colour"}]}, "variables[7].type", "valid choice"),
    ({"outputs": OUTPUTS + [{"name": "x", "expression": "{{ workload.ip }}"}]}, "outputs[4].expression",
     "Unknown name workload.ip"),
    ({"outputs": OUTPUTS + [{"name": "x", "expression": "constant"}]}, "outputs[4].expression", "at least one"),
    ({"outputs": OUTPUTS + [{"name": "t", "expression": "{{ generated.token }}"}]}, "outputs[4].sensitive",
     "must be sensitive"),
    ({"outputs": OUTPUTS + [{"name": "url", "expression": "{{ workload.url }}"}]}, "outputs[4].name",
     "Another output"),
    ({"version": "latest"}, "version", "1.0.0"),
    ({"state": "retired"}, "state", "valid choice"),
])
def test_a_version_breaking_a_rule_is_400_naming_the_field(admin, template_id, changes, field, message):
    response = admin.post(f"/api/v1/environment-templates/{template_id}/versions", version_body(**changes),
                          format="json")
    errors = errors_of(response)
    assert field in errors and message in errors[field], errors


def test_every_problem_of_a_version_in_one_answer(admin, template_id):
    """An unknown placeholder, a misplaced secret and a wrong type elsewhere in the spec: all three named at once
    (the type used to be named only once the placeholders were fixed)."""
    spec = {**SPEC_TEMPLATE, "workingDir": "{{ workdir }}", "args": "--key {{ api_key }}", "completions": "many"}
    response = admin.post(f"/api/v1/environment-templates/{template_id}/versions",
                          version_body(specTemplate=spec), format="json")
    errors = errors_of(response)
    assert "Unknown placeholder {{ workdir }}" in errors["specTemplate.workingDir"], errors
    assert "whole value of an environment variable" in errors["specTemplate.args"], errors
    assert "integer" in errors["specTemplate.completions"], errors
    assert len(errors) == 3, errors


def test_a_spec_error_from_a_variable_default_is_named_in_the_spec_template(admin, template_id):
    variables = [*VARIABLES[:3], {"name": "gpus", "type": "integer", "default": -1}, *VARIABLES[4:]]
    response = admin.post(f"/api/v1/environment-templates/{template_id}/versions",
                          version_body(variables=variables), format="json")
    assert errors_of(response) == {"specTemplate.compute.gpuDevicesRequest": "Must be at least 0."}


def test_an_active_version_is_not_edited_only_disabled(admin, template_id):
    versions = f"/api/v1/environment-templates/{template_id}/versions"
    admin.post(versions, version_body(state="active"), format="json")
    edit = admin.patch(f"{versions}/1.0.0", {"kind": "workspace", "specTemplate": {"image": "x"}}, format="json")
    assert errors_of(edit) == {
        "kind": "This version is active and cannot be edited; create a new version.",
        "specTemplate": "This version is active and cannot be edited; create a new version.",
    }
    same = admin.put(f"{versions}/1.0.0", version_body(state="active"), format="json")
    assert same.status_code == 200  # sending it back unchanged is no edit
    assert admin.patch(f"{versions}/1.0.0", {"state": "draft"}, format="json").status_code == 400
    assert admin.patch(f"{versions}/1.0.0", {"state": "disabled"}, format="json").json()["state"] == "disabled"
    assert admin.patch(f"{versions}/1.0.0", {"state": "active"}, format="json").json()["state"] == "active"


def test_a_draft_is_edited_and_checked_again(admin, template_id):
    versions = f"/api/v1/environment-templates/{template_id}/versions"
    admin.post(versions, version_body(), format="json")
    bad = admin.patch(f"{versions}/1.0.0", {"specTemplate": {**SPEC_TEMPLATE, "image": "{{ img }}"}}, format="json")
    assert "specTemplate.image" in errors_of(bad)
    good = admin.patch(f"{versions}/1.0.0", {"specTemplate": {**SPEC_TEMPLATE, "image": "busybox"},
                                             "state": "active"}, format="json")
    assert good.status_code == 200 and good.json()["specTemplate"]["image"] == "busybox"
    assert TemplateVersion.objects.get().state == "active"


def test_a_version_backing_a_profile_cannot_be_deleted(admin, client_for, org, profile):
    template_id = profile.template_version.template_id
    response = admin.delete(f"/api/v1/environment-templates/{template_id}/versions/1.0.0")
    assert response.status_code == 409 and response.json()["code"] == 409
    assert admin.delete(f"/api/v1/environment-templates/{template_id}").status_code == 409


def test_others_read_what_their_projects_see_and_may_not_write(admin, client_for, org, template_id):
    versions = f"/api/v1/environment-templates/{template_id}/versions"
    admin.post(versions, version_body(), format="json")
    member = client_for(org.users.member)
    assert member.get(f"/api/v1/environment-templates/{template_id}").status_code == 404
    assert member.get(versions).status_code == 404
    assert member.patch(f"/api/v1/environment-templates/{template_id}", {"description": "x"},
                        format="json").status_code == 404
    assert member.post(versions, version_body(version="2.0.0"), format="json").status_code == 404

    admin.put(f"/api/v1/environment-templates/{template_id}/sharing", {"mode": "all"}, format="json")
    assert [t["name"] for t in member.get("/api/v1/environment-templates").json()["environmentTemplates"]] == ["trainer"]
    assert member.get(f"{versions}/1.0.0").json()["version"] == "1.0.0"
    for response in (
        member.patch(f"/api/v1/environment-templates/{template_id}", {"description": "x"}, format="json"),
        member.post(versions, version_body(version="2.0.0"), format="json"),
        member.delete(f"{versions}/1.0.0"),
        member.post("/api/v1/environment-templates", {"name": "mine"}, format="json"),
    ):
        assert response.status_code == 403 and response.json()["code"] == 403
