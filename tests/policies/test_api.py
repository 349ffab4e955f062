"""The Policy API (Run:ai's tag Policy): shapes checked against Run:ai's own schemas, who may read and write,
validation naming each field, the audit trail, and the list's query count."""

import pytest

from policies.fallback import FALLBACK_ID
from policies.models import Policy
from policies.schema import validator
from studio.models import AuditEvent

pytestmark = pytest.mark.django_db
SCHEMA = {"trainings": "TrainingPolicyV2", "workspaces": "WorkspacePolicyV2", "inferences": "InferencePolicyV2"}


def conforms(body: dict, schema_name: str) -> dict:
    """Assert `body` is valid against the Run:ai component schema (refs resolved, nullable honoured)."""
    problems = [f"{list(e.absolute_path)}: {e.message}" for e in validator(schema_name).iter_errors(body)]
    assert problems == [], problems
    return body


@pytest.fixture
def admin(client_for, org):
    return client_for(org.users.platform_admin)


def put(api, policy_type, meta, policy, **query):
    suffix = "?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else ""
    return api.put(f"/api/v2/policy/{policy_type}{suffix}", {"meta": meta, "policy": policy}, format="json")


def errors_of(response) -> dict:
    assert response.status_code == 400, response.json()
    return {e["field"]: e["message"] for e in response.json()["errors"]}


def test_a_tenant_with_no_policy_reads_the_built_in_secure_default(admin):
    body = conforms(admin.get("/api/v2/policy/trainings?scope=tenant").json(), "TrainingPolicyV2")
    assert body["policy"] is None and "meta" not in body
    security = body["effective"]["rules"]["security"]
    assert security["runAsUid"] == {"min": 1, "sourceOfRule": {"scope": "tenant", "isFallback": True}}
    assert security["hostNetwork"]["canEdit"] is False
    assert body["effective"]["rules"]["storage"]["hostPath"]["instances"]["canAdd"] is False
    assert body["effective"]["defaults"]["security"] == {
        "allowPrivilegeEscalation": False, "hostIpc": False, "hostNetwork": False}


@pytest.mark.parametrize("policy_type", ["trainings", "workspaces", "inferences"])
def test_put_then_get_a_tenant_policy_in_runai_shape(admin, policy_type):
    policy = {"defaults": {"compute": {"cpuCoreRequest": 0.5}}, "rules": {"compute": {"gpuDevicesRequest": {"max": 2}}}}
    response = put(admin, policy_type, {"scope": "tenant", "name": "tenant-limits"}, policy)
    assert response.status_code == 200, response.json()
    body = conforms(response.json(), SCHEMA[policy_type])
    assert body["meta"]["name"] == "tenant-limits" and body["meta"]["scope"] == "tenant"
    assert body["meta"]["createdBy"] == "root" and body["meta"]["tenantId"] == 1
    assert body["policy"] == {**policy, "imposedAssets": []}
    assert body["effective"]["rules"]["compute"]["gpuDevicesRequest"] == {"max": 2, "sourceOfRule": {"scope": "tenant"}}
    assert body["effective"]["defaults"]["compute"] == {"cpuCoreRequest": 0.5}
    assert admin.get(f"/api/v2/policy/{policy_type}?scope=tenant").json() == body


def test_a_project_override_tightens_and_loosens_only_the_built_in_default(admin, org):
    put(admin, "trainings", {"scope": "tenant", "name": "t"}, {"rules": {"compute": {"gpuDevicesRequest": {"max": 4}}}})
    response = put(admin, "trainings", {"scope": "project", "projectId": org.a.id, "name": "alpha"}, {"rules": {
        "compute": {"gpuDevicesRequest": {"max": 1}}, "security": {"runAsUid": {"min": 0}}}})
    assert response.status_code == 200, response.json()
    body = conforms(response.json(), "TrainingPolicyV2")
    assert body["meta"]["projectId"] == org.a.id and body["meta"]["clusterId"] == str(org.cluster.id)
    rules = body["effective"]["rules"]
    assert rules["compute"]["gpuDevicesRequest"]["max"] == 1
    assert rules["security"]["runAsUid"] == {"min": 0, "sourceOfRule": {
        "scope": "project", "projectId": org.a.id, "departmentId": str(org.department.id)}}
    # a project may not loosen what the tenant set
    looser = put(admin, "trainings", {"scope": "project", "projectId": org.a.id, "name": "alpha"}, {"rules": {
        "compute": {"gpuDevicesRequest": {"max": 8}}}})
    assert errors_of(looser) == {"policy.rules.compute.gpuDevicesRequest.max": (
        "Looser than the tenant policy (max: 4): a narrower scope may only tighten it.")}
    # project B still sees only the tenant's
    other = admin.get(f"/api/v2/policy/trainings?scope=project&projectId={org.b.id}").json()
    assert other["policy"] is None and other["effective"]["rules"]["compute"]["gpuDevicesRequest"]["max"] == 4


def test_patch_merges_and_resets_and_validate_only_saves_nothing(admin, org):
    meta = {"scope": "department", "departmentId": str(org.department.id), "name": "research"}
    put(admin, "workspaces", meta, {"rules": {"image": {"required": True}}, "defaults": {"image": "python:3.11"}})
    response = admin.patch("/api/v2/policy/workspaces", {
        "meta": meta, "policy": {"rules": {"compute": {"cpuCoreLimit": {"max": 8}}}}, "reset": ["image"]},
        format="json")
    body = conforms(response.json(), "WorkspacePolicyV2")
    assert body["policy"]["rules"] == {"compute": {"cpuCoreLimit": {"max": 8}}} and body["policy"]["defaults"] == {}
    dry = admin.patch("/api/v2/policy/workspaces?validateOnly=true", {
        "meta": meta, "policy": {"defaults": {"image": "ubuntu"}}}, format="json")
    assert dry.status_code == 200 and dry.json()["policy"]["defaults"] == {"image": "ubuntu"}
    assert Policy.objects.get(scope="department").defaults == {}


def test_bad_bodies_are_400_naming_each_field(admin, org):
    body = errors_of(put(admin, "trainings", {"scope": "tenant", "name": "t"}, {
        "rules": {"security": {"runAsUid": {"min": "zero", "canAdd": True}, "hostNetwork": {"min": 1}},
                  "nosuch": {"canEdit": False}},
        "defaults": {"security": {"runAsUid": "root"}, "wat": 1}}))
    assert set(body) == {"policy.rules.security.runAsUid.min", "policy.rules.security.runAsUid.canAdd",
                         "policy.rules.security.hostNetwork.min", "policy.rules.nosuch", "policy.defaults.wat",
                         "policy.defaults.security.runAsUid"}
    assert errors_of(put(admin, "trainings", {"scope": "project", "name": "x"}, {})) == {
        "meta.projectId": "Is required with scope project, and must name a project."}
    assert set(errors_of(put(admin, "trainings", {"scope": "cluster", "name": "x"}, {}))) == {"meta.scope"}
    # defaults the effective rules would refuse, and min above max
    refused = errors_of(put(admin, "trainings", {"scope": "tenant", "name": "t"}, {
        "defaults": {"security": {"runAsUid": 0}}, "rules": {"compute": {"gpuDevicesRequest": {"min": 3, "max": 2}}}}))
    assert refused == {"policy.rules.compute.gpuDevicesRequest.max": "Must be at least min (3)."}
    refused = errors_of(put(admin, "trainings", {"scope": "tenant", "name": "t"}, {"defaults": {"security": {"runAsUid": 0}}}))
    assert refused == {"policy.defaults.security.runAsUid": "must be at least 1 (policy: tenant default)"}
    assert admin.put("/api/v2/policy/trainings", [1], format="json").status_code == 400
    assert admin.get("/api/v2/policy/trainings?scope=project&projectId=abc").status_code == 400
    assert admin.get("/api/v2/policy?workloadType=Nope").status_code == 400


def test_only_platform_admins_write_and_members_read_their_projects_policy(client_for, admin, org):
    meta = {"scope": "project", "projectId": org.a.id, "name": "alpha"}
    for user in (org.users.admin, org.users.member, org.users.viewer, org.users.other):
        api = client_for(user)
        assert put(api, "trainings", meta, {}).status_code == 403
        assert api.patch("/api/v2/policy/trainings", {"meta": meta}, format="json").status_code == 403
        assert api.delete(f"/api/v2/policy/trainings?scope=project&projectId={org.a.id}").status_code == 403
        assert api.get("/api/v2/policy").status_code == 403
        assert api.get("/api/v2/policy/trainings?scope=tenant").status_code == 403
    for user in (org.users.admin, org.users.member, org.users.viewer):
        got = client_for(user).get(f"/api/v2/policy/trainings?scope=project&projectId={org.a.id}")
        assert got.status_code == 200 and "effective" in got.json()
    assert client_for(org.users.other).get(
        f"/api/v2/policy/trainings?scope=project&projectId={org.a.id}").status_code == 404
    assert Policy.objects.count() == 0


def test_delete_restores_the_wider_policy_and_every_change_is_audited(admin, org):
    meta = {"scope": "project", "projectId": org.a.id, "name": "alpha"}
    put(admin, "inferences", meta, {"rules": {"image": {"options": [{"value": "vllm"}]}}})
    put(admin, "inferences", meta, {"rules": {"image": {"options": [{"value": "vllm"}, {"value": "tgi"}]}}})
    url = f"/api/v2/policy/inferences?scope=project&projectId={org.a.id}"
    assert admin.delete(url).status_code == 204
    assert admin.delete(url).status_code == 404
    assert admin.get(url).json()["policy"] is None
    trail = list(AuditEvent.objects.filter(object_type="policies.policy").order_by("id")
                 .values_list("action", "actor_name"))
    assert trail == [("create", "root"), ("update", "root"), ("delete", "root")]
    update = AuditEvent.objects.get(object_type="policies.policy", action="update")
    assert set(update.changes) >= {"rules"}


def test_list_in_runai_shape_with_filters_and_bounded_queries(admin, org, django_assert_max_num_queries):
    put(admin, "trainings", {"scope": "tenant", "name": "t"}, {})
    for project in (org.a, org.b):
        for policy_type in ("trainings", "workspaces", "inferences"):
            put(admin, policy_type, {"scope": "project", "projectId": project.id, "name": f"{project.name}"}, {})
    with django_assert_max_num_queries(4):
        body = admin.get("/api/v2/policy").json()
    conforms(body, "PolicyListResponse")
    assert len(body["policies"]) == 7
    assert {entry["type"] for entry in body["policies"]} == {"training", "workspace", "inference"}
    only = admin.get(f"/api/v2/policy?workloadType=Training&scope=project&projectId={org.a.id}").json()["policies"]
    assert [(e["type"], e["meta"]["projectId"]) for e in only] == [("training", org.a.id)]
    with_fallback = conforms(admin.get("/api/v2/policy?includeFallbackPolicies=true&workloadType=Workspace").json(),
                             "PolicyListResponse")["policies"]
    assert [e["meta"]["id"] for e in with_fallback][0] == FALLBACK_ID and len(with_fallback) == 3
    assert admin.get("/api/v2/policy?workloadType=Distributed").json() == {"policies": []}
