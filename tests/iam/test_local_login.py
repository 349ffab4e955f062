"""LOCAL_LOGIN_ENABLED=false: no password is checked anywhere (the portal's form, Django's admin, both token
endpoints' password grants) and sessions local users opened before are not honoured; access keys, service
accounts and the identity provider's users keep working."""

import pytest
from django.test import Client
from rest_framework.test import APIClient

from studio.models import AccessKey

pytestmark = pytest.mark.django_db
PASSWORD = "pw-for-tests-1"  # tests/factories.py's


@pytest.fixture
def local_login_off(settings):
    settings.LOCAL_LOGIN_ENABLED = False


def test_with_local_login_on_a_password_logs_in(org):
    answer = APIClient().post("/api/v1/token", {"grantType": "password", "username": "bob", "password": PASSWORD},
                              format="json")
    assert answer.status_code == 200 and "refreshToken" in answer.json()
    assert Client().post("/login", {"username": "bob", "password": PASSWORD}).status_code == 302


def test_password_grants_are_refused_by_name(org, local_login_off):
    v1 = APIClient().post("/api/v1/token", {"grantType": "password", "username": "bob", "password": PASSWORD},
                          format="json")
    assert v1.status_code == 400
    assert v1.json()["errors"] == [{"field": "grantType", "message": "Local login is turned off here: log in "
                                                                     "through the identity provider."}]
    v2 = APIClient().post("/api/v2/token", {"grant_type": "password", "username": "bob", "password": PASSWORD})
    assert v2.status_code == 400 and v2.json()["error"] == "unsupported_grant_type"


def test_the_portal_and_the_admin_site_check_no_password_and_old_sessions_end(org, local_login_off, settings):
    browser = Client()
    page = browser.get("/login")
    assert b'name="password"' not in page.content and b"Local login is turned off" in page.content
    posted = browser.post("/login", {"username": "root", "password": PASSWORD})
    assert posted.status_code == 403 and "_auth_user_id" not in browser.session
    settings.ADMIN_SITE_ENABLED = True  # where Django's admin is served, its login is the portal's
    admin_site = browser.post("/admin/login/", {"username": "root", "password": PASSWORD})
    assert admin_site.status_code == 302 and "_auth_user_id" not in browser.session  # sent to /login, not checked
    settings.LOCAL_LOGIN_ENABLED = True
    browser.post("/login", {"username": "bob", "password": PASSWORD})
    assert browser.get("/").status_code == 200
    settings.LOCAL_LOGIN_ENABLED = False
    assert browser.get("/").status_code == 302  # back to the login page


def test_access_keys_keep_working(org, local_login_off):
    key, secret = AccessKey.issue(user=org.users.member, name="ci")
    answer = APIClient().post("/api/v1/token", {"grantType": "client_credentials", "clientId": key.client_id,
                                                "clientSecret": secret}, format="json")
    assert answer.status_code == 200


def test_a_provider_users_session_survives_local_login_off_and_ends_when_she_is_deactivated(org, local_login_off):
    from studio.iam.providers import Provider
    from studio.iam.sso_services import external_login

    provider = Provider(alias="oidc", discovery_url="https://idp.example.com", client_id="c", client_secret="s")
    ada = external_login(provider=provider, issuer="https://idp.example.com",
                         claims={"sub": "u-ada", "email": "ada@example.com", "groups": ["team-a"]})
    browser = Client()
    browser.force_login(ada, backend="studio.iam.oidc.ProviderBackend")  # as /sso/callback logs her in
    assert browser.get("/").status_code == 200
    ada.is_active = False
    ada.save()
    assert browser.get("/").status_code == 302
