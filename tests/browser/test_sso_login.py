"""The portal's single sign-on in Chromium against a real provider (Dex): the login page offers the provider,
Dex's own login form, back to the portal logged in; the user is created with her groups, and a group access rule
gives her a role in project A and none in B. Removed from the group in Dex's config, she loses the role at her
next login. With local login off, the page has no password form."""

import pytest
from playwright.sync_api import expect

from studio.models import Role
from tests.iam.conftest import ADA
from tests.iam.dex_support import DexUser

pytestmark = [pytest.mark.browser, pytest.mark.dex, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def dex(live_server, client_for, org, start_dex):
    dex = start_dex([ADA], redirect_uris=[live_server.url + "/sso/callback"])
    admin = client_for(org.users.platform_admin)
    assert admin.post("/api/v1/idps", dex.idp_body(), format="json").status_code == 201
    rule = admin.post("/api/v1/authorization/access-rules", {
        "subjectId": "team-a", "subjectType": "group", "roleId": Role.objects.get(name="L1 researcher").pk,
        "scopeId": str(org.a.pk), "scopeType": "project"}, format="json")
    assert rule.status_code == 201, rule.json()
    return dex


def sso_login(session, user: DexUser):
    page = session.page
    page.goto("/login")
    page.get_by_role("link", name="Log in with Dex").click()
    page.wait_for_url("**/dex/auth/**")  # Dex's own page, on its own port
    page.locator("input[name=login]").fill(user.email)
    page.locator("input[name=password]").fill(user.password)
    page.locator("button[type=submit]").click()
    page.wait_for_url(session.base_url + "/")
    expect(page.get_by_role("button", name="Log out")).to_be_visible()


def her_projects(session) -> list[str]:
    answer = session.page.request.get(session.base_url + "/api/v1/org-unit/projects")  # her browser session
    assert answer.status == 200, answer.text()
    return sorted(p["name"] for p in answer.json()["projects"])


def test_login_through_dex_creates_her_with_her_groups_and_a_group_rule_gives_her_project_a_only(
        open_session, dex, client_for, org):
    session = open_session()
    sso_login(session, ADA)
    assert her_projects(session) == ["alpha"]  # the team-a rule on A; nothing of B
    admin = client_for(org.users.platform_admin)
    ada = next(u for u in admin.get("/api/v1/users").json() if u["username"] == ADA.email)
    assert ada["isLocal"] is False and sorted(ada["groups"]) == ["readers", "team-a"]
    assert ada["email"] == ADA.email and ada["lastLogin"] is not None
    # The portal shows her the same: project A alone in the switcher.
    expect(session.page.locator("#project-switcher option")).to_have_text(["alpha"])
    session.screenshot("sso-logged-in")

    # At the provider, Ada leaves team-a (Dex reads its static users at start: it is restarted with them).
    dex.restart(users=[DexUser(**{**ADA.__dict__, "groups": ["readers"]})])
    assert her_projects(session) == ["alpha"]  # until she logs in again, her session keeps the last login's groups
    session.page.get_by_role("button", name="Log out").click()
    session.page.wait_for_url("**/login")
    sso_login(session, ADA)
    assert her_projects(session) == []
    expect(session.page.locator("#project-switcher")).to_have_count(0)
    ada = admin.get(f"/api/v1/users/{ada['id']}").json()
    assert ada["groups"] == ["readers"]


def test_the_login_page_offers_the_provider_and_without_local_login_no_password_form(open_session, dex, settings):
    session = open_session()
    session.page.goto("/login")
    expect(session.page.get_by_role("link", name="Log in with Dex")).to_be_visible()
    expect(session.page.get_by_label("Password")).to_be_visible()
    session.screenshot("login-single-sign-on")
    settings.LOCAL_LOGIN_ENABLED = False
    session.page.goto("/login")
    expect(session.page.get_by_role("link", name="Log in with Dex")).to_be_visible()
    expect(session.page.get_by_label("Password")).to_have_count(0)
    sso_login(session, ADA)  # the provider's users still log in
