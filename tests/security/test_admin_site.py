"""Django's admin site (security round 3, S08): its login was a password form outside the login throttles and its
writes outside the audit trail. It is not served in production (ADMIN_SITE_ENABLED defaults to DEBUG), and where
it is served its login sends the browser to the portal's throttled `/login` — no password is checked there."""

import pytest
from django.test import Client

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
PASSWORD = "correct-horse-battery"


@pytest.fixture
def root():
    user = UserFactory(username="root-admin", platform_admin=True, is_staff=True, is_superuser=True)
    user.set_password(PASSWORD)
    user.save()
    return user


def test_production_serves_no_admin_site(root, settings):
    assert settings.ADMIN_SITE_ENABLED is False  # DEBUG off: the test run is production-like
    browser = Client()
    for url in ("/admin/", "/admin/login/", "/admin/studio/project/", "/admin/anything"):
        assert browser.get(url).status_code == 404, url
    assert browser.post("/admin/login/", {"username": "root-admin", "password": PASSWORD}).status_code == 404
    assert "_auth_user_id" not in browser.session


def test_where_it_is_served_its_login_is_the_portals_throttled_one(root, settings):
    settings.ADMIN_SITE_ENABLED = True
    browser = Client()
    # Many guesses at the admin's login page check nothing: each is sent to the portal's login.
    for attempt in range(40):
        guess = browser.post("/admin/login/?next=/admin/", {"username": "root-admin", "password": f"guess-{attempt}"})
        assert guess.status_code == 302 and guess["Location"].startswith("/login?next=/admin/"), guess
    assert "_auth_user_id" not in browser.session
    assert browser.get("/admin/").status_code == 302  # to the admin's login, and from there to /login
    # The portal's login counts attempts per account: over the rate, even the right password waits.
    for attempt in range(12):
        browser.post("/login", {"username": "root-admin", "password": f"guess-{attempt}"})
    throttled = browser.post("/login", {"username": "root-admin", "password": PASSWORD})
    assert throttled.status_code == 429 and "_auth_user_id" not in browser.session


def test_where_it_is_served_a_portal_login_opens_it(root, settings):
    settings.ADMIN_SITE_ENABLED = True
    browser = Client()
    login = browser.post("/login?next=/admin/", {"username": "root-admin", "password": PASSWORD})
    assert login.status_code == 302 and login["Location"] == "/admin/"
    assert browser.get("/admin/").status_code == 200
