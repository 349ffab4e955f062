"""`studio login --sso` approved in Chromium: the CLI prints the page and its code; the user, not yet signed in,
follows the link, logs in (with her password, or through the organisation's identity provider: Dex), finds the same
code on the page, approves; the CLI is logged in as her. The page is clean under axe-core."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.test_layout import AXE, AXE_RUN
from tests.cli.support import Cli
from tests.iam.conftest import ADA

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def start_login(live_server, tmp_path):
    """`studio login --device`: the process, the page's address with the code, and the code."""
    process = Cli(home=tmp_path).popen("login", "--device", "--url", live_server.url, "-o", "json")
    first, second = process.stderr.readline(), process.stderr.readline()
    code = re.search(r"enter the code ([A-Z]{4}-[A-Z]{4})", first)
    link = re.search(r"\(or open (\S+);", second)
    assert code and link, first + second
    return process, link.group(1), code.group(1)


def test_the_cli_code_is_approved_in_the_browser(open_session, live_server, org, settings, tmp_path):
    settings.CLI_DEVICE_POLL_SECONDS = 1
    process, link, code = start_login(live_server, tmp_path)

    session = open_session()
    page = session.page
    page.goto(link)  # not signed in: the login page first, then back here
    page.get_by_label("Username").fill("bob")
    page.get_by_label("Password").fill("pw-for-tests-1")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Approve this sign-in?")).to_be_visible()
    expect(page.get_by_test_id("device-code")).to_have_text(code)
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []
    session.screenshot("cli-device-approve")
    page.get_by_role("button", name="Approve").click()
    expect(page.get_by_test_id("device-approved")).to_contain_text("is signed in as bob")

    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert '"username": "bob"' in out


@pytest.mark.dex
def test_signed_in_through_the_identity_provider_she_approves_the_cli(open_session, live_server, client_for, org,
                                                                      start_dex, settings, tmp_path):
    dex = start_dex([ADA], redirect_uris=[live_server.url + "/sso/callback"])
    assert client_for(org.users.platform_admin).post("/api/v1/idps", dex.idp_body(), format="json").status_code == 201
    settings.CLI_DEVICE_POLL_SECONDS = 1
    process, link, code = start_login(live_server, tmp_path)

    page = open_session().page
    page.goto(link)
    page.get_by_role("link", name="Log in with Dex").click()
    page.wait_for_url("**/dex/auth/**")
    page.locator("input[name=login]").fill(ADA.email)
    page.locator("input[name=password]").fill(ADA.password)
    page.locator("button[type=submit]").click()
    expect(page.get_by_test_id("device-code")).to_have_text(code)  # back on the page the link named
    page.get_by_role("button", name="Approve").click()
    expect(page.get_by_test_id("device-approved")).to_contain_text(f"is signed in as {ADA.email}")
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert f'"username": "{ADA.email}"' in out
