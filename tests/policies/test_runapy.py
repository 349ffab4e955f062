"""Run:ai's own SDK (runapy) drives the Policy tag against a live server: overwrite, get, update (with reset),
list (with the fallback policy) and delete as a platform admin; a member reads the project's policy and may not
write. Every answer is checked against both Run:ai OpenAPI documents (tests/runai_spec)."""

import pytest
from runai.exceptions import ApiException

from tests.runai_spec import spec_errors
from tests.runapy_support import runapy_client

pytestmark = pytest.mark.django_db(transaction=True)


def checked(response, method, path):
    problems = spec_errors(response.data, method, path, response.status_code)
    assert not problems, "\n".join(problems)
    return response.data


def test_runapy_drives_the_policy_api(live_server, org):
    policy = runapy_client(live_server.url, org.users.platform_admin).policies.policy
    body = {"meta": {"scope": "project", "projectId": org.a.id, "name": "alpha-trainings"},
            "policy": {"rules": {"compute": {"gpuDevicesRequest": {"max": 1}}},
                       "defaults": {"compute": {"cpuCoreRequest": 0.5}}}}
    put = checked(policy.overwrite_training_policy_v2(training_policy_overwrite_request_v2=body),
                  "put", "/api/v2/policy/trainings")
    assert put["meta"]["projectId"] == org.a.id and put["effective"]["defaults"]["compute"] == {"cpuCoreRequest": 0.5}
    got = checked(policy.get_training_policy_v2(scope="project", project_id=str(org.a.id)),
                  "get", "/api/v2/policy/trainings")
    assert got == put
    changed = checked(policy.update_training_policy_v2(training_policy_change_request_v2={
        "meta": body["meta"], "policy": {"rules": {"security": {"runAsUid": {"min": 1000}}}},
        "reset": ["compute.cpuCoreRequest"]}), "patch", "/api/v2/policy/trainings")
    assert changed["policy"]["rules"] == {"compute": {"gpuDevicesRequest": {"max": 1}},
                                          "security": {"runAsUid": {"min": 1000}}}
    assert changed["policy"]["defaults"] == {"compute": {}}
    listed = checked(policy.list_policies(include_fallback_policies=True), "get", "/api/v2/policy")
    assert [(e["type"], e["meta"]["scope"]) for e in listed["policies"]][-1] == ("training", "project")
    assert sum(e["meta"]["name"].startswith("tenant default") for e in listed["policies"]) == 3
    assert policy.delete_training_policy(scope="project", project_id=str(org.a.id)).status_code == 204
    assert policy.get_training_policy_v2(scope="project", project_id=str(org.a.id)).data["policy"] is None


def test_a_member_reads_the_projects_policy_through_runapy_and_may_not_write(live_server, org):
    policy = runapy_client(live_server.url, org.users.member).policies.policy
    read = checked(policy.get_workspace_policy_v2(scope="project", project_id=str(org.a.id)),
                   "get", "/api/v2/policy/workspaces")
    assert read["effective"]["rules"]["security"]["hostNetwork"]["canEdit"] is False
    with pytest.raises(ApiException) as refused:
        policy.overwrite_workspace_policy_v2(workspace_policy_overwrite_request_v2={
            "meta": {"scope": "project", "projectId": org.a.id, "name": "x"}, "policy": {}})
    assert refused.value.status == 403
