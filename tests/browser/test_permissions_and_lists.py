"""Permissions and account basics reflected on the pages: a viewer reads the log as the project's other roles, a user in no
project is told what to do, secrets shown once have Copy; the workloads list follows the project switcher; a
workload's suspend and delete are in the audit trail."""

import pytest
from playwright.sync_api import expect

from studio.models import AuditEvent
from tests.browser.test_layout import AXE, AXE_RUN
from tests.browser.test_workload_pages import make_workload
from tests.factories import UserFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_viewer_reads_the_log_as_every_role_of_the_project(open_session, org):
    """As on Run:ai, a viewer's View of the workload covers its log: the panel, no excuse."""
    workload = make_workload(org)
    for username in ("carol", "alice"):
        page = open_session(username).page
        page.goto(f"/workloads/{workload.pk}")
        expect(page.locator("#log-view")).to_have_count(1)
        expect(page.get_by_test_id("logs-why")).to_have_count(0)


@pytest.mark.parametrize("width", [1280, 390])
def test_a_user_in_no_project_is_told_what_to_do(open_session, org, width):
    UserFactory(username="newcomer", email="newcomer@example.com")
    session = open_session("newcomer", width=width)
    page = session.page
    expect(page.get_by_test_id("no-project")).to_contain_text("tell them your username, newcomer")
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []
    open_session("bob").page.get_by_test_id("no-project").wait_for(state="detached")


def test_the_access_key_secret_has_copy(open_session, org):
    session = open_session("bob")
    session.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page = session.page
    page.goto("/account/access-keys")
    page.get_by_label("Name").fill("ci")
    page.get_by_role("button", name="Create access key").click()
    secret = page.locator("#client-secret").inner_text()
    page.get_by_role("button", name="Copy the client secret").click()
    expect(page.get_by_role("button", name="Copy the client secret")).to_contain_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == secret


def test_the_workloads_list_follows_the_project_switcher(open_session, org):
    make_workload(org, name="in-alpha")
    make_workload(org, name="in-beta", project=org.b)
    page = open_session("root").page
    page.goto("/workloads")
    page.get_by_label("Project", exact=True).select_option(label="alpha")
    expect(page.get_by_role("link", name="in-alpha")).to_be_visible()
    expect(page.get_by_role("link", name="in-beta")).to_have_count(0)
    page.get_by_label("Project", exact=True).select_option(label="beta")
    expect(page.get_by_role("link", name="in-beta")).to_be_visible()
    expect(page.get_by_role("link", name="in-alpha")).to_have_count(0)
    page.get_by_role("link", name="Show every project").click()
    expect(page.get_by_role("link", name="in-alpha")).to_be_visible()
    expect(page.get_by_role("link", name="in-beta")).to_be_visible()


def test_suspend_and_delete_are_in_the_audit_trail(open_session, org):
    workload = make_workload(org)
    session = open_session("bob")
    page = session.page
    page.goto(f"/workloads/{workload.pk}")
    page.get_by_role("button", name="Suspend").click()
    session.confirm("Suspend train-a")
    expect(page.get_by_test_id("phase")).to_have_text("Stopping")
    page.get_by_role("button", name="Delete").click()
    session.confirm("Delete train-a")
    page.wait_for_url("**/workloads")
    events = AuditEvent.objects.filter(object_type="workloads.workload", object_id=str(workload.pk)).order_by("at")
    assert [(e.actor_name, e.action) for e in events] == [("bob", "update"), ("bob", "delete")]
    assert events[0].changes["desired_phase"] == ["Running", "Stopped"]
    admin = open_session("root").page
    admin.goto("/org/audit")
    expect(admin.locator("tbody tr").filter(has_text="workloads.workload").first).to_contain_text("bob")
