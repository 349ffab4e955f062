"""Security round 4, finding 9: a new password like the user's own attributes (her e-mail, her name) is refused,
with a 400 naming the field, through the API and the portal alike; a password unlike them is still taken."""

import pytest
from rest_framework.test import APIClient

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
CURRENT = "pw-for-tests-1"  # tests/factories.UserFactory's


@pytest.fixture
def grace(client_for):
    user = UserFactory(username="ghopper", email="grace.hopper@example.org", first_name="Grace",
                       last_name="Hopperfield")
    return user, client_for(user)


def logs_in(username: str, password: str) -> bool:
    answer = APIClient().post("/api/v1/token", {"grantType": "password", "username": username, "password": password},
                              format="json")
    return answer.status_code == 200


@pytest.mark.parametrize("new", ["grace.hopper@example.org", "Grace.Hopper@Example.org", "hopperfield"])
def test_the_api_refuses_a_password_like_the_users_email_or_name(grace, new):
    user, api = grace
    refused = api.post("/api/v1/me/password", {"currentPassword": CURRENT, "newPassword": new}, format="json")
    assert refused.status_code == 400, refused.json()
    assert [e["field"] for e in refused.json()["errors"]] == ["newPassword"]
    assert "too similar" in str(refused.json()["errors"])
    assert not logs_in(user.username, new) and logs_in(user.username, CURRENT)


def test_the_api_still_takes_a_password_unlike_the_user(grace):
    user, api = grace
    changed = api.post("/api/v1/me/password", {"currentPassword": CURRENT, "newPassword": "violet-harbour-1962"},
                       format="json")
    assert changed.status_code == 200, changed.json()
    assert logs_in(user.username, "violet-harbour-1962")


def test_the_portal_refuses_a_password_equal_to_the_email(client, grace):
    user, _ = grace
    client.force_login(user)
    page = client.post("/account/password", {"current_password": CURRENT, "new_password": user.email,
                                             "new_password_again": user.email})
    assert page.status_code == 200  # the form again, the error on the new password's field
    assert 'id="id_new_password-error">The password is too similar to the email address.' in page.content.decode()
    assert not logs_in(user.username, user.email) and logs_in(user.username, CURRENT)
