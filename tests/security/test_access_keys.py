"""An access key cannot make access keys (security round 3, S17): a token got with a key's id and secret (the
client_credentials or app_token grant, as runapy logs in) or with a service account's is refused with a 403 on
`POST /api/v1/access-keys`, so deleting the key ends everything it gave. A user's own login still makes keys."""

import pytest
from rest_framework.test import APIClient
from runai import models
from runai.exceptions import ApiException

from studio.models import AccessKey
from tests.runapy_support import runapy_client

pytestmark = pytest.mark.django_db


def token(**body) -> str:
    answer = APIClient().post("/api/v1/token", body, format="json")
    assert answer.status_code == 200, answer.json()
    return answer.json()["accessToken"]


def bearer(access_token: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {access_token}")
    return client


@pytest.fixture
def key(client_for, org):
    """bob's key, made with his own login (a password token): the one way to make one."""
    made = client_for(org.users.member).post("/api/v1/access-keys", {"name": "laptop"}, format="json")
    assert made.status_code == 201, made.json()
    return made.json()


@pytest.mark.parametrize("grant", ["client_credentials", "app_token"])
def test_a_token_of_an_access_key_cannot_make_another_key(key, grant):
    body = ({"grantType": grant, "clientId": key["clientId"], "clientSecret": key["clientSecret"]}
            if grant == "client_credentials" else {"grantType": grant, "AppId": key["clientId"],
                                                   "AppSecret": key["clientSecret"]})
    api = bearer(token(**body))
    refused = api.post("/api/v1/access-keys", {"name": "forever"}, format="json")
    assert refused.status_code == 403, refused.json()
    assert "outlive" in refused.json()["message"]
    assert [k["name"] for k in api.get("/api/v1/access-keys").json()["accessKeys"]] == ["laptop"]
    # What the key may still do, it does while it exists: deleting it ends the token.
    assert api.delete(f"/api/v1/access-keys/{key['id']}").status_code == 204
    assert api.get("/api/v1/me").status_code == 401


def test_runapy_logged_in_with_a_key_is_refused_a_new_key(live_server, org):
    client = runapy_client(live_server.url, org.users.member)
    with pytest.raises(ApiException) as refused:
        client.authentication_and_authorization.access_keys.create_access_key1(
            models.AccessKeyCreationRequest1(name="forever"))
    assert refused.value.status == 403


def test_a_service_account_token_cannot_make_a_key(client_for, org):
    admin = client_for(org.users.platform_admin)
    account = admin.post("/api/v1/service-accounts", {"name": "ci"}, format="json").json()
    api = bearer(token(grantType="client_credentials", clientId=account["clientId"],
                       clientSecret=account["clientSecret"]))
    assert api.get("/api/v1/me").status_code == 200
    assert api.post("/api/v1/access-keys", {"name": "forever"}, format="json").status_code == 403


def test_the_portal_and_a_password_token_still_make_keys(client, client_for, org):
    assert client_for(org.users.member).post("/api/v1/access-keys", {"name": "a"}, format="json").status_code == 201
    client.force_login(org.users.member)
    assert client.post("/account/access-keys", {"name": "b"}).status_code == 200
    assert sorted(k.name for k in AccessKey.objects.filter(user=org.users.member)) == ["a", "b"]
