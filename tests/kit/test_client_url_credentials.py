"""Security round 4, findings 2 and 3: what a credential gave ends with it. A client URL records the credential it
was made with and stops answering (and launching streams) when that credential ends: the access key whose token
made it is deleted, its maker's password changes, the service account's secret is regenerated. A request queued
through it does not launch once it has ended. A client URL made otherwise is left alone."""

import pytest
from rest_framework.test import APIClient

from studio.models import Role
from tests.kit.conftest import errors

pytestmark = pytest.mark.django_db
CURRENT = "pw-for-tests-1"  # tests/factories.UserFactory's
STREAM = {"id": "usd-viewer", "profile": "default"}


def granted(body: dict) -> str:
    answer = APIClient().post("/api/v1/token", body, format="json")
    assert answer.status_code == 200, answer.json()
    return answer.json()["accessToken"]


def bearer(access_token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {access_token}")
    return client


def client_url(api, project) -> tuple[str, dict]:
    """(the base path a Kit client takes, the answer that made it)."""
    made = api.post("/api/v1/kit/client-urls", {"projectId": project.pk, "name": "viewer"}, format="json")
    assert made.status_code == 201, made.json()
    return made.json()["url"].split("testserver", 1)[1], made.json()


@pytest.fixture
def login(client_for, org):
    """bob's own login (a password grant's token)."""
    return client_for(org.users.member)


@pytest.fixture
def key(login):
    made = login.post("/api/v1/access-keys", {"name": "viewer-box"}, format="json")
    assert made.status_code == 201, made.json()
    return made.json()


def key_client(key) -> APIClient:
    return bearer(granted({"grantType": "client_credentials", "clientId": key["clientId"],
                           "clientSecret": key["clientSecret"]}))


def refused(anon, base: str, why: str) -> None:
    for answer in (anon.get(f"{base}/cfg/apps"), anon.post(f"{base}/streaming/stream", STREAM, format="json")):
        assert answer.status_code == 401, answer.json()
        assert answer.json()["detail"] == f"This client URL is not valid: {why}."


def test_a_client_url_made_with_an_access_keys_token_ends_with_the_key(anon, login, key, org, kit):
    base, made = client_url(key_client(key), org.a)
    assert anon.get(f"{base}/cfg/apps").status_code == 200
    assert anon.post(f"{base}/streaming/stream", STREAM, format="json").status_code == 202
    assert login.delete(f"/api/v1/access-keys/{key['id']}").status_code == 204
    refused(anon, base, "the access key it was made with was deleted")
    listed = login.get(f"/api/v1/kit/client-urls/{made['id']}").json()
    assert (listed["active"], listed["origin"]) == (False, "access-key")


@pytest.mark.parametrize("made_with", ["access key", "login"])
def test_a_client_url_ends_with_its_makers_password(anon, login, key, org, kit, made_with):
    base, made = client_url(key_client(key) if made_with == "access key" else login, org.a)
    assert anon.get(f"{base}/cfg/apps").status_code == 200
    changed = login.post("/api/v1/me/password", {"currentPassword": CURRENT, "newPassword": "violet-harbour-1962"},
                         format="json")
    assert changed.status_code == 200, changed.json()
    refused(anon, base, "its maker's password changed after it was made")
    again = bearer(granted({"grantType": "password", "username": "bob", "password": "violet-harbour-1962"}))
    assert again.get(f"/api/v1/kit/client-urls/{made['id']}").json()["active"] is False


def test_a_client_url_made_with_a_service_accounts_token_ends_with_its_secret(anon, client_for, org, kit):
    admin = client_for(org.users.platform_admin)
    account = admin.post("/api/v1/service-accounts", {"name": "kiosk"}, format="json").json()
    rule = admin.post("/api/v1/authorization/access-rules", {
        "subjectId": account["clientId"], "subjectType": "service-account",
        "roleId": Role.objects.get(name="L1 researcher").pk, "scopeId": str(org.a.pk), "scopeType": "project"},
        format="json")
    assert rule.status_code == 201, rule.json()
    api = bearer(granted({"grantType": "client_credentials", "clientId": account["clientId"],
                          "clientSecret": account["clientSecret"]}))
    base, made = client_url(api, org.a)
    assert anon.post(f"{base}/streaming/stream", STREAM, format="json").status_code == 202
    assert admin.post(f"/api/v1/service-accounts/{account['id']}/secret").status_code == 200
    refused(anon, base, "its maker's service account's secret changed after it was made")
    assert made["origin"] == "service-account"


def test_a_request_queued_through_a_client_url_does_not_launch_once_its_key_is_gone(anon, client_for, login, key,
                                                                                      org, kit):
    cap = client_for(org.users.admin).put(f"/api/v1/kit/projects/{org.a.pk}/stream-limit", {"maxSessions": 1},
                                          format="json")
    assert cap.status_code == 200, cap.json()
    first = login.post("/streaming/stream", STREAM, format="json").json()
    base, _ = client_url(key_client(key), org.a)
    queued = anon.post(f"{base}/streaming/stream", STREAM, format="json").json()
    assert queued["status"]["condition"] == "queued"
    assert login.delete(f"/api/v1/access-keys/{key['id']}").status_code == 204
    assert login.delete("/streaming/stream", {"id": first["id"]}, format="json").status_code == 204  # room now
    failed = login.get(f"/streaming/stream/{queued['id']}").json()
    assert (failed["status"]["condition"], failed["workloadId"]) == ("failed", None), failed
    assert failed["status"]["message"] == f"Not started: {errors.CLIENT_URL_GONE}"


def test_other_credentials_ending_leave_a_client_url_alone(anon, login, key, org, kit):
    """A URL made with one key lives on when another key goes; one made with the login, when any key goes."""
    other = login.post("/api/v1/access-keys", {"name": "other"}, format="json").json()
    by_key, _ = client_url(key_client(key), org.a)
    by_login, made = client_url(login, org.a)
    assert made["origin"] == "login"
    assert login.delete(f"/api/v1/access-keys/{other['id']}").status_code == 204
    assert anon.get(f"{by_key}/cfg/apps").status_code == 200
    assert login.delete(f"/api/v1/access-keys/{key['id']}").status_code == 204
    assert anon.get(f"{by_login}/cfg/apps").status_code == 200
