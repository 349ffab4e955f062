"""A temporary password (a user created by an admin, or reset by one) must be changed before anything else: the
API answers 403 naming why, except the password change; the portal sends her to the password page."""

import pytest
from django.urls import reverse

from studio import services

pytestmark = pytest.mark.django_db

NEW = "a-Much-better-passphrase-42"


def _token(client, username, password):
    response = client.post("/api/v1/token", {"grantType": "password", "username": username,
                                             "password": password}, content_type="application/json")
    assert response.status_code == 200, response.content
    return response.json()["accessToken"]


def test_the_api_refuses_a_temporary_password_until_it_is_changed(client, org):
    user, temporary = services.user_create(actor=org.users.platform_admin, email="eve@example.com")
    token = _token(client, "eve@example.com", temporary)
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    refused = client.get("/api/v1/org-unit/projects", **auth)
    assert refused.status_code == 403
    assert "password is temporary" in refused.json()["message"] and "/api/v1/me/password" in refused.json()["message"]
    weak = client.post("/api/v1/me/password", {"currentPassword": temporary, "newPassword": "123"},
                       content_type="application/json", **auth)
    assert weak.status_code == 400 and "newPassword" in str(weak.json())  # Django's validators, named
    changed = client.post("/api/v1/me/password", {"currentPassword": temporary, "newPassword": NEW},
                          content_type="application/json", **auth)
    assert changed.status_code == 200, changed.content
    fresh = {"HTTP_AUTHORIZATION": f"Bearer {_token(client, 'eve@example.com', NEW)}"}
    assert client.get("/api/v1/org-unit/projects", **fresh).status_code == 200
    # an admin's reset makes it temporary again
    again = services.user_password_reset(user, actor=org.users.platform_admin)
    second = {"HTTP_AUTHORIZATION": f"Bearer {_token(client, 'eve@example.com', again)}"}
    assert client.get("/api/v1/org-unit/projects", **second).status_code == 403


def test_the_portal_sends_her_to_the_password_page_first(client, org):
    user, temporary = services.user_create(actor=org.users.platform_admin, email="eve@example.com")
    assert client.post("/login", {"username": "eve@example.com", "password": temporary}).status_code == 302
    home = client.get("/")
    assert home.status_code == 302 and home["Location"] == reverse("account-password")
    assert client.get("/workloads", HTTP_HX_REQUEST="true")["HX-Redirect"] == reverse("account-password")
    page = client.get(reverse("account-password"))
    assert b"Your password is temporary" in page.content
    mismatch = client.post(reverse("account-password"), {"current_password": temporary, "new_password": NEW,
                                                          "new_password_again": NEW + "x"})
    assert b"The two new passwords differ" in mismatch.content
    common = client.post(reverse("account-password"), {"current_password": temporary, "new_password": "password",
                                                        "new_password_again": "password"})
    assert b"too common" in common.content
    done = client.post(reverse("account-password"), {"current_password": temporary, "new_password": NEW,
                                                      "new_password_again": NEW})
    assert done.status_code == 302 and done["Location"] == reverse("home")
    assert client.get("/").status_code == 200  # still logged in, free to go


def test_a_user_with_her_own_password_is_not_stopped(client, org):
    client.force_login(org.users.member)
    assert client.get("/").status_code == 200
    page = client.get(reverse("account-password"))
    assert page.status_code == 200 and b"Your password is temporary" not in page.content
    wrong = client.post(reverse("account-password"), {"current_password": "nope", "new_password": NEW,
                                                       "new_password_again": NEW})
    assert b"This is not your current password" in wrong.content
