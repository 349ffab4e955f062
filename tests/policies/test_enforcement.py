"""Every submission path is held to the same effective policy: the workloads API, the catalog launch and the
Kit stream — a 400 (Kit: 422) naming the field and the rule, and the policy's defaults filled in."""

import copy

import pytest

from kit.models import ApplicationProfile
from tests.factories import seed_data_volume, seed_node_pools
from tests.kit.conftest import VALIDATION, error
from tests.workloads.seed_bodies import TRAINING_REQUEST
from workloads.models import Workload

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin(client_for, org):
    return client_for(org.users.platform_admin)


@pytest.fixture
def member(client_for, org):
    org.a.gpu_deserved, org.a.gpu_limit = 8, 8
    org.a.save()
    return client_for(org.users.member)


def apply(admin, policy_type, meta, policy):
    response = admin.put(f"/api/v2/policy/{policy_type}", {"meta": {"name": "p", **meta}, "policy": policy},
                         format="json")
    assert response.status_code == 200, response.json()


def submit(api, org, spec, path="trainings", name="job"):
    return api.post(f"/api/v1/workloads/{path}", {"name": name, "projectId": org.a.id,
                                                   "clusterId": str(org.cluster.id), "spec": spec}, format="json")


def errors_of(response) -> dict:
    assert response.status_code == 400, response.json()
    return {e["field"]: e["message"] for e in response.json()["errors"]}


def test_the_exploits_of_issue_12_are_refused_each_named(member, org):
    spec = {"image": "alpine", "command": "sh", "security": {
        "uidGidSource": "custom", "runAsUid": 0, "capabilities": ["SYS_ADMIN"], "hostNetwork": True, "hostIpc": True,
        "allowPrivilegeEscalation": True},
        "storage": {"hostPath": [{"name": "root", "path": "/", "mountPath": "/host", "readOnly": False}]}}
    response = submit(member, org, spec)
    errors = errors_of(response)
    assert errors == {
        "spec.security.runAsUid": "must be at least 1 (policy: tenant default)",
        "spec.security.capabilities": (
            "SYS_ADMIN is not allowed: must be one of AUDIT_WRITE, CHOWN, DAC_OVERRIDE, FOWNER, FSETID, KILL, MKNOD, "
            "NET_BIND_SERVICE, SETFCAP, SETGID, SETPCAP, SETUID, SYS_CHROOT (policy: tenant default)"),
        "spec.security.hostNetwork": "cannot be changed from its default (false) (policy: tenant default)",
        "spec.security.hostIpc": "cannot be changed from its default (false) (policy: tenant default)",
        "spec.security.allowPrivilegeEscalation": "cannot be changed from its default (false) (policy: tenant default)",
        "spec.storage.hostPath": "no items may be added (policy: tenant default)",
    }
    assert "spec.security.runAsUid: must be at least 1 (policy: tenant default)" in response.json()["details"]
    assert Workload.objects.count() == 0


def test_seed_003_is_refused_only_for_its_host_path_until_a_platform_admin_allows_it(admin, member, org):
    seed_node_pools(org.cluster)  # the seed asks for my-node-pool-a and -b, which the cluster must have
    seed_data_volume(org.a)  # and mounts a data volume the project may use
    body = copy.deepcopy(TRAINING_REQUEST)
    body.update(projectId=org.a.id, clusterId=str(org.cluster.id))
    assert errors_of(member.post("/api/v1/workloads/trainings", body, format="json")) == {
        "spec.storage.hostPath": "no items may be added (policy: tenant default)"}
    apply(admin, "trainings", {"scope": "project", "projectId": org.a.id},
          {"rules": {"storage": {"hostPath": {"instances": {"canAdd": True}}}}})
    created = member.post("/api/v1/workloads/trainings", body, format="json")
    assert created.status_code == 200, created.json()
    assert created.json()["spec"]["storage"]["hostPath"] == body["spec"]["storage"]["hostPath"]


def test_a_tenant_rule_and_a_project_override_on_the_api_path(admin, member, org):
    apply(admin, "trainings", {"scope": "tenant"}, {
        "rules": {"compute": {"gpuDevicesRequest": {"max": 4}}, "image": {"options": [{"value": "python:3.11"}]}},
        "defaults": {"image": "python:3.11", "compute": {"cpuCoreRequest": 0.5}}})
    apply(admin, "trainings", {"scope": "project", "projectId": org.a.id},
          {"rules": {"compute": {"gpuDevicesRequest": {"max": 1}}}})
    assert errors_of(submit(member, org, {"image": "ubuntu", "compute": {"gpuDevicesRequest": 2}})) == {
        "spec.image": "ubuntu is not allowed: must be one of python:3.11 (policy: tenant)",
        "spec.compute.gpuDevicesRequest": "must be at most 1 (policy: project alpha)",
    }
    created = submit(member, org, {"image": "python:3.11", "compute": {"gpuDevicesRequest": 1}})
    assert created.status_code == 200, created.json()
    assert created.json()["spec"]["compute"] == {"gpuDevicesRequest": 1, "cpuCoreRequest": 0.5}  # a default filled


def test_a_catalog_launch_is_held_to_the_same_policy_and_blames_the_input(admin, member, org, profile):
    apply(admin, "trainings", {"scope": "tenant"}, {"rules": {"compute": {"gpuDevicesRequest": {"max": 1}}}})
    response = member.post(f"/api/v1/service-profiles/{profile.id}/launch",
                           {"projectId": org.a.id, "name": "run1", "inputs": {"command": "python", "gpus": 2}},
                           format="json")
    assert errors_of(response) == {
        "inputs.gpus": "must be at most 1 (policy: tenant) (at spec.compute.gpuDevicesRequest)"}
    ok = member.post(f"/api/v1/service-profiles/{profile.id}/launch",
                     {"projectId": org.a.id, "name": "run1", "inputs": {"command": "python", "gpus": 1}}, format="json")
    assert ok.status_code == 201, ok.json()


def test_a_kit_stream_is_held_to_the_workspace_policy(admin, member, org, kit):
    ApplicationProfile.objects.filter(slug="default").update(compute={"gpuDevicesRequest": 2})
    apply(admin, "workspaces", {"scope": "project", "projectId": org.a.id},
          {"rules": {"compute": {"gpuDevicesRequest": {"max": 1}}},
           "defaults": {"environmentVariables": {"instances": [{"name": "TEAM", "value": "alpha"}]}}})
    response = member.post("/streaming/stream", {"id": "usd-viewer", "profile": "default"}, format="json")
    body = error(response, 422, VALIDATION)
    assert body["errors"] == [{"field": "spec.compute.gpuDevicesRequest",
                               "message": "must be at most 1 (policy: project alpha)"}]
    ApplicationProfile.objects.filter(slug="default").update(compute={"gpuDevicesRequest": 1})
    response = member.post("/streaming/stream", {"id": "usd-viewer", "profile": "default"}, format="json")
    assert response.status_code == 202, response.json()
    session = Workload.objects.get(pk=response.json()["id"])
    assert {"name": "TEAM", "value": "alpha"} in session.spec["environmentVariables"]
    assert session.spec["security"]["hostNetwork"] is False
