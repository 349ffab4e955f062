"""Run:ai latest's `POST /api/v2/token` (OAuth2, form-encoded): the v1 grants in OAuth2's field names, checked
against Run:ai's schema, through HTTP and through runapy's `grant_token_v2`."""

import json

import pytest
from runai.exceptions import BadRequestException

from studio.models import AccessKey
from tests.runai_spec import assert_matches_spec, spec_errors
from tests.runapy_support import runapy_client

TOKEN = "/api/v2/token"
FORM = "application/x-www-form-urlencoded"


def form(anon, body):
    from urllib.parse import urlencode
    return anon.post(TOKEN, urlencode(body), content_type=FORM)


@pytest.fixture
def key(org):
    key, secret = AccessKey.issue(user=org.users.member, name="app")
    return key.client_id, secret


def logs_in_as(anon, response, username):
    assert response.status_code == 200, response.json()
    assert_matches_spec(response, "post", TOKEN)
    body = response.json()
    assert body["token_type"] == "Bearer" and body["expires_in"] > 0
    me = anon.get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {body['access_token']}")
    assert me.json()["username"] == username


@pytest.mark.django_db
def test_client_credentials_and_password_grants(anon, org, key):
    logs_in_as(anon, form(anon, {"grant_type": "client_credentials", "client_id": key[0], "client_secret": key[1]}),
               "bob")
    org.users.member.set_password("pw-for-tests-1")
    org.users.member.save()
    logs_in_as(anon, form(anon, {"grant_type": "password", "username": "bob", "password": "pw-for-tests-1",
                                 "client_id": "my-client-id"}), "bob")
    # JSON is taken too.
    logs_in_as(anon, anon.post(TOKEN, {"grant_type": "password", "username": "bob", "password": "pw-for-tests-1"},
                               format="json"), "bob")


@pytest.mark.django_db
def test_wrong_credentials_are_an_oauth2_401(anon, org, key):
    wrong = form(anon, {"grant_type": "client_credentials", "client_id": key[0], "client_secret": "nope"})
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_client"
    assert not spec_errors(wrong.json(), "post", TOKEN, 401)
    wrong = form(anon, {"grant_type": "password", "username": "bob", "password": "nope"})
    assert wrong.status_code == 401 and wrong.json()["error"] == "invalid_grant"


@pytest.mark.django_db
@pytest.mark.parametrize("body,error,fields", [
    ({}, "invalid_request", ["grant_type"]),
    ({"grant_type": "magic"}, "unsupported_grant_type", ["grant_type"]),
    ({"grant_type": "refresh_token"}, "invalid_request", ["refresh_token"]),
    ({"grant_type": "authorization_code", "code": "x"}, "invalid_request", ["redirect_uri"]),
    ({"grant_type": "password"}, "invalid_request", ["username", "password"]),
    ({"grant_type": "client_credentials", "client_id": "x", "clientSecret": "y"}, "invalid_request",
     ["clientSecret", "client_secret"]),
])
def test_bad_input_is_an_oauth2_400_naming_each_problem(anon, body, error, fields):
    response = form(anon, body)
    assert response.status_code == 400, response.content
    answer = response.json()
    assert answer["error"] == error and not spec_errors(answer, "post", TOKEN, 400)
    assert {e["field"] for e in answer["errors"]} == set(fields), answer
    for name in fields:
        assert name in answer["error_description"]


@pytest.mark.django_db
def test_a_body_that_is_not_a_form_is_a_400_json(anon):
    response = anon.post(TOKEN, "{not json", content_type="application/json")
    assert response.status_code == 400 and response["Content-Type"].startswith("application/json")


@pytest.mark.django_db(transaction=True)
def test_runapy_grant_token_v2_sends_no_body_and_is_told_why(live_server, org, key):
    """runapy 1.224.0's generated `grant_token_v2` drops its arguments and posts an empty body (its
    `call_api` gets neither form nor body): the answer is OAuth2's 400 naming the missing `grant_type`."""
    client = runapy_client(live_server.url, org.users.member)
    with pytest.raises(BadRequestException) as refused:
        client.authentication_and_authorization.tokens.grant_token_v2(
            "client_credentials", client_id=key[0], client_secret=key[1])
    answer = json.loads(refused.value.body)
    assert answer["error"] == "invalid_request" and answer["errors"][0]["field"] == "grant_type"
