"""Launch from the catalog: the rendered spec, provenance, secrets, input errors, edits after launch."""

import json
import re

import pytest
from django.db import connection

from profiles import services
from profiles.models import LaunchSecret
from workloads.models import Workload

pytestmark = pytest.mark.django_db


@pytest.fixture
def member(client_for, org):
    return client_for(org.users.member)


def launch(api, profile, project, name="run1", **inputs):
    return api.post(f"/api/v1/service-profiles/{profile.id}/launch",
                    {"projectId": project.id, "name": name, "inputs": inputs}, format="json")


def errors_of(response) -> dict:
    assert response.status_code == 400, response.json()
    return {e["field"]: e["message"] for e in response.json()["errors"]}


def test_launch_renders_the_spec_applies_the_profile_and_records_provenance(member, org, profile):
    response = launch(member, profile, org.a, command="python", gpus="1", epochs=10, api_key="s3cret-value")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body == member.get(f"/api/v1/workloads/{body['id']}").json()
    # `source` is Run:ai's (CLI, Control-plane, Other); where it came from in PaaS Studio is launchedFrom.
    assert (body["type"], body["source"], body["launchedFrom"], body["profile"]) == (
        "training", "Control-plane", "catalog", {"id": profile.id, "name": "trainer-job", "revision": 1,
                                                 "currentRevision": 1, "outdated": False})

    workload = Workload.objects.get(pk=body["id"])
    secret = LaunchSecret.objects.get(workload_id=workload.pk)
    assert workload.spec == {
        "image": "python:3.11",
        "command": "python",
        "args": "--epochs 10 --run run1",
        "compute": {"gpuDevicesRequest": 1, "cpuMemoryRequest": "1Gi"},
        "environmentVariables": [
            {"name": "API_KEY", "secret": {"name": secret.name, "key": "api_key"}},
            {"name": "MODE", "value": "fast"},
            {"name": "LOG_LEVEL", "value": "debug"},
        ],
        "labels": [{"name": "team", "value": "ml"}, {"name": "tier", "value": "gold"}],
        "annotations": [{"name": "example.com/owner", "value": "ml team"}],
        "completions": 1, "parallelism": 1, "backoffLimit": 6,
        # the secure tenant default's defaults (policies.fallback), filled in where the spec is silent
        "security": {"allowPrivilegeEscalation": False, "hostIpc": False, "hostNetwork": False},
    }
    assert workload.gpu_request == 1 and workload.request["spec"] == workload.spec
    assert (workload.profile_id, workload.profile_name, workload.profile_revision) == (profile.id, "trainer-job", 1)
    assert workload.launch_inputs == {"image": "python:3.11", "command": "python", "epochs": 10, "gpus": 1,
                                      "memory": "1Gi", "mode": "fast", "api_key": "***"}
    assert [o["name"] for o in workload.outputs] == ["url", "address", "epochs", "key"]
    assert workload.outputs[0] == {"name": "url", "label": "URL", "expression": "{{ workload.url }}/ui",
                                   "sensitive": False}
    assert secret.name.startswith("run1-in-") and secret.data == {"api_key": "s3cret-value"}


def test_a_secret_is_never_in_the_spec_the_echo_or_the_database_in_clear(member, org, profile):
    body = launch(member, profile, org.a, command="python", api_key="s3cret-value").json()
    for url in (f"/api/v1/workloads/{body['id']}", f"/api/v1/workloads/trainings/{body['id']}",
                "/api/v1/workloads"):
        assert "s3cret-value" not in member.get(url).content.decode()
    workload = Workload.objects.get(pk=body["id"])
    assert "s3cret-value" not in json.dumps([workload.spec, workload.request, workload.launch_inputs])
    with connection.cursor() as cursor:
        cursor.execute("SELECT data_json FROM profiles_launchsecret")
        (stored,) = cursor.fetchone()
    assert "s3cret-value" not in stored


def test_an_optional_secret_left_empty_leaves_no_variable_and_no_secret(member, org, profile):
    body = launch(member, profile, org.a, command="python").json()
    workload = Workload.objects.get(pk=body["id"])
    assert [e["name"] for e in workload.spec["environmentVariables"]] == ["MODE", "LOG_LEVEL"]
    assert "api_key" not in workload.launch_inputs
    assert not LaunchSecret.objects.exists()


@pytest.mark.parametrize("inputs,field,message", [
    ({"command": "python", "image": "ubuntu:24.04"}, "inputs.image", "cannot be overridden"),
    ({}, "inputs.command", "required"),
    ({"command": ""}, "inputs.command", "required"),
    ({"command": "python", "gpus": "two"}, "inputs.gpus", "Must be an integer"),
    ({"command": "python", "gpus": True}, "inputs.gpus", "Must be an integer"),
    ({"command": "python", "gpus": 5}, "inputs.gpus", "at most 2"),
    ({"command": "python", "memory": "1 Gi"}, "inputs.memory", "quantity"),
    ({"command": "python", "mode": "turbo"}, "inputs.mode", "one of"),
    ({"command": ["python"]}, "inputs.command", "string"),
    ({"command": "python", "colour": "red"}, "inputs.colour", "Unknown input"),
])
def test_a_launch_with_a_bad_input_is_400_naming_it(member, org, profile, inputs, field, message):
    errors = errors_of(launch(member, profile, org.a, **inputs))
    assert list(errors) == [field] and message in errors[field]
    assert not Workload.objects.exists()


def test_a_restricted_input_takes_only_its_allowed_values(member, org, make_profile):
    profile = make_profile(inputs=[{"name": "mode", "override": "restricted", "allowedValues": ["fast"]}])
    errors = errors_of(launch(member, profile, org.a, command="python", mode="slow"))
    assert errors == {"inputs.mode": "Must be one of the allowed values: fast."}
    assert launch(member, profile, org.a, command="python", mode="fast").status_code == 201


def test_bad_launch_bodies(member, org, profile):
    url = f"/api/v1/service-profiles/{profile.id}/launch"
    assert "name" in errors_of(member.post(url, {"projectId": org.a.id, "name": "Bad Name"}, format="json"))
    assert "projectId" in errors_of(member.post(url, {"name": "run"}, format="json"))
    assert "inputs" in errors_of(member.post(url, {"projectId": org.a.id, "name": "r", "inputs": [1]}, format="json"))
    assert "colour" in errors_of(member.post(url, {"projectId": org.a.id, "name": "r", "colour": 1}, format="json"))
    assert member.post("/api/v1/service-profiles/999/launch", {"projectId": org.a.id, "name": "r"},
                       format="json").status_code == 404


def test_a_user_value_the_spec_refuses_is_named_by_its_input(member, org, template, make_profile):
    version = services.version_create(
        actor=org.users.platform_admin, template=template, version="2.0.0", state="active", kind="workspace",
        spec_template={"image": "busybox", "workingDir": "{{ workdir }}"},
        variables=[{"name": "workdir", "type": "string", "default": "/work"}])
    profile = make_profile("workspace", template_version=version, inputs=[])
    errors = errors_of(launch(member, profile, org.a, workdir="relative/dir"))
    assert errors == {"inputs.workdir": "Must be an absolute path (starting with '/'). (at spec.workingDir)"}


def test_a_second_live_workload_of_the_same_name_is_409(member, org, profile):
    assert launch(member, profile, org.a, command="python").status_code == 201
    response = launch(member, profile, org.a, command="python")
    assert response.status_code == 409 and "run1" in response.json()["message"]


def test_launch_enqueues_the_push_on_commit(member, org, profile, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        assert launch(member, profile, org.a, command="python").status_code == 201
    assert len(callbacks) == 1


def test_editing_the_profile_changes_only_later_launches(member, client_for, org, profile):
    first = Workload.objects.get(pk=launch(member, profile, org.a, command="python").json()["id"])
    frozen = {f: getattr(first, f) for f in ("spec", "request", "profile_revision", "launch_inputs", "outputs")}

    admin = client_for(org.users.platform_admin)
    edited = admin.patch(f"/api/v1/service-profiles/{profile.id}", {
        "labels": {"tier": "silver"}, "extraConfig": {"LOG_LEVEL": "info"},
        "inputs": [{"name": "image", "override": "not-allowed", "default": "python:3.12"}, {"name": "epochs", "default": 7}],
        "outputs": [{"name": "url", "label": "Open"}, {"name": "key", "visible": False}],
    }, format="json")
    assert edited.status_code == 200 and edited.json()["revision"] == 2

    first.refresh_from_db()
    assert {f: getattr(first, f) for f in frozen} == frozen
    assert member.get(f"/api/v1/workloads/{first.pk}").json()["profile"]["revision"] == 1
    assert [o["label"] for o in member.get(f"/api/v1/workloads/{first.pk}/outputs").json()["outputs"]] == [
        "URL", "Address", "Epochs", "API key"]

    second = Workload.objects.get(pk=launch(member, profile, org.a, "run2", command="python").json()["id"])
    assert second.profile_revision == 2
    assert second.spec["image"] == "python:3.12" and second.spec["args"] == "--epochs 7 --run run2"
    assert {"name": "tier", "value": "silver"} in second.spec["labels"]
    assert {"name": "LOG_LEVEL", "value": "info"} in second.spec["environmentVariables"]
    assert [o["label"] for o in second.outputs] == ["Open", "Address", "Epochs"]


def test_deleting_the_profile_leaves_its_workloads_running_with_their_snapshot(member, client_for, org, profile):
    body = launch(member, profile, org.a, command="python", api_key="k").json()
    assert client_for(org.users.platform_admin).delete(f"/api/v1/service-profiles/{profile.id}").status_code == 204
    workload = Workload.objects.get(pk=body["id"])
    assert workload.desired_phase == "Running" and workload.deleted_at is None
    got = member.get(f"/api/v1/workloads/{body['id']}").json()
    assert got["profile"] == {"id": profile.id, "name": "trainer-job", "revision": 1, "currentRevision": None,
                              "outdated": False}  # nothing to upgrade to
    outputs = member.get(f"/api/v1/workloads/{body['id']}/outputs").json()["outputs"]
    assert {o["name"]: o["value"] for o in outputs}["key"] == "k"


def test_a_required_input_sent_empty_is_a_400_not_its_default(member, org, make_profile):
    profile = make_profile(inputs=[{"name": "epochs", "required": True}])
    errors = errors_of(launch(member, profile, org.a, command="python", epochs=""))
    assert errors == {"inputs.epochs": "This input is required; an empty value is not accepted."}
    assert not Workload.objects.exists()
    assert launch(member, profile, org.a, command="python").status_code == 201  # left out: the default, 3


def test_every_problem_of_a_launch_comes_at_once(member, org, profile):
    """A bad name and bad inputs in one answer; a spec the policy refuses and a quota it exceeds, both named."""
    errors = errors_of(launch(member, profile, org.a, name="Bad Name", gpus="two", mode="turbo"))
    assert set(errors) == {"name", "inputs.gpus", "inputs.command", "inputs.mode"}
    from policies.models import Policy

    Policy.objects.create(policy_type="trainings", scope="project", project=org.a, scope_key=f"project:{org.a.pk}",
                          name="alpha", rules={"compute": {"cpuMemoryRequest": {"max": "512Mi"}}})
    org.a.gpu_deserved, org.a.gpu_limit = 1, 1
    org.a.save(update_fields=["gpu_deserved", "gpu_limit"])
    errors = errors_of(launch(member, profile, org.a, command="python", gpus=2))
    assert any("512Mi" in message for message in errors.values()), errors  # the policy's refusal
    assert any("quota" in message.lower() or "limit" in message.lower() for field, message in errors.items()
               if field != "spec.compute.cpuMemoryRequest"), errors  # and the quota's, in the same answer
    assert not Workload.objects.exists()


def test_a_taken_name_is_named_with_the_inputs_problems(member, org, profile):
    assert launch(member, profile, org.a, command="python").status_code == 201
    errors = errors_of(launch(member, profile, org.a, gpus="two", command="python"))
    assert set(errors) == {"name", "inputs.gpus"} and "already exists" in errors["name"]


def test_the_portal_launch_form_shows_the_name_and_the_inputs_problems_at_once(org, profile):
    from django.test import Client
    from django.urls import reverse

    browser = Client()
    browser.force_login(org.users.member)
    url = reverse("catalog-launch", args=[profile.pk])
    page = browser.post(url, {"name": "Bad Name", "inputs.gpus": "5", "inputs.command": "python"})
    text = page.content.decode()
    assert page.status_code == 200 and not Workload.objects.exists()
    assert "at most 2" in text and "Bad Name" in text
    assert re.search(r'name="name"[^>]*aria-invalid="true"|aria-invalid="true"[^>]*name="name"', text), text[:3000]


def test_try_it_shows_the_name_and_the_inputs_problems_at_once_on_a_draft(org, make_profile):
    from django.test import Client
    from django.urls import reverse

    draft = make_profile("half-done", draft_step="inputs")
    browser = Client()
    browser.force_login(org.users.platform_admin)
    page = browser.post(reverse("profile-try", args=[draft.pk]), {
        "projectId": str(org.a.pk), "name": "Bad Name", "inputs.gpus": "5", "inputs.command": "python"})
    text = page.content.decode()
    assert page.status_code == 200 and "at most 2" in text
    assert re.search(r'name="name"[^>]*aria-invalid="true"|aria-invalid="true"[^>]*name="name"', text)
    assert "still being set up" not in text  # a draft may be tried
