"""The workload page's terminal (static/studio/terminal.js on xterm.js): offered to the project's members, shown
disabled with the reason to a viewer, its vendored files served under the page's Content-Security-Policy, and the
page clean under axe-core in both themes. Live: the portal served by its ASGI application (config/asgi.py, uvicorn,
as deploy/ runs it), a workspace running on kubesim, a member opens a shell, types `ls /` and reads the listing;
the viewer's page offers nothing and the endpoint refuses her socket."""

import pytest
from playwright.sync_api import expect

from studio.models import AuditEvent, Level
from tests.browser.conftest import Session, live_requests_finish
from tests.browser.test_layout import AXE, AXE_RUN
from tests.factories import MembershipFactory, UserFactory
from tests.workloads.cluster_support import wait_for
from workloads import tasks
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


@pytest.mark.worker
def test_a_member_runs_ls_in_the_web_terminal_and_a_viewer_cannot(browser, asgi_server, sim_org, worker):
    asgi_portal = asgi_server.url  # the portal's pages and the sessions, as deploy/ serves them
    body = {"name": "lab", "projectId": sim_org.project.id, "clusterId": str(sim_org.cluster.pk),
            "spec": {"image": "jupyter/base-notebook"}}
    answer = sim_org.api.post("/api/v1/workloads/workspaces", body, format="json")
    assert answer.status_code in (200, 202), answer.json()
    workload_id = answer.json()["workloadId"]
    wait_for(lambda: Workload.objects.get(pk=workload_id).actual_phase == "Running"
             and Pod.objects.filter(workload_id=workload_id, phase="Running").exists(),
             step=lambda: tasks.cluster_sync.apply(args=[str(sim_org.cluster.pk)]), interval=0.5, timeout=60,
             what="lab to run")
    pod = Pod.objects.get(workload_id=workload_id, phase="Running").name
    sessions = []
    try:
        member = Session(browser, asgi_portal)
        sessions.append(member)
        page = member.login(sim_org.user.username).page
        page.goto(f"/workloads/{workload_id}")
        panel = page.locator("#terminal")
        expect(panel.get_by_label("Pod")).to_have_value(pod)
        panel.get_by_role("button", name="Open terminal").click()
        expect(page.locator("#terminal-note")).to_contain_text(f"Connected to {pod} (v5.channel.k8s.io): sh")
        rows = panel.locator(".xterm-rows")
        expect(rows).to_contain_text(f"{pod}$")  # the shell's prompt (PS1 of the pod)
        page.keyboard.type("ls /; echo listed-$((6*7))")
        page.keyboard.press("Enter")
        expect(rows).to_contain_text("listed-42")  # the shell ran it: not an echo of what was typed
        expect(rows).to_contain_text("tmp")
        expect(rows).to_contain_text("etc")
        member.screenshot("workload-terminal")
        page.keyboard.type("exit 3")
        page.keyboard.press("Enter")
        expect(rows).to_contain_text("[The command ended with exit code 3.]")
        expect(page.locator("#terminal-note")).to_have_text("The command ended with exit code 3. Reconnect to start "
                                                            "again.")
        # A command of its own: its arguments' absolute paths are the pod's (kubesim's stand-in for a container).
        panel.get_by_label("Command").fill("ls /")
        panel.get_by_role("button", name="Reconnect").click()
        expect(rows).to_contain_text("workspace")
        expect(rows).to_contain_text("[The command ended (exit code 0).]")
        # Refused: the server's reason, as a line. The pod that is gone is chosen and Reconnect clicked in one script:
        # the page's live part, refreshing the pods between the two, put the running pod back (a run saw `ls /` again).
        page.evaluate("() => { const s = document.getElementById('terminal-pod'); s.add(new Option('gone-0', 'gone-0'));"
                      " s.value = 'gone-0'; document.getElementById('terminal-connect').click(); }")
        expect(page.locator("#terminal-note")).to_have_text("Pod gone-0 not found in this workload. Reconnect to "
                                                            "start again.")
        opened = AuditEvent.objects.filter(object_type="workloads.exec", action="create",
                                           actor=sim_org.user).order_by("at")
        assert [e.changes["command"][1] for e in opened] == [["sh"], ["ls", "/"]]

        viewer_user = UserFactory(username=f"viewer-{sim_org.project.name}")
        MembershipFactory(user=viewer_user, project=sim_org.project, role=Level.VIEWER)
        viewer = Session(browser, asgi_portal)
        sessions.append(viewer)
        viewer_page = viewer.login(viewer_user.username).page
        viewer_page.goto(f"/workloads/{workload_id}")
        expect(viewer_page.get_by_role("button", name="Open terminal")).to_be_disabled()
        assert viewer_page.locator("#terminal").count() == 0
        # The page offers nothing, and a socket she opens herself is refused by the endpoint.
        closed = viewer_page.evaluate("""(url) => new Promise((resolve) => {
            const ws = new WebSocket(url, ["v5.channel.k8s.io"]);
            ws.onclose = (event) => resolve([event.code, JSON.parse(event.reason).code]);
        })""", f"{asgi_portal.replace('http', 'ws')}/api/v1/workloads/{workload_id}/exec?command=sh&pod={pod}")
        assert closed == [4403, 403]
        assert [e for s in sessions for e in s.errors()] == []
    finally:
        for session in sessions:
            session.context.close()
        live_requests_finish()
