"""The asset pages and the New workload flow in a real Chromium, on kubesim over HTTP: the assets as cards with
their scope and usage, every problem of an empty New workload shown at once beside its choice, Try it (the
objects with the cluster's verdicts, nothing created), Submit, and both pages at 1440 and 390 px without
horizontal overflow."""

import pytest
from kubernetes import client
from playwright.sync_api import expect

from tests.assets.bodies import body
from tests.browser.test_layout import AXE, AXE_RUN, UNNAMED
from tests.conftest import bearer_client
from tests.factories import UserFactory
from workloads.models import Workload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _assets(project):
    root = bearer_client(UserFactory(username="root", platform_admin=True))
    made = {}
    for path, name, scope in (("environment", "pytorch", "project"), ("compute", "half-gpu", "tenant"),
                              ("compute", "two-gpus", "project"), ("datasource/nfs", "datasets", "project"),
                              ("credentials/docker-registry", "registry", "project")):
        sent = body(path, name, scope=scope, project=project)
        sent["spec"].pop("probes", None)
        if name == "two-gpus":
            sent["spec"] = {"gpuDevicesRequest": 2, "cpuCoreRequest": 4, "cpuMemoryRequest": "16Gi"}
        response = root.post(f"/api/v1/asset/{path}", sent, format="json")
        assert response.status_code == 202, response.json()
        made[name] = response.json()["meta"]["id"]
    return made


def _no_overflow(page, width):
    """No sideways scroll, every control named, axe-core without serious or critical violations."""
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.evaluate(UNNAMED) == [], f"{page.url}: unnamed controls"
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == [], f"{page.url} at {width}px: axe-core violations"


def test_new_workload_from_assets_and_the_asset_pages(open_session, sim_org):
    client.CoreV1Api(sim_org.k8s).create_namespace({"metadata": {"name": sim_org.namespace}})
    _assets(sim_org.project)
    session = open_session(sim_org.user.username, width=1440)
    page = session.page

    page.goto("/assets/environments")
    card = page.locator("article.asset-card", has_text="pytorch")
    expect(card.get_by_test_id("scope")).to_have_text(f"Project {sim_org.project.name}")
    expect(card.get_by_test_id("usage")).to_have_text("Not in use")
    expect(card.get_by_role("button", name="Delete")).to_have_count(1)  # an L1 researcher manages its project's
    _no_overflow(page, 1440)
    page.goto("/assets/environments?view=table")
    expect(page.locator('[data-table="assets-environments"]')).to_contain_text("nvcr.io/nvidia/pytorch")
    _no_overflow(page, 1440)
    page.goto("/assets/environments/new/environment")
    page.get_by_label("Name", exact=True).fill("Bad Name")
    page.get_by_text("More settings").click()  # beyond the image, command and tools
    page.get_by_label("Run as uid").fill("abc")
    page.get_by_role("button", name="Create").click()
    expect(page.locator("#form-errors")).to_contain_text("fields to fix")
    for field, text in (("name", "lowercase"), ("scope", "required"), ("spec.image", "required"),
                        ("spec.runAsUid", "Must be an integer.")):
        expect(page.locator(f'[id="id_{field}-error"]')).to_contain_text(text)
    _no_overflow(page, 1440)
    session.screenshot("asset-form-errors-1440")
    page.goto("/assets/compute-resources")
    expect(page.locator("article.asset-card", has_text="half-gpu").get_by_role("button", name="Delete")).to_have_count(0)
    session.screenshot("assets-1440")

    page.goto("/workloads/new")
    page.get_by_role("button", name="Submit").click()
    expect(page.locator("#form-errors")).to_contain_text("3 problems to fix")
    for field, text in (("environment", "Choose an environment."), ("compute", "Choose a compute resource."),
                        ("name", "This field is required.")):
        expect(page.locator(f"#{field}-err")).to_have_text(text)
    _no_overflow(page, 1440)

    page.get_by_label("Workload name").fill("train-1")
    page.locator("label.choice-card", has_text="pytorch").click()
    page.get_by_label("Type").select_option("training")  # the cards are read again for a training, choices kept
    expect(page.locator("#asset-choices")).to_contain_text("may use for a training")
    expect(page.locator("label.choice-card", has_text="pytorch").locator("input")).to_be_checked()
    page.locator("label.choice-card", has_text="two-gpus").click()
    page.locator("label.choice-card", has_text="datasets").click()
    page.locator("label.choice-card", has_text="registry").click()
    page.get_by_role("button", name="Try it: preview").click()
    preview = page.locator("section.launch-preview")
    expect(preview.get_by_role("heading", name="Preview of train-1")).to_be_visible()
    job = preview.locator("details").filter(has=page.locator("summary", has_text="Job"))
    expect(job.get_by_text("Cluster accepts")).to_be_visible()
    job.locator("summary").click()
    expect(job.locator("pre")).to_contain_text("nfs.example.com")
    expect(job.locator("pre")).to_contain_text("nvidia.com/gpu")
    expect(page.locator("label.choice-card", has_text="two-gpus").locator("input")).to_be_checked()
    assert Workload.objects.count() == 0
    session.screenshot("new-workload-1440")

    page.get_by_role("button", name="Submit").click()
    page.wait_for_url("**/workloads/*")
    workload = Workload.objects.get(name="train-1")
    assert workload.spec["compute"]["gpuDevicesRequest"] == 2 and workload.kind == "training"
    page.goto("/assets/environments")
    expect(page.locator("article.asset-card", has_text="pytorch").get_by_test_id("usage")).to_contain_text(
        "training train-1")

    page.goto("/assets/data-sources")
    page.locator("article.asset-card", has_text="datasets").get_by_role("button", name="Delete").click()
    session.confirm("Confirm", says="Delete the nfs datasets?")
    expect(page.get_by_text("in use by training train-1")).to_be_visible()  # refused, with what uses it

    narrow = open_session(sim_org.user.username, width=390)
    small = narrow.page
    small.goto("/assets/environments")
    expect(small.locator("article.asset-card", has_text="pytorch")).to_be_visible()
    _no_overflow(small, 390)
    narrow.screenshot("assets-390")
    small.goto("/assets/data-sources?view=table")
    expect(small.locator('[data-table="assets-data-sources"]')).to_be_visible()
    _no_overflow(small, 390)
    small.goto("/workloads/new")
    small.get_by_label("Workload name").fill("train-2")
    small.locator("label.choice-card", has_text="pytorch").click()
    small.locator("label.choice-card", has_text="half-gpu").click()
    small.get_by_role("button", name="Try it: preview").click()
    expect(small.locator("section.launch-preview")).to_be_visible()
    _no_overflow(small, 390)
    narrow.screenshot("new-workload-390")
