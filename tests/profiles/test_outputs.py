"""`GET /api/v1/workloads/{id}/outputs`: the snapshot taken at launch, evaluated against the endpoints the sync
fills in; sensitive values for the submitter, project admins and platform admins only; the launch's Secret for the pipeline."""

import base64

import pytest

from profiles import services
from profiles.models import LaunchSecret
from profiles.selectors import launch_secret_manifest, workload_outputs
from workloads.models import Workload

pytestmark = pytest.mark.django_db


@pytest.fixture
def launched(client_for, org, profile):
    response = client_for(org.users.member).post(
        f"/api/v1/service-profiles/{profile.id}/launch",
        {"projectId": org.a.id, "name": "run1", "inputs": {"command": "python", "api_key": "k-123", "epochs": 4}},
        format="json")
    assert response.status_code == 201, response.json()
    return Workload.objects.get(pk=response.json()["id"])


def outputs(api, workload) -> dict:
    response = api.get(f"/api/v1/workloads/{workload.pk}/outputs")
    assert response.status_code == 200, response.json()
    return {o["name"]: (o["label"], o["value"]) for o in response.json()["outputs"]}


def test_outputs_are_null_until_the_sync_knows_the_endpoints(client_for, org, launched):
    member = client_for(org.users.member)
    assert outputs(member, launched) == {"url": ("URL", None), "address": ("Address", None),
                                         "epochs": ("Epochs", "4 epochs"), "key": ("API key", "k-123")}
    launched.endpoints = {"url": "http://gpu.example.com/alpha/run1", "serviceAddress": "run1-0a1b.studio-alpha.svc",
                          "ports": [{"name": "port-80", "port": 80, "nodePort": None}], "serviceType": "ClusterIP"}
    launched.save(update_fields=["endpoints"])
    assert outputs(member, launched) == {
        "url": ("URL", "http://gpu.example.com/alpha/run1/ui"), "address": ("Address", "run1-0a1b.studio-alpha.svc"),
        "epochs": ("Epochs", "4 epochs"), "key": ("API key", "k-123")}


@pytest.mark.parametrize("who", ["member", "admin", "platform_admin"])  # member: the one who launched it
def test_the_submitter_project_admins_and_platform_admins_see_sensitive_values(client_for, org, launched, who):
    assert outputs(client_for(getattr(org.users, who)), launched)["key"] == ("API key", "k-123")


def test_viewers_and_other_members_read_sensitive_values_masked(client_for, org, launched):
    from studio.models import Level
    from tests.factories import MembershipFactory, UserFactory

    colleague = UserFactory(username="colleague")
    MembershipFactory(user=colleague, project=org.a, role=Level.MEMBER)
    for user in (org.users.viewer, colleague):
        seen = outputs(client_for(user), launched)
        assert seen["key"] == ("API key", "***") and seen["epochs"] == ("Epochs", "4 epochs"), user
        assert "k-123" not in client_for(user).get(f"/api/v1/workloads/{launched.pk}").content.decode()


def test_anyone_else_reads_sensitive_values_masked_and_the_api_answers_them_404(client_for, org, launched):
    assert client_for(org.users.other).get(f"/api/v1/workloads/{launched.pk}/outputs").status_code == 404
    # Who sees a workload today is its members; the masking keeps the rule should that ever widen.
    masked = {o["name"]: o["value"] for o in workload_outputs(workload=launched, user=org.users.other)}
    assert masked == {"url": None, "address": None, "epochs": "4 epochs", "key": "***"}


def test_a_workload_not_launched_from_a_profile_has_no_outputs(client_for, org):
    api = client_for(org.users.member)
    created = api.post("/api/v1/workloads/trainings", {
        "name": "plain", "projectId": org.a.id, "clusterId": str(org.cluster.id), "spec": {"image": "busybox"}},
        format="json").json()
    assert api.get(f"/api/v1/workloads/{created['workloadId']}/outputs").json() == {"outputs": []}


def test_a_generated_token_reaches_the_pod_as_a_secret_and_the_member_as_an_output(client_for, org, template, make_profile):
    version = services.version_create(
        actor=org.users.platform_admin, template=template, version="2.0.0", state="active", kind="workspace",
        spec_template={"image": "jupyter/base-notebook:latest", "ports": [{"container": 8888}],
                       "environmentVariables": [{"name": "JUPYTER_TOKEN", "value": "{{ generated.token }}"}]},
        outputs=[{"name": "login", "label": "Login", "expression": "{{ workload.url }}/lab?token={{ generated.token }}",
                  "sensitive": True},
                 {"name": "token", "label": "Token", "expression": "{{ generated.token }}", "sensitive": True}])
    profile = make_profile("notebook", template_version=version, inputs=[])
    api = client_for(org.users.member)
    ids = [api.post(f"/api/v1/service-profiles/{profile.id}/launch", {"projectId": org.a.id, "name": name},
                    format="json").json()["id"] for name in ("nb1", "nb2")]
    first, second = (Workload.objects.get(pk=i) for i in ids)
    secret = LaunchSecret.objects.get(workload_id=first.pk)
    token = secret.data["generated.token"]
    assert len(token) >= 32 and token != LaunchSecret.objects.get(workload_id=second.pk).data["generated.token"]
    assert first.spec["environmentVariables"] == [
        {"name": "JUPYTER_TOKEN", "secret": {"name": secret.name, "key": "generated.token"}}]
    assert token not in str(first.spec)

    first.endpoints = {"url": "http://h/alpha/nb1/8888"}
    first.save(update_fields=["endpoints"])
    assert outputs(api, first) == {"login": ("Login", f"http://h/alpha/nb1/8888/lab?token={token}"),
                                   "token": ("Token", token)}

    manifest = launch_secret_manifest(first.pk, namespace="studio-alpha", labels={"paas-studio/workload-id": str(first.pk)})
    assert manifest["kind"] == "Secret" and manifest["metadata"] == {
        "name": secret.name, "namespace": "studio-alpha", "labels": {"paas-studio/workload-id": str(first.pk)}}
    assert base64.b64decode(manifest["data"]["generated.token"]).decode() == token


def test_a_launch_without_secrets_has_no_secret_manifest(client_for, org, profile):
    body = client_for(org.users.member).post(f"/api/v1/service-profiles/{profile.id}/launch",
                                             {"projectId": org.a.id, "name": "r", "inputs": {"command": "c"}},
                                             format="json").json()
    assert launch_secret_manifest(body["id"], namespace="studio-alpha", labels={}) is None
