"""Run:ai's Tokens tag: every spelling of the grants its spec and its SDK send, checked against its schema."""

import pytest

from studio.models import AccessKey
from tests.runai_spec import assert_matches_spec
from tests.runapy_support import runapy_client

TOKEN = "/api/v1/token"


@pytest.fixture
def key(org):
    key, secret = AccessKey.issue(user=org.users.member, name="app")
    return key.client_id, secret


@pytest.mark.django_db
@pytest.mark.parametrize(
    "grant",
    [
        {"grantType": "app_token", "AppId": "{id}", "AppSecret": "{secret}"},  # runapy
        {"grantType": "app_token", "appID": "{id}", "appSecret": "{secret}"},  # the spec
        {"grantType": "client_credentials", "clientID": "{id}", "clientSecret": "{secret}"},  # the spec (latest)
        {"grantType": "client_credentials", "clientId": "{id}", "clientSecret": "{secret}"},  # ours
    ],
    ids=["runapy-app-token", "spec-app-token", "spec-client-credentials", "client-credentials"],
)
def test_every_spelling_of_an_app_grant_logs_in_as_the_keys_owner(anon, key, grant):
    body = {name: value.format(id=key[0], secret=key[1]) for name, value in grant.items()}
    response = anon.post(TOKEN, body, format="json")
    assert response.status_code == 200, response.json()
    assert_matches_spec(response, "post", TOKEN)
    me = anon.get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {response.json()['accessToken']}")
    assert me.json()["username"] == "bob"

    wrong = anon.post(TOKEN, {**body, next(k for k in body if k.lower().endswith("secret")): "nope"}, format="json")
    assert wrong.status_code == 401 and wrong.json()["message"] == "Invalid client credentials."


@pytest.mark.django_db
def test_password_grant_matches_the_spec(anon, org):
    org.users.member.set_password("pw-for-tests-1")
    org.users.member.save()
    response = anon.post(TOKEN, {"grantType": "password", "username": "bob", "password": "pw-for-tests-1"},
                         format="json")
    assert response.status_code == 200
    assert_matches_spec(response, "post", TOKEN)


@pytest.mark.django_db
def test_app_token_without_credentials_names_the_spec_fields(anon):
    response = anon.post(TOKEN, {"grantType": "app_token"}, format="json")
    assert response.status_code == 400
    errors = {e["field"]: e["message"] for e in response.json()["errors"]}
    assert set(errors) == {"appID", "appSecret"}
    assert "AppId" in errors["appID"] and "AppSecret" in errors["appSecret"]


@pytest.mark.django_db
def test_grants_this_server_does_not_issue_are_a_400_naming_grant_type(anon):
    response = anon.post(TOKEN, {"grantType": "implicit"}, format="json")
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["grantType"]
    # refresh_token is offered (studio/iam/tokens.py): without its field, the field is named.
    response = anon.post(TOKEN, {"grantType": "refresh_token"}, format="json")
    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["refreshToken"]


@pytest.mark.django_db(transaction=True)
def test_runapy_logs_in_with_an_app_token_and_calls_the_api(live_server, org):
    client = runapy_client(live_server.url, org.users.member)
    response = client.workloads.workloads.count_workloads()
    assert response.status_code == 200 and response.data == {"count": 0}
    assert client.api_client.token_refresher._token_expiry > 0  # a JWT with `exp`, as runapy requires
