"""Run:ai's Service Accounts tag: CI's identities, with their own access rules and secrets. Through runapy (Run:ai's
SDK, logging in with the account's client id and secret), a service account submits a training in project A,
where a rule names it, and is refused in project B."""

import json

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient
from runai.exceptions import ApiException

from studio.models import AuditEvent, Role, ServiceAccount
from tests.runai_spec import spec_errors
from tests.runapy_support import runapy_for_service_account
from workloads.models import Workload

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin(client_for, org):
    return client_for(org.users.platform_admin)


def create(admin, name="ci-pipeline") -> dict:
    answer = admin.post("/api/v1/service-accounts", {"name": name}, format="json")
    assert answer.status_code == 201, answer.json()
    return answer.json()


def grant(admin, account: dict, project, role="L1 researcher"):
    answer = admin.post("/api/v1/authorization/access-rules", {
        "subjectId": account["clientId"], "subjectType": "service-account", "roleId": Role.objects.get(name=role).pk,
        "scopeId": str(project.pk), "scopeType": "project"}, format="json")
    assert answer.status_code == 201, answer.json()
    return answer.json()


def token(client_id: str, secret: str) -> tuple[int, dict]:
    answer = APIClient().post("/api/v1/token", {"grantType": "client_credentials", "clientId": client_id,
                                                "clientSecret": secret}, format="json")
    return answer.status_code, answer.json()


def bearer(access_token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {access_token}")
    return client


def test_the_six_operations_answer_runai_shapes_and_the_secret_once(admin, org):
    created = create(admin)
    assert set(created) == {"id", "name", "clientId", "clientSecret"} and created["clientId"] == "ci-pipeline"
    assert not spec_errors(created, "post", "/api/v1/service-accounts", 201)
    listed = admin.get("/api/v1/service-accounts").json()
    assert not spec_errors(listed, "get", "/api/v1/service-accounts", 200)
    assert [a["name"] for a in listed] == ["ci-pipeline"] and "clientSecret" not in listed[0]
    item = f"/api/v1/service-accounts/{created['id']}"
    assert not spec_errors(admin.get(item).json(), "get", "/api/v1/service-accounts/{serviceAccountId}", 200)
    assert admin.get(item).json()["createdBy"] == org.users.platform_admin.email
    assert admin.patch(item, {"enabled": False}, format="json").json()["enabled"] is False
    regenerated = admin.post(item + "/secret")
    assert regenerated.status_code == 200 and set(regenerated.json()) == {"clientSecret"}
    assert regenerated.json()["clientSecret"] != created["clientSecret"]
    assert admin.delete(item).status_code == 204
    assert admin.get(item).status_code == 404 and admin.get("/api/v1/service-accounts/not-a-uuid").status_code == 404
    assert not get_user_model().objects.filter(username="service-account:ci-pipeline").exists()
    secrets = [created["clientSecret"], regenerated.json()["clientSecret"]]
    trail = str(list(AuditEvent.objects.values_list("changes", flat=True)))
    assert not any(secret in trail for secret in secrets)


def test_bad_names_conflicts_and_non_admins_are_refused(admin, client_for, org):
    bad = admin.post("/api/v1/service-accounts", {"name": "CI pipeline!", "extra": 1}, format="json")
    assert bad.status_code == 400 and {e["field"] for e in bad.json()["errors"]} == {"name", "extra"}
    create(admin)
    assert admin.post("/api/v1/service-accounts", {"name": "ci-pipeline"}, format="json").status_code == 409
    assert client_for(org.users.admin).get("/api/v1/service-accounts").status_code == 403
    rule = admin.post("/api/v1/authorization/access-rules", {
        "subjectId": "nobody", "subjectType": "service-account", "roleId": Role.objects.get(name="Viewer").pk,
        "scopeId": str(org.a.pk), "scopeType": "project"}, format="json")
    assert rule.status_code == 400 and rule.json()["errors"][0]["field"] == "subjectId"


def test_its_secret_gets_tokens_until_disabled_regenerated_or_deleted(admin, org):
    account = create(admin)
    grant(admin, account, org.a)
    status, issued = token(account["clientId"], account["clientSecret"])
    assert status == 200, issued
    assert "refreshToken" not in issued  # client credentials get a new token, not a refresh token
    projects = bearer(issued["accessToken"]).get("/api/v1/org-unit/projects").json()["projects"]
    assert [p["name"] for p in projects] == ["alpha"]
    assert token(account["clientId"], "wrong")[0] == 401
    item = f"/api/v1/service-accounts/{account['id']}"
    admin.patch(item, {"enabled": False}, format="json")
    assert token(account["clientId"], account["clientSecret"])[0] == 401
    assert bearer(issued["accessToken"]).get("/api/v1/org-unit/projects").status_code == 401
    admin.patch(item, {"enabled": True}, format="json")
    assert bearer(issued["accessToken"]).get("/api/v1/org-unit/projects").status_code == 200
    new_secret = admin.post(item + "/secret").json()["clientSecret"]
    assert bearer(issued["accessToken"]).get("/api/v1/org-unit/projects").status_code == 401  # revoked
    assert token(account["clientId"], account["clientSecret"])[0] == 401
    status, again = token(account["clientId"], new_secret)
    assert status == 200
    assert admin.get(item).json()["lastLogin"] is not None
    admin.delete(item)
    assert bearer(again["accessToken"]).get("/api/v1/org-unit/projects").status_code == 401


def test_service_accounts_are_no_users_of_the_users_api_and_cannot_log_in_with_a_password(admin, org):
    create(admin)
    assert "service-account:ci-pipeline" not in [u["username"] for u in admin.get("/api/v1/users").json()]
    answer = APIClient().post("/api/v1/token", {"grantType": "password", "username": "service-account:ci-pipeline",
                                                "password": ""}, format="json")
    assert answer.status_code in (400, 401)


@pytest.mark.django_db(transaction=True)
def test_a_service_account_submits_a_training_in_project_a_through_runapy_and_is_refused_in_b(live_server, org):
    admin = APIClient()
    admin.force_authenticate(org.users.platform_admin)
    account = create(admin)
    grant(admin, account, org.a)
    runai = runapy_for_service_account(live_server.url, account["clientId"], account["clientSecret"])
    trainings = runai.workloads.trainings

    def body(project):
        return {"name": "ci-train", "projectId": str(project.pk), "clusterId": str(org.cluster.pk),
                "spec": {"image": "python:3.12", "command": "python", "args": "-c 'print(1)'"}}

    created = trainings.create_training1(body(org.a))
    assert created.status_code == 200 and created.data["projectId"] == str(org.a.pk)
    workload = Workload.objects.get(pk=created.data["workloadId"])
    assert workload.created_by == ServiceAccount.objects.get(name="ci-pipeline").user
    with pytest.raises(ApiException) as refused:
        trainings.create_training1(body(org.b))
    # Project B is not the account's: the house's answer for a project one cannot see (no leak of its existence).
    assert refused.value.status == 400
    assert json.loads(refused.value.body)["errors"] == [
        {"field": "projectId", "message": "No such project, or you are not a member of it."}]
    assert not Workload.objects.filter(project=org.b).exists()
