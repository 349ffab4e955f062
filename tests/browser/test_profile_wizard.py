"""The whole path of seed 002 in the browser: a platform admin builds a service profile through every wizard
step and shares it with one project; a member of that project launches it from the catalog, sees it reach
Running on the simulated cluster with its outputs, and suspends and resumes it; a member of another project
does not see it. The cluster work is real: a Celery worker pushes to kubesim, sync rounds run here."""

import time

import pytest
from playwright.sync_api import expect

from profiles.models import LaunchSecret, ServiceProfile
from profiles.selectors import catalog_for
from tests.workloads.cluster_support import wait_for
from workloads import tasks
from workloads.models import Workload

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

README = "# Team notebook\n\nLog in with the **Token** from the outputs."


def fill_row(page, title: str, index: int, key: str, value: str):
    page.get_by_label(f"{title} key {index}", exact=True).fill(key)
    page.get_by_label(f"{title} value {index}", exact=True).fill(value)


def admin_builds_the_profile(session, sim_org, live_server, taken_name: str) -> ServiceProfile:
    page = session.page
    page.goto("/studio/service-profiles")
    page.get_by_role("link", name="New service profile").click()

    # 1. General — a name that is taken is refused by the service, next to the field
    page.get_by_label("Unique name").fill(taken_name)
    page.get_by_label("Display name").fill("Team Notebook")
    page.get_by_label("Description").fill("JupyterLab for the team, with a quarter of a GPU.")
    page.get_by_label("Environment template", exact=True).select_option("notebook")
    expect(page.get_by_label("Environment template version").locator("option", has_text="1.0.0")).to_have_count(1)
    page.get_by_label("Environment template version").select_option("1.0.0")
    page.get_by_label("Service type").select_option("notebook")
    page.get_by_role("button", name="Save & Continue").click()
    expect(page.locator(".field", has=page.get_by_label("Unique name")).get_by_role("alert")).to_have_text(
        f"A service profile named '{taken_name}' already exists.")
    page.get_by_label("Unique name").fill("team-notebook")
    session.screenshot("wizard-1-general")
    page.get_by_role("button", name="Save & Continue").click()

    # 2. Details — readme preview, key/value rows (one label value the service refuses, then fixed)
    expect(page.get_by_role("heading", name="2. Details")).to_be_visible()
    profile = ServiceProfile.objects.get(name="team-notebook")
    assert profile.draft_step == "details" and not catalog_for(sim_org.project).filter(pk=profile.pk).exists()
    page.get_by_label("Icon URL").fill(f"{live_server.url}/static/studio/profile-icon.svg")
    page.get_by_label("Readme").fill(README)
    page.get_by_role("button", name="Preview readme").click()
    expect(page.locator("#readme-preview h1")).to_have_text("Team notebook")
    fill_row(page, "Labels", 1, "team", "not valid!")
    page.get_by_role("button", name="Add a row to labels").click()
    fill_row(page, "Labels", 2, "tier", "gold")
    fill_row(page, "Annotations", 1, "example.com/owner", "ML team")
    fill_row(page, "Extra configuration", 1, "LOG_LEVEL", "debug")
    page.get_by_role("button", name="Save & Continue").click()
    expect(page.locator("[data-row]", has=page.get_by_label("Labels key 1", exact=True)).get_by_role("alert")
           ).to_contain_text("A label value is at most 63")
    page.get_by_label("Labels value 1", exact=True).fill("ml")
    session.screenshot("wizard-2-details")
    page.get_by_role("button", name="Save draft & exit").click()

    # the draft waits in the list, and resumes at the next step
    page.goto("/studio/service-profiles")
    row = page.locator("tr", has=page.get_by_role("link", name="team-notebook", exact=True))
    expect(row.locator(".badge.draft")).to_have_text("Draft")
    row.get_by_role("link", name="Continue setup").click()

    # 3. Input settings — one row per template variable
    expect(page.get_by_role("heading", name="3. Input settings")).to_be_visible()
    page.get_by_label("Override by users").nth(0).select_option("not-allowed")  # image
    page.locator("#inputs\\.gpu_portion\\.override").select_option("restricted")
    page.locator("#inputs\\.gpu_portion\\.allowedValues").fill("0.25, 0.5")
    page.locator("#inputs\\.gpu_portion\\.default").fill("0.25")
    page.locator("#inputs\\.memory\\.default").fill("1Gi")
    page.locator("fieldset", has_text="memory").get_by_label("Required").check()
    session.screenshot("wizard-3-inputs")
    page.get_by_role("button", name="Save & Continue").click()

    # 4. Output settings
    expect(page.get_by_role("heading", name="4. Output settings")).to_be_visible()
    page.locator("#outputs\\.url\\.label").fill("Open notebook")
    page.locator("fieldset", has_text="service_address").get_by_label("Shown to users").uncheck()
    expect(page.locator("fieldset", has_text="token").get_by_label("Sensitive")).to_be_disabled()
    session.screenshot("wizard-4-outputs")
    page.get_by_role("button", name="Save & Continue").click()

    # 5. Sharing — with the one project
    expect(page.get_by_role("heading", name="5. Sharing")).to_be_visible()
    expect(page.get_by_label(sim_org.project.name)).to_be_hidden()
    page.get_by_label("Selected projects").check()
    page.get_by_label(sim_org.project.name).check()
    session.screenshot("wizard-5-sharing")
    page.get_by_role("button", name="Save & Finish").click()

    expect(page.locator("main h1.page-title")).to_contain_text("Team Notebook")
    expect(page.get_by_text(f"Selected: {sim_org.project.name}")).to_be_visible()
    expect(page.locator(".readme h1")).to_have_text("Team notebook")
    session.screenshot("profile-view")
    profile.refresh_from_db()
    assert (profile.draft_step, profile.labels, profile.annotations, profile.extra_config) == (
        "", {"team": "ml", "tier": "gold"}, {"example.com/owner": "ML team"}, {"LOG_LEVEL": "debug"})
    inputs = {s["name"]: s for s in profile.inputs}
    assert inputs["image"]["override"] == "not-allowed" and inputs["memory"]["required"]
    assert (inputs["gpu_portion"]["allowedValues"], inputs["gpu_portion"]["default"]) == ([0.25, 0.5], 0.25)
    assert [o["visible"] for o in profile.outputs] == [True, False, True]
    page.goto("/studio/service-profiles")
    session.screenshot("service-profiles")
    return profile


def test_admin_builds_a_profile_a_member_launches_it_to_running_and_an_outsider_never_sees_it(
        open_session, org, sim_org, worker, notebook_version, live_server, make_profile):
    admin = open_session("root")
    profile = admin_builds_the_profile(admin, sim_org, live_server, taken_name=make_profile().name)

    member = open_session(sim_org.user.username)
    page = member.page
    page.goto("/catalog")
    card = page.locator("article", has=page.get_by_role("heading", name="Team Notebook"))
    expect(page.get_by_role("heading", name="Notebook", exact=True)).to_be_visible()
    expect(card.locator("img.profile-icon")).to_have_js_property("naturalWidth", 40)
    card.get_by_text("Readme").click()
    expect(card.locator(".readme h1")).to_have_text("Team notebook")
    member.screenshot("catalog")
    card.get_by_role("link", name="Launch Team Notebook").click()

    # the form: fixed inputs read-only, restricted ones a choice, types checked by the page and the server
    expect(page.get_by_label("Notebook image")).to_be_disabled()
    expect(page.get_by_label("Share of one GPU")).to_have_value("0.25")
    expect(page.get_by_label("Memory", exact=True)).to_have_attribute("required", "")
    page.get_by_label("Workload name").fill("nb-1")
    page.get_by_label("CPU cores").fill("100")
    assert page.get_by_label("CPU cores").evaluate("el => el.validity.rangeOverflow")
    page.get_by_label("CPU cores").fill("2")
    page.get_by_label("Memory", exact=True).fill("128Gi")  # a quantity the page cannot compare; the server can
    page.get_by_role("button", name="Launch").click()
    expect(page.locator(".field", has=page.get_by_label("Memory", exact=True)).get_by_role("alert")).to_have_text(
        "Must be at most 64Gi.")
    member.screenshot("launch-error")
    assert not Workload.objects.filter(name="nb-1").exists()
    page.get_by_label("Memory", exact=True).fill("1Gi")
    page.get_by_role("button", name="Launch").click()

    # the workload page shows progress, then Running with the outputs
    page.wait_for_url("**/workloads/*")
    workload = Workload.objects.get(name="nb-1")
    assert (workload.profile_id, workload.launch_inputs["gpu_portion"]) == (profile.pk, 0.25)
    expect(page.get_by_role("progressbar")).to_be_visible()

    def sync():
        tasks.cluster_sync.apply(args=[str(sim_org.cluster.pk)])

    def phase(name):
        wait_for(lambda: Workload.objects.get(pk=workload.pk).actual_phase == name, step=sync, interval=0.5,
                 timeout=60, what=f"nb-1 to be {name}")
        expect(page.get_by_test_id("phase")).to_have_text(name, timeout=10_000)

    phase("Running")
    expect(page.locator(".timeline-list")).to_contain_text("Running", timeout=10_000)  # re-read while it changed
    expect(page.locator("#workload-live tbody .badge")).to_have_text(["Running"])
    for _ in range(3):  # samples a few seconds apart, so that the charts have lines
        tasks.cluster_collect_metrics.apply(args=[str(sim_org.cluster.pk)])
        time.sleep(1)
    wait_for(lambda: Workload.objects.get(pk=workload.pk).endpoints.get("url"), step=sync, timeout=30,
             what="the notebook's URL")
    page.reload()
    expect(page.locator("#metrics canvas")).to_have_count(5)  # a GPU job: GPU mean, per GPU, GPU memory, CPU, memory
    outputs = page.locator("#outputs")
    expect(outputs.locator("[data-output=url]")).to_contain_text("http", timeout=10_000)
    expect(outputs.get_by_text("Service address")).to_have_count(0)
    token = LaunchSecret.objects.get(workload_id=workload.pk).data["generated.token"]
    expect(outputs.locator("[data-output=token]")).to_have_text("••••••••")
    page.get_by_role("button", name="Reveal Token").click()
    expect(outputs.locator("[data-output=token]")).to_have_text(token)
    expect(page.get_by_role("progressbar")).to_have_count(0)
    member.screenshot("workload-running")

    page.get_by_role("button", name="Suspend").click()
    member.confirm("Suspend nb-1", says="Suspend nb-1?")
    phase("Stopped")
    page.get_by_role("button", name="Resume").click()
    phase("Running")

    outsider = open_session("dave")
    outsider.page.goto("/catalog")
    expect(outsider.page.get_by_role("heading", name="Catalog")).to_be_visible()
    expect(outsider.page.get_by_text("Team Notebook")).to_have_count(0)
    outsider.goto_expecting(f"/catalog/{profile.pk}/launch", 404)
