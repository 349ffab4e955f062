"""Journeys that end where a person wanted to be, on pages that tell the truth without a reload: a workload page
left open while its job completes (phase, actions and charts follow), the admin's cluster and user tasks, a
viewer who can read but not change, a Kit user who starts and stops a stream."""

import re

import pytest
from playwright.sync_api import expect

from kit import services as kit_services
from studio.models import AccessKey, Cluster
from tests.workloads.cluster_support import run_seconds, training_body, wait_for
from workloads import tasks
from workloads.models import Workload

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_workload_page_left_open_follows_the_job_to_completed(open_session, sim_org, worker):
    # Long enough that metrics are still collected while it runs on a loaded machine (CI's run at 6 s did not).
    body = training_body(sim_org.project, "train-live", annotations=run_seconds(20))
    workload_id = sim_org.api.post("/api/v1/workloads/trainings", body, format="json").json()["workloadId"]
    session = open_session(sim_org.user.username)
    page = session.page
    page.goto(f"/workloads/{workload_id}")
    status = page.get_by_test_id("phase")

    def sync():
        tasks.cluster_sync.apply(args=[str(sim_org.cluster.pk)])

    wait_for(lambda: Workload.objects.get(pk=workload_id).actual_phase == "Running", step=sync, interval=0.5,
             timeout=60, what="train-live to run")
    expect(status).to_have_text("Running", timeout=10_000)
    expect(page.get_by_role("button", name="Suspend")).to_be_visible()
    points = "(id) => { const c = Chart.getChart(document.getElementById(id)); " \
             "return c ? c.data.datasets.filter((d) => !d.stepped).reduce((n, d) => n + d.data.length, 0) : 0; }"

    def collect():  # samples while the page is open: the charts draw them without a reload
        tasks.cluster_collect_metrics.apply(args=[str(sim_org.cluster.pk)])

    wait_for(lambda: page.evaluate(points, "chart-cpu") > 1, step=collect, timeout=30, interval=1,
             what="CPU samples drawn")
    times = page.evaluate("() => Chart.getChart(document.getElementById('chart-cpu')).data.datasets[0].data"
                          ".map((p) => p.x)")
    assert times == sorted(times)  # the time axis only moves forward
    expect(page.locator("#log-view")).to_contain_text("started from image python:3.11", timeout=15_000)

    wait_for(lambda: Workload.objects.get(pk=workload_id).actual_phase == "Completed", step=sync, interval=0.5,
             timeout=90, what="train-live to complete")
    expect(status).to_have_text("Completed", timeout=10_000)  # no reload: the live part re-read it
    expect(page.get_by_role("button", name="Suspend")).to_have_count(0)  # no Suspend offered on a finished job
    expect(page.get_by_role("button", name="Delete")).to_be_visible()
    expect(page.locator("#log-view")).to_contain_text("finished", timeout=15_000)
    session.screenshot("workload-completed")


def test_admin_edits_a_cluster_tests_it_and_manages_a_user(open_session, sim_org, org):
    session = open_session("root")
    page = session.page
    page.goto("/org/clusters")
    row = page.locator("tr", has=page.get_by_text(sim_org.cluster.name, exact=True))
    row.get_by_role("button", name=f"Test connection to {sim_org.cluster.name}").click()
    expect(page.get_by_role("status").filter(has_text="connected, Kubernetes")).to_be_visible()
    expect(row.locator("[data-status]")).to_have_text("Connected")
    row.get_by_role("link", name=f"Edit {sim_org.cluster.name}").click()
    expect(page.get_by_label("Token")).to_have_value("")  # write-only: never shown back
    page.get_by_label("Prometheus URL").fill("http://prometheus.example:9090")
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status").filter(has_text=f"Saved cluster {sim_org.cluster.name}")).to_be_visible()
    cluster = Cluster.objects.get(pk=sim_org.cluster.pk)
    assert cluster.prometheus_url == "http://prometheus.example:9090" and cluster.token  # token kept
    session.screenshot("clusters")

    page.goto("/org/projects")
    page.get_by_role("link", name="Edit alpha").click()
    page.get_by_label("Suspend idle workspaces after (minutes)").fill("0")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("alert").filter(has_text="greater than or equal to 1")).to_be_visible()
    page.get_by_label("Suspend idle workspaces after (minutes)").fill("30")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="Saved project alpha")).to_be_visible()

    nav = page.get_by_role("navigation", name="Main")
    nav.get_by_role("link", name="Users").click()
    page.get_by_label("Email").fill("erin@example.com")
    page.get_by_role("button", name="Create user").click()
    password = page.locator("#secret-once [data-secret]").inner_text()
    session.screenshot("users")
    page.get_by_role("link", name="erin@example.com").click()
    page.locator("main").get_by_label("Project", exact=True).select_option(label="beta")
    page.locator("main").get_by_label("Role", exact=True).select_option("L1 researcher")
    page.get_by_role("button", name="Save role").click()
    expect(page.get_by_role("status").filter(has_text="erin@example.com is L1 researcher in beta")).to_be_visible()
    page.get_by_role("button", name="Deactivate").click()
    session.confirm("Deactivate erin@example.com", says="can no longer log in")
    expect(page.locator("h1")).to_contain_text("Deactivated")
    session.screenshot("user-detail")

    erin = open_session()
    erin.page.goto("/login")
    erin.page.get_by_label("Username").fill("erin@example.com")
    erin.page.get_by_label("Password").fill(password)
    erin.page.get_by_role("button", name="Log in").click()
    expect(erin.page.get_by_role("alert")).to_be_visible()  # deactivated: the login is refused


def test_a_member_creates_an_access_key_and_a_viewer_changes_nothing(open_session, org):
    member = open_session("bob")
    page = member.page
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Access keys").click()
    page.get_by_label("Name").fill("ci")
    page.get_by_role("button", name="Create access key").click()
    secret = page.locator("#secret-once [data-secret]").inner_text()
    key = AccessKey.objects.get(user=org.users.member, name="ci")
    assert key.check_secret(secret)
    member.screenshot("access-keys")
    page.goto("/account/access-keys")
    expect(page.locator("#secret-once")).to_have_count(0)  # shown once
    page.get_by_role("button", name="Delete ci").click()
    member.confirm("Delete ci", says=key.client_id)
    expect(page.get_by_role("status").filter(has_text="Deleted the access key ci")).to_be_visible()
    assert not AccessKey.objects.filter(pk=key.pk).exists()

    workload = Workload.objects.create(kind="training", name="train-a", requested_name="train-a", project=org.a,
                                       department=org.department, cluster=org.cluster, created_by_name="bob",
                                       spec={"image": "python:3.11"}, actual_phase="Running", running_pods=1)
    viewer = open_session("carol")
    viewer.page.goto(f"/workloads/{workload.pk}")
    expect(viewer.page.get_by_test_id("phase")).to_have_text("Running")
    expect(viewer.page.get_by_role("button", name="Suspend")).to_have_count(0)
    expect(viewer.page.get_by_role("button", name="Delete")).to_have_count(0)
    expect(viewer.page.locator("#logs")).to_have_count(1)  # as on Run:ai, a viewer's View covers the log
    viewer.page.goto("/catalog")
    expect(viewer.page.locator("main h1.page-title")).to_contain_text("Catalog")


def test_a_kit_user_starts_a_stream_watches_it_and_stops_it(open_session, org):
    app = kit_services.application_create(actor=org.users.platform_admin, app_id="usd-viewer", name="USD Viewer",
                                          description="View OpenUSD stages.", tags=["viewer"])
    for number in ("1.0.0", "1.1.0"):
        kit_services.version_create(actor=org.users.platform_admin, application=app, version=number,
                                    container="nvcr.io/nvidia/omniverse/usd-viewer", container_version=number)
    composer = kit_services.application_create(actor=org.users.platform_admin, app_id="usd-composer",
                                               name="USD Composer")
    kit_services.version_create(actor=org.users.platform_admin, application=composer, version="2025.1.0",
                                container="nvcr.io/nvidia/omniverse/usd-composer", container_version="2025.1.0")
    kit_services.profile_create(actor=org.users.platform_admin, profile_id="default", owner_project_id=org.a.pk,
                                fields={"name": "Default", "description": "Any app.",
                                        "supported_applications": [{"name": "*", "versions": ["*"]}]},
                                sharing={"mode": "all"})
    session = open_session("bob")
    page = session.page
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Streams").click()
    page.get_by_label("Application", exact=True).select_option("usd-viewer")
    # the version is chosen from the application's versions, not typed
    version = page.get_by_label("Version", exact=True)
    assert version.evaluate("el => el.tagName") == "SELECT"
    assert version.locator("optgroup:not([disabled]) option").all_inner_texts() == ["1.1.0", "1.0.0"]
    version.select_option("1.0.0")
    page.get_by_label("Application", exact=True).select_option("usd-composer")
    expect(version).to_have_value("")  # another application's version is not kept
    assert version.locator("optgroup:not([disabled]) option").all_inner_texts() == ["2025.1.0"]
    page.get_by_label("Application", exact=True).select_option("usd-viewer")
    version.select_option("1.0.0")
    page.get_by_label("Application profile").select_option("default")
    page.get_by_role("button", name="Start", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="Requested a usd-viewer stream in alpha")).to_be_visible()
    stream = Workload.objects.get(kind="stream")
    assert stream.request["spec"]["image"].endswith(":1.0.0")  # the chosen version, not the newest
    expect(page.locator("[data-condition]")).to_have_text("Starting")  # the session's own page
    Workload.objects.filter(pk=stream.pk).update(actual_phase="Running", endpoints={
        "serviceAddress": "25.124.78.14", "serviceType": "LoadBalancer",
        "ports": [{"name": "port-49100", "port": 49100}, {"name": "port-47998-udp", "port": 47998,
                                                          "protocol": "UDP"}]})
    expect(page.locator("[data-condition]")).to_have_text("Ready", timeout=10_000)  # watched without a reload
    expect(page.locator("#routes")).to_contain_text("25.124.78.14")
    expect(page.locator("#direct-settings")).to_contain_text("mediaPort: 47998 (UDP)")
    session.screenshot("kit-session")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Streams").click()
    row = page.locator(f"tr[data-row='{stream.pk}']")
    expect(row).to_contain_text(re.compile(r"25\.124\.78\.14:49100"))
    session.screenshot("kit-sessions")
    row.get_by_role("link", name=str(stream.pk)).click()
    page.get_by_role("button", name="Stop").click()
    session.confirm("Stop the stream", says="It ends for everyone connected")
    expect(page.get_by_role("status").filter(has_text="Stopped the usd-viewer stream")).to_be_visible()
    assert Workload.objects.get(pk=stream.pk).desired_phase == "Deleted"
