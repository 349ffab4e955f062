"""A project admin adds a member by searching users by username or email (suggestions as they type), not by an
exact username; what matches nobody is refused next to the field; only the project's admins get suggestions."""

import pytest
from django.test import Client
from playwright.sync_api import expect

from studio.selectors import project_members
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_project_admin_finds_a_user_by_email_or_part_of_a_name(open_session, org):
    UserFactory(username="erin", email="erin.e@example.com")
    UserFactory(username="gone-user", email="gone@example.com", is_active=False)
    session = open_session("alice")
    page = session.page
    page.goto(f"/org/projects/{org.a.pk}/members")
    field = page.get_by_label("User", exact=True)
    suggestions = page.locator("#member-suggestions option")
    field.press_sequentially("eri")
    expect(suggestions).to_have_count(1)
    expect(suggestions.first).to_have_attribute("value", "erin")
    expect(suggestions.first).to_have_text("erin — erin.e@example.com")
    field.fill("")
    field.press_sequentially("example.com")  # emails match too; a deactivated user is never offered
    expect(suggestions.filter(has_text="erin.e@example.com")).to_have_count(1)
    expect(suggestions.filter(has_text="gone")).to_have_count(0)

    field.fill("nobody@example.com")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("#id_username-error")).to_contain_text("No user with the username or email 'nobody@example.com'")
    expect(page.get_by_label("User", exact=True)).to_have_attribute("aria-invalid", "true")
    session.screenshot("members-error")

    page.get_by_label("User", exact=True).fill("ERIN.E@example.com")  # an email, in any case
    page.get_by_label("Role").select_option("L1 researcher")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status").filter(has_text="erin is now L1 researcher")).to_be_visible()
    assert project_members(org.a).get(user__username="erin").role.level == "member"
    page.get_by_label("User", exact=True).fill("dave")  # an exact username still works
    page.get_by_label("Role").select_option("Department viewer")  # any of Run:ai's roles
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status").filter(has_text="dave is now Department viewer")).to_be_visible()
    session.screenshot("members")


def test_only_the_projects_admins_get_suggestions(org):
    client = Client()
    url = f"/org/projects/{org.a.pk}/members/suggestions"
    client.force_login(org.users.member)
    assert client.get(url, {"username": "da"}).status_code == 403
    client.force_login(org.users.other)  # not in project alpha at all
    assert client.get(url, {"username": "da"}).status_code == 404
    client.force_login(org.users.admin)
    assert b'value="dave"' in client.get(url, {"username": "da"}).content
    assert client.get(url, {"username": "d"}).content.strip() == b""  # two characters at least
