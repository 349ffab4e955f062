"""A colleague's launch Secret (security round 3, S07): a catalog launch keeps its secret values (a notebook's
token, an `hf_token`) in a Secret of the project's namespace, readable by its submitter and the project's admins
only. Another member may not point a pod at it — by environment variable, secret volume, git or s3 credentials or
image pull secret, in any kind of workload — nor change (update, upgrade) a workload that uses it while it does."""

import pytest

from profiles import services as profile_services
from profiles.models import LaunchSecret
from studio.models import Level
from tests.factories import MembershipFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def launched(client_for, org, make_profile):
    """bob's notebook, launched from the catalog: its token is in the launch Secret `name`."""
    profile = make_profile()
    bob = client_for(org.users.member)
    made = bob.post(f"/api/v1/service-profiles/{profile.id}/launch", {"projectId": org.a.id, "name": "nb"},
                    format="json")
    assert made.status_code == 201, made.json()
    secret = LaunchSecret.objects.get(workload_id=made.json()["id"])
    assert "generated.token" in secret.data
    return {"id": made.json()["id"], "name": secret.name, "profile": profile}


@pytest.fixture
def eve(client_for, org):
    """Another member of project alpha."""
    user = UserFactory(username="eve")
    MembershipFactory(user=user, project=org.a, role=Level.MEMBER)
    return client_for(user)


def references(name: str) -> dict:
    """Each way a spec names a Secret, as (field that names it, spec)."""
    return {
        "environmentVariables[0].secret.name": {
            "environmentVariables": [{"name": "T", "secret": {"name": name, "key": "generated.token"}}]},
        "environmentVariables[0].userCredential.name": {
            "environmentVariables": [{"name": "T", "userCredential": {"name": name, "key": "generated.token"}}]},
        "storage.secretVolume[0].secret": {"storage": {"secretVolume": [{"secret": name, "mountPath": "/s"}]}},
        "storage.git[0].secretRef.name": {"storage": {"git": [{"repository": "https://example.com/r.git", "path": "/g",
                                                               "secretRef": {"name": name,
                                                                             "secretKeyOfPassword": "generated.token"}}]}},
        "storage.git[0].passwordSecret": {"storage": {"git": [{"repository": "https://example.com/r.git", "path": "/g",
                                                               "passwordSecret": name,
                                                               "secretKeyOfPassword": "generated.token"}]}},
        "storage.s3[0].accessKeySecret": {"storage": {"s3": [{"bucket": "b", "path": "/s3", "accessKeySecret": name}]}},
        "imagePullSecrets[0].name": {"imagePullSecrets": [{"name": name}]},
    }


KINDS = {"trainings": {}, "workspaces": {}, "inferences": {},
         "distributed": {"distributedFramework": "PyTorch", "numWorkers": 1}}


def submit(api, org, path, spec, name="steal"):
    return api.post(f"/api/v1/workloads/{path}", {"name": name, "projectId": org.a.id, "clusterId": str(org.cluster.id),
                                                  "spec": {"image": "alpine", **KINDS[path], **spec}}, format="json")


@pytest.mark.parametrize("path", KINDS)
def test_a_colleague_cannot_point_a_pod_at_a_launch_secret(launched, eve, org, path):
    for field, spec in references(launched["name"]).items():
        if path == "inferences" and field.startswith("storage.s3"):
            continue  # an inference has no s3 storage
        answer = submit(eve, org, path, spec)
        assert answer.status_code == 400, (field, answer.content)
        assert [e["field"] for e in answer.json()["errors"]] == [f"spec.{field}"], answer.json()
        assert "launch values of workload nb" in answer.json()["errors"][0]["message"]


def test_a_colleague_cannot_point_a_distributed_master_at_it(launched, eve, org):
    body = {"name": "d", "projectId": org.a.id, "clusterId": str(org.cluster.id), "masterSpecSameAsWorker": False,
            "spec": {"image": "alpine", "distributedFramework": "PyTorch", "numWorkers": 1},
            "masterSpec": {"image": "alpine", "imagePullSecrets": [{"name": launched["name"]}]}}
    answer = eve.post("/api/v1/workloads/distributed", body, format="json")
    assert answer.status_code == 400 and answer.json()["errors"][0]["field"] == "masterSpec.imagePullSecrets[0].name"


def test_its_submitter_and_the_project_admin_may(launched, client_for, org):
    spec = references(launched["name"])["environmentVariables[0].secret.name"]
    assert submit(client_for(org.users.member), org, "trainings", spec, name="mine").status_code == 200
    assert submit(client_for(org.users.admin), org, "trainings", spec, name="admins").status_code == 200
    # An excluded item reaches no pod: nothing to refuse.
    excluded = {"imagePullSecrets": [{"name": launched["name"], "exclude": True}]}
    assert submit(client_for(org.users.member), org, "trainings", excluded, name="none").status_code == 200


@pytest.fixture
def bobs_inference(launched, client_for, org):
    """An inference of bob's whose pods read his notebook's token (his to use)."""
    spec = references(launched["name"])["environmentVariables[0].secret.name"]
    made = submit(client_for(org.users.member), org, "inferences", spec, name="serve")
    assert made.status_code == 200, made.json()
    return f"/api/v1/workloads/inferences/{made.json()['workloadId']}"


def test_a_colleague_cannot_update_a_workload_that_keeps_the_reference(bobs_inference, eve, client_for, org):
    swapped = eve.patch(bobs_inference, {"spec": {"image": "evil/reader:1"}}, format="json")
    assert swapped.status_code == 400, swapped.content
    assert swapped.json()["errors"][0]["field"] == "spec.environmentVariables[0].secret.name"
    # Dropping the reference is a change she may make; the project's admin may change it as it is.
    assert eve.patch(bobs_inference, {"spec": {"image": "evil/reader:1", "environmentVariables": []}},
                     format="json").status_code == 202
    assert client_for(org.users.admin).patch(bobs_inference, {"spec": {"image": "python:3.12"}},
                                             format="json").status_code == 202


def test_a_colleague_cannot_upgrade_a_catalog_workload_that_reads_its_launch_secret(launched, eve, client_for, org,
                                                                                   notebook_version):
    root = org.users.platform_admin
    version = profile_services.version_create(
        actor=root, template=notebook_version.template, version="2.0.0", state="active", kind=notebook_version.kind,
        spec_template=notebook_version.spec_template, variables=notebook_version.variables,
        outputs=notebook_version.outputs)
    profile_services.profile_update(actor=root, profile=launched["profile"], template_version=version)
    url = f"/api/v1/workloads/{launched['id']}/upgrade"
    refused = eve.post(url, {"inputs": {"image": "evil/reader:1"}}, format="json")
    assert refused.status_code == 400, refused.content
    assert refused.json()["errors"][0]["field"].startswith("spec.environmentVariables")
    assert client_for(org.users.member).post(url, {}, format="json").status_code == 202  # bob upgrades his own
