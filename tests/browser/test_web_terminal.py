"""The workload page's terminal (static/studio/terminal.js on xterm.js): offered to the project's members, shown
disabled with the reason to a viewer, its vendored files served under the page's Content-Security-Policy, and the
page clean under axe-core in both themes."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_layout import AXE, AXE_RUN
from workloads.models import Pod, Workload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def running_workspace(org) -> Workload:
    workload = Workload.objects.create(
        kind="workspace", name="lab", requested_name="lab", project=org.a, department=org.department,
        cluster=org.cluster, created_by_name="bob@example.com", spec={"image": "python:3.11"},
        actual_phase="Running", running_pods=1)
    Pod.objects.create(workload=workload, uid="uid-1", name="lab-0", phase="Running")
    return workload


def axe_clean(page):
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == [], f"{page.url}: axe-core violations"


def test_a_member_gets_the_terminal_and_a_viewer_sees_why_not(open_session, org):
    workload = running_workspace(org)
    session = open_session("bob")
    page = session.page
    scripts = []
    page.on("response", lambda r: "/static/vendor/xterm/" in r.url and scripts.append((r.url, r.status)))
    response = page.goto(f"/workloads/{workload.pk}")
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-eval" not in csp
    panel = page.locator("#terminal")
    expect(panel.get_by_role("heading", name="Terminal")).to_be_visible()
    expect(panel.get_by_label("Pod")).to_have_value("lab-0")
    expect(panel.get_by_label("Command")).to_have_value("sh")
    expect(panel.get_by_role("button", name="Open terminal")).to_be_enabled()
    expect(panel.get_by_role("button", name="Disconnect")).to_be_hidden()
    page.wait_for_function("() => typeof window.Terminal === 'function' && !!window.FitAddon")
    assert sorted(status for _, status in scripts) == [200, 200, 200], scripts
    assert page.locator("#terminal").get_attribute("data-url") == f"/api/v1/workloads/{workload.pk}/exec"
    axe_clean(page)
    page.get_by_role("button", name="Dark mode").click()
    page.reload()  # the theme applied before paint, not mid-transition
    expect(page.locator("html")).to_have_attribute("data-bs-theme", "dark")
    page.wait_for_function("() => typeof window.Terminal === 'function'")
    axe_clean(page)

    # Nothing to connect to: the page says so instead of opening a session.
    Pod.objects.filter(workload=workload).update(phase="Succeeded")
    page.reload()
    expect(panel.get_by_label("Pod")).to_have_value("")
    panel.get_by_role("button", name="Open terminal").click()
    expect(page.locator("#terminal-note")).to_have_text("No pod to connect to yet: the terminal opens once one runs.")

    viewer = open_session("carol").page
    viewer.goto(f"/workloads/{workload.pk}")
    expect(viewer.get_by_role("heading", name="Terminal")).to_be_visible()
    expect(viewer.get_by_role("button", name="Open terminal")).to_be_disabled()
    expect(viewer.get_by_test_id("terminal-why")).to_contain_text("Only the project's members and admins")
    assert viewer.locator("#terminal").count() == 0
    assert viewer.evaluate("() => typeof window.Terminal") == "undefined"  # xterm.js is not even loaded
    axe_clean(viewer)
