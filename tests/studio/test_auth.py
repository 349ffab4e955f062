import time
from datetime import UTC, datetime, timedelta

import jwt
import pytest
from django.conf import settings

from studio.models import AccessKey

pytestmark = pytest.mark.django_db


def test_no_token_is_401_with_error_body(anon):
    response = anon.get("/api/v1/me")
    assert response.status_code == 401
    assert response.json() == {"code": 401, "message": "Authentication credentials were not provided."}


def test_password_grant_gives_a_working_bearer_token(anon, org):
    response = anon.post(
        "/api/v1/token", {"grantType": "password", "username": "bob", "password": "pw-for-tests-1"}, format="json"
    )
    assert response.status_code == 200
    body = response.json()
    assert body["tokenType"] == "Bearer" and body["expiresIn"] == 3600
    me = anon.get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {body['accessToken']}").json()
    assert me["username"] == "bob"
    assert me["isPlatformAdmin"] is False
    assert me["memberships"] == [{"projectId": org.a.id, "projectName": "alpha", "role": "member"}]


def test_bad_password_is_401(anon, org):
    response = anon.post("/api/v1/token", {"grantType": "password", "username": "bob", "password": "no"}, format="json")
    assert response.status_code == 401
    assert response.json()["message"] == "Invalid username or password."


def test_token_request_names_each_missing_field(anon):
    response = anon.post("/api/v1/token", {"grantType": "client_credentials"}, format="json")
    assert response.status_code == 400
    fields = {e["field"] for e in response.json()["errors"]}
    assert fields == {"clientId", "clientSecret"}


@pytest.mark.parametrize(
    "token",
    [
        "not-a-jwt",
        jwt.encode({"user_id": "1", "token_type": "access", "jti": "x", "exp": 9999999999}, "wrong-key", "HS256"),
    ],
    ids=["garbage", "forged"],
)
def test_forged_token_is_issuer_not_familiar(anon, org, token):
    response = anon.get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 401
    assert response.json() == {"code": 401, "message": "Issuer is not familiar."}


def test_expired_token_is_issuer_not_familiar(anon, org):
    claims = {
        "user_id": str(org.users.member.pk), "token_type": "access", "jti": "expired1",
        "iss": "paas-studio", "exp": int(time.time()) - 10,
    }
    token = jwt.encode(claims, settings.SIMPLE_JWT["SIGNING_KEY"], "HS256")
    response = anon.get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 401
    assert response.json()["message"] == "Issuer is not familiar."


def test_a_token_accepted_before_is_refused_once_it_expires(anon, org, monkeypatch):
    """Its verification is kept for the next requests (studio.iam.auth._verified); its expiry is checked on each."""
    body = anon.post(
        "/api/v1/token", {"grantType": "password", "username": "bob", "password": "pw-for-tests-1"}, format="json"
    ).json()
    header = {"HTTP_AUTHORIZATION": f"Bearer {body['accessToken']}"}
    assert anon.get("/api/v1/me", **header).status_code == 200
    assert anon.get("/api/v1/me", **header).status_code == 200  # kept
    later = datetime.now(UTC) + timedelta(seconds=body["expiresIn"] + 1)
    monkeypatch.setattr("studio.iam.auth.aware_utcnow", lambda: later)
    response = anon.get("/api/v1/me", **header)
    assert response.status_code == 401 and response.json()["message"] == "Issuer is not familiar."


def test_revoked_token_stops_working(anon, org):
    token = anon.post(
        "/api/v1/token", {"grantType": "password", "username": "bob", "password": "pw-for-tests-1"}, format="json"
    ).json()["accessToken"]
    header = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    assert anon.post("/api/v1/token/revoke", **header).status_code == 204
    response = anon.get("/api/v1/me", **header)
    assert response.status_code == 401 and response.json()["message"] == "Issuer is not familiar."


def test_access_key_secret_shown_once_stored_hashed_and_grants_tokens(client_for, anon, org):
    client = client_for(org.users.member)
    created = client.post("/api/v1/access-keys", {"name": "ci"}, format="json")
    assert created.status_code == 201
    key = created.json()
    secret = key["clientSecret"]
    stored = AccessKey.objects.get(id=key["id"])
    assert secret not in stored.secret_hash and stored.check_secret(secret)
    listed = client.get("/api/v1/access-keys").json()["accessKeys"]
    assert [k["clientId"] for k in listed] == [key["clientId"]] and "clientSecret" not in listed[0]

    grant = {"grantType": "client_credentials", "clientId": key["clientId"], "clientSecret": secret}
    token = anon.post("/api/v1/token", grant, format="json").json()["accessToken"]
    assert anon.get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {token}").json()["username"] == "bob"

    bad = anon.post("/api/v1/token", {**grant, "clientSecret": "wrong"}, format="json")
    assert bad.status_code == 401

    # Deleting the key revokes the tokens it issued.
    assert client.delete(f"/api/v1/access-keys/{key['id']}").status_code == 204
    response = anon.get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 401 and response.json()["message"] == "Issuer is not familiar."


def test_access_keys_are_private_to_their_owner(client_for, org):
    key = client_for(org.users.member).post("/api/v1/access-keys", {"name": "mine"}, format="json").json()
    assert client_for(org.users.other).delete(f"/api/v1/access-keys/{key['id']}").status_code == 404


def test_login_and_logout_pages(client, org):
    page = client.get("/login")
    assert page.status_code == 200 and b'name="password"' in page.content
    response = client.post("/login", {"username": "bob", "password": "pw-for-tests-1"})
    assert response.status_code == 302 and response["Location"] == "/"
    assert client.get("/").status_code == 200
    assert client.post("/logout").status_code == 302
    assert client.get("/")["Location"].startswith("/login")


def test_a_bearer_token_is_checked_in_one_query_and_refused_once_the_user_changes(anon, org):
    """The user, the blacklist and the access key are read together; an inactive user or a changed password
    still ends the token."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from studio.iam.auth import BearerTokenAuthentication

    token = anon.post(
        "/api/v1/token", {"grantType": "password", "username": "bob", "password": "pw-for-tests-1"}, format="json"
    ).json()["accessToken"]
    auth = BearerTokenAuthentication()
    with CaptureQueriesContext(connection) as queries:
        assert auth.get_user(auth.get_validated_token(token.encode())).username == "bob"
    assert len(queries) == 1
    header = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    assert anon.get("/api/v1/me", **header).status_code == 200
    org.users.member.is_active = False
    org.users.member.save()
    assert anon.get("/api/v1/me", **header).status_code == 401
    org.users.member.is_active = True
    org.users.member.set_password("another-password-2")
    org.users.member.save()
    assert anon.get("/api/v1/me", **header).json()["message"] == "Issuer is not familiar."
