"""Account › Password: a user an admin created logs in with her temporary password, is sent to the password page
before anything else, is told what is wrong with a weak one, and then reaches Home."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_layout import AXE, AXE_RUN

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NEW = "a-Much-better-passphrase-42"


@pytest.mark.parametrize("width", [1440, 390])
def test_a_temporary_password_is_changed_first(open_session, org, width):
    admin = open_session("root", width=width).page
    admin.goto("/org/users")
    admin.get_by_label("Email").fill("eve@example.com")
    admin.get_by_role("button", name="Create user").click()
    temporary = admin.locator("[data-secret], .secret-once").first.inner_text().strip()

    session = open_session(width=width)
    page = session.page
    page.goto("/login")
    page.get_by_label("Username").fill("eve@example.com")
    page.get_by_label("Password").fill(temporary)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url("**/account/password")
    expect(page.get_by_test_id("temporary-password")).to_contain_text("Your password is temporary")
    page.goto("/workloads")  # any other page: back here
    page.wait_for_url("**/account/password")
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []
    session.screenshot(f"password-temporary-{width}")
    page.get_by_label("Current password").fill(temporary)
    page.get_by_label("New password", exact=True).fill("short")
    page.get_by_label("New password, again").fill("short")
    page.get_by_role("button", name="Change password").click()
    expect(page.locator("main")).to_contain_text("too short")
    page.get_by_label("Current password").fill(temporary)
    page.get_by_label("New password", exact=True).fill(NEW)
    page.get_by_label("New password, again").fill(NEW)
    page.get_by_role("button", name="Change password").click()
    page.wait_for_url(lambda url: url.endswith("/"))
    expect(page.locator(".toast-success")).to_contain_text("Your password is changed")
    page.goto("/workloads")
    expect(page.locator("main h1.page-title")).to_contain_text("Workloads")
    if width > 600:  # the side menu (folded on a phone) leads to the page
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Password").click()
        expect(page.get_by_test_id("temporary-password")).to_have_count(0)
