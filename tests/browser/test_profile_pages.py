"""PaaS Studio pages around the wizard: navigation per role, the project switcher, the profile list (search,
actions menu, sharing, delete with confirmation), editing, system profiles, environment templates and
versions, and the catalog for viewers."""

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from profiles.models import EnvironmentTemplate, ServiceProfile
from profiles.selectors import catalog_for
from tests.browser.test_layout import AXE, AXE_RUN

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ADMIN_LINKS = ["Service profiles", "Environment templates", "Clusters", "Departments", "Projects", "Audit trail"]


def nav(page):
    return page.get_by_role("navigation", name="Main")


def test_admins_and_users_get_their_own_navigation_home_and_catalog_per_project(open_session, org, make_profile):
    make_profile("alpha-lab", display_name="Alpha lab")
    make_profile("beta-lab", display_name="Beta lab", owner_project=org.b)
    make_profile("half-done", draft_step="inputs")

    admin = open_session("root")
    page = admin.page
    for link in ADMIN_LINKS:
        expect(nav(page).get_by_role("link", name=link, exact=True)).to_be_visible()
    counts = page.locator("a.card", has_text="Service profiles")
    expect(counts.locator("strong")).to_have_text("3")
    expect(counts).to_contain_text("1 draft")
    admin.screenshot("home-admin")
    counts.click()
    expect(page.get_by_role("heading", name="Service profiles")).to_be_visible()

    # the switcher picks the project whose catalog is shown; drafts are in none
    page.goto("/catalog")
    page.get_by_label("Project").select_option(label="alpha")
    expect(page.get_by_role("heading", name="Alpha lab")).to_be_visible()
    expect(page.get_by_role("heading", name="Beta lab")).to_have_count(0)
    page.get_by_label("Project").select_option(label="beta")
    expect(page.get_by_role("heading", name="Beta lab")).to_be_visible()
    expect(page.get_by_role("heading", name="Alpha lab")).to_have_count(0)
    expect(page.get_by_text("half-done")).to_have_count(0)

    member = open_session("bob")
    for link in ADMIN_LINKS:
        expect(nav(member.page).get_by_role("link", name=link, exact=True)).to_have_count(0)
    expect(nav(member.page).get_by_role("link", name="Members")).to_be_visible()
    expect(member.page.locator("a.card", has_text="Running")).to_be_visible()
    member.goto_expecting("/studio/service-profiles", 403)
    member.page.goto("/")
    member.page.get_by_role("button", name="Log out").click()
    expect(member.page.get_by_role("button", name="Log in")).to_be_visible()
    member.screenshot("login")


def test_profile_list_search_actions_menu_sharing_edit_and_delete(open_session, org, make_profile):
    lab = make_profile("lab-notebook", display_name="Lab notebook")
    make_profile("batch-jobs", service_type="jobs")
    session = open_session("root")
    page = session.page
    page.goto("/studio/service-profiles")
    rows = page.locator("tbody tr")
    expect(rows).to_have_count(2)
    expect(page.locator("thead")).to_contain_text("Unique name")
    for column in ("Service type", "Creation date", "Sharing"):
        expect(page.get_by_role("columnheader", name=column)).to_be_visible()
    page.get_by_label("Search", exact=True).fill("batch")
    page.get_by_label("Search", exact=True).press("Enter")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Jobs")
    page.get_by_label("Search", exact=True).fill("")
    page.get_by_label("Service type").select_option("notebook")
    page.get_by_role("button", name="Search").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("lab-notebook")

    # the actions menu works from the keyboard, and only one is open at a time
    menu = page.get_by_label("Actions for lab-notebook")
    menu.focus()
    page.keyboard.press("Enter")
    page.get_by_role("link", name="Manage sharing").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="5. Sharing")).to_be_visible()
    page.get_by_label("Selected projects").check()  # and no project: refused, next to the projects
    page.get_by_role("button", name="Save", exact=True).click()
    projects = page.locator("fieldset", has=page.get_by_text("Projects", exact=True))
    expect(projects.get_by_role("alert")).to_have_text(
        "Choose at least one project to share with (or share with none or all).")
    lab.refresh_from_db()
    assert lab.sharing() == {"mode": "none", "projectIds": []}
    page.get_by_label("All projects").check()
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_text("All projects")).to_be_visible()
    assert catalog_for(org.b).filter(pk=lab.pk).exists()

    # editing goes through the same steps; every change is a new revision
    page.get_by_role("link", name="Edit").click()
    expect(page.get_by_label("Unique name")).to_be_disabled()
    page.get_by_label("Display name").fill("Lab notebook (GPU)")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator("main h1.page-title")).to_contain_text("Lab notebook (GPU)")
    lab.refresh_from_db()
    assert (lab.display_name, lab.revision) == ("Lab notebook (GPU)", 3)

    page.goto("/studio/service-profiles")
    row = page.locator("tr", has=page.get_by_role("link", name="batch-jobs", exact=True))
    row.get_by_label("Actions for batch-jobs").click()
    row.get_by_role("button", name="Delete").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("Delete the service profile batch-jobs?")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    assert ServiceProfile.objects.filter(name="batch-jobs").exists()
    row.get_by_label("Actions for batch-jobs").click()
    row.get_by_role("button", name="Delete").click()
    dialog.get_by_role("button", name="Delete batch-jobs").click()
    expect(page.get_by_role("status").filter(has_text="Deleted batch-jobs.")).to_be_visible()
    assert session.dialogs == []  # no native confirm()
    assert not ServiceProfile.objects.filter(name="batch-jobs").exists()


def test_system_profiles_from_the_home_page_launch_and_clone_into_a_project(open_session, org):
    """Seed 002: the home page shows the system profiles as cards with "View All" and launch; the System
    Profiles page launches one in the current project or clones it, asking for an owner project and a new name;
    the copy lands in that project's catalog. Their icons are static files (this browser has no internet)."""
    call_command("system_profiles", stdout=StringIO())
    session = open_session("root")
    page = session.page
    system = page.get_by_role("region", name="System profiles")
    expect(system.locator("article")).to_have_count(3)
    expect(system.locator("article img").first).to_have_attribute("src", re.compile(r"^/static/studio/profile-icons/"))
    assert page.evaluate("[...document.images].every((i) => i.complete && i.naturalWidth > 0)")
    system.get_by_role("link", name="View All").click()
    expect(page.locator("main h1.page-title")).to_have_text("System profiles")
    expect(nav(page).get_by_role("link", name="System profiles")).to_have_attribute("aria-current", "page")
    page.goto("/")
    system.get_by_role("link", name="Launch PyTorch Training").click()
    card = page.locator("article#profile-pytorch-training")
    expect(card).to_be_visible()
    session.screenshot("system-profiles")

    # launch from the System Profiles page, in the current project (alpha)
    card.get_by_role("link", name="Launch PyTorch Training").click()
    expect(page.locator("main h1.page-title")).to_contain_text("Launch PyTorch Training")
    page.go_back()

    card.get_by_role("link", name="Clone PyTorch Training").click()
    page.goto(page.url.split("#")[0].replace("#clone", "") + "/edit/general")
    expect(page.get_by_role("alert").filter(has_text="System profiles are read-only")).to_be_visible()
    clone = page.locator("#clone")
    clone.get_by_label("Owner project").select_option("")
    clone.get_by_label("Name of the copy", exact=True).fill("pytorch-training")
    clone.get_by_role("button", name="Clone").click()
    assert clone.get_by_label("Owner project").evaluate("(el) => el.validity.valueMissing")  # the browser refuses
    assert not ServiceProfile.objects.filter(name="pytorch-training", system=False).exists()
    clone.get_by_label("Owner project").select_option(label="beta")
    clone.get_by_role("button", name="Clone").click()
    expect(clone.locator(".field", has=page.get_by_label("Name of the copy", exact=True)).get_by_role("alert")).to_contain_text(
        "already exists")
    clone.get_by_label("Name of the copy", exact=True).fill("my-training")
    clone.get_by_label("Display name of the copy").fill("My training")
    clone.get_by_role("button", name="Clone").click()
    expect(page.get_by_role("status").filter(has_text="Cloned pytorch-training as my-training in project beta")).to_be_visible()
    expect(page.get_by_role("link", name="Edit")).to_be_visible()
    copy = ServiceProfile.objects.get(name="my-training")
    assert (copy.system, copy.owner_project, copy.display_name) == (False, org.b, "My training")
    assert catalog_for(org.b).filter(pk=copy.pk).exists() and not catalog_for(org.a).filter(pk=copy.pk).exists()


def test_environment_templates_and_versions_with_inline_errors(open_session, org):
    session = open_session("root")
    page = session.page
    page.goto("/studio/environment-templates")
    page.get_by_label("Unique name").fill("trainer")
    page.get_by_label("Display name").fill("Trainer")
    page.get_by_label("Description").fill("Runs a training script.")
    page.get_by_role("button", name="Create template").click()
    expect(page.locator("main h1.page-title")).to_contain_text("Trainer")
    # The heading shows before the page's deferred scripts run; a kind chosen before ui.js listens re-renders nothing.
    page.wait_for_load_state()

    page.get_by_label("Version", exact=True).fill("1.0.0")
    kind = page.get_by_label("Workload kind")
    assert kind.evaluate("s => s.selectedOptions[0].defaultSelected")  # the kind shown is the one rendered
    page.get_by_label("Workload kind").select_option("training")  # as shown: nothing re-rendered
    with page.expect_navigation():  # another kind: the form shows that kind's spec fields (nothing saved)
        page.get_by_label("Workload kind").select_option("distributed")
    expect(page.get_by_label("Num workers")).to_be_visible()
    expect(page.get_by_label("Version", exact=True)).to_have_value("1.0.0")
    with page.expect_navigation():
        page.get_by_label("Workload kind").select_option("training")
    expect(page.get_by_label("Num workers")).to_have_count(0)
    assert not EnvironmentTemplate.objects.get(name="trainer").versions.exists()
    # The spec template as typed inputs, from the training spec's serializer (no JSON box)
    expect(page.get_by_label("Spec template (JSON)")).to_have_count(0)
    page.get_by_label("Image", exact=True).fill("python:3.12")
    page.get_by_label("Args", exact=True).fill("--epochs {{ epochs }}")
    page.get_by_label("Image pull policy").select_option("IfNotPresent")
    page.get_by_label("CPU core request").fill("2")
    page.get_by_label("Environment variable 1 name").fill("MODE")
    page.get_by_role("button", name="Add a row to environment variables").click()
    page.get_by_label("Environment variable 2 name").fill("EPOCHS")
    page.get_by_label("Environment variable 2 value").fill("run-{{ epochs }}")
    page.get_by_label("Backoff limit", exact=True).fill("many")
    page.get_by_role("button", name="Add version").click()
    # each problem on its input, in one save: the placeholder in args and in the variable's value, and the
    # backoff limit's type (once named only in a second round, after the placeholders were fixed)
    expect(page.locator("#specargs-err")).to_contain_text("Unknown placeholder {{ epochs }}")
    expect(page.get_by_label("Args", exact=True)).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("Environment variable 2 value")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("Backoff limit", exact=True)).to_have_attribute("aria-invalid", "true")
    page.get_by_label("Backoff limit", exact=True).fill("")
    expect(page.get_by_label("Environment variable 2 name")).to_have_value("EPOCHS")  # what was typed stays
    # The variables as a typed table: a bad default is filed on its cell
    page.get_by_label("Variable 1 name", exact=True).fill("epochs")
    page.get_by_label("Variable 1 type", exact=True).select_option("integer")
    page.get_by_label("Variable 1 default", exact=True).fill("many")
    page.get_by_role("button", name="Add version").click()
    row = page.locator("tr[data-row='1']")
    expect(row.locator("td", has=page.get_by_label("Variable 1 default", exact=True)).get_by_role("alert")).to_have_text(
        "Must be an integer.")
    expect(page.get_by_label("Variable 1 default", exact=True)).to_have_value("many")  # what was typed stays
    page.get_by_label("Variable 1 default", exact=True).fill("3")
    page.get_by_label("Variable 1 min", exact=True).fill("1")
    page.evaluate("window.stillThisPage = true")
    page.get_by_role("button", name="Add a variable row").click()  # a second row in the page, nothing saved
    expect(page.get_by_label("Variable 2 name", exact=True)).to_be_focused()
    assert page.evaluate("window.stillThisPage") is True  # no reload
    expect(page.get_by_label("Variable 1 min", exact=True)).to_have_value("1")
    page.get_by_label("Variable 2 name", exact=True).fill("lr")
    page.get_by_label("Variable 2 type", exact=True).select_option("number")
    page.get_by_label("Variable 2 default", exact=True).fill("0.5")
    page.get_by_role("button", name="Add a variable row").click()
    page.get_by_label("Variable 3 name", exact=True).fill("junk")
    page.get_by_role("button", name="Remove variable 3").click()  # taken out in the page, nothing saved
    expect(page.get_by_label("Variable 3 name", exact=True)).to_have_count(0)
    page.get_by_label("Output 1 name").fill("run")
    page.get_by_label("Output 1 expression").fill("{{ workload.name }}")
    # storage as rows (a new PVC's claim size a column of its own), the readiness probe as inputs; a row removed
    # in the page, without a reload
    page.get_by_label("PVC 1 path").fill("/scratch")
    page.get_by_label("PVC 1 claim info size").fill("10Gi")
    page.get_by_label("Period seconds", exact=True).fill("10")
    page.get_by_label("HTTP GET path", exact=True).fill("/health")
    page.get_by_label("HTTP GET port", exact=True).fill("8888")
    page.get_by_label("HTTP GET host", exact=True).fill("localhost")
    page.get_by_label("HTTP GET scheme", exact=True).select_option("HTTP")
    page.get_by_role("button", name="Add a row to environment variables").click()
    page.get_by_label("Environment variable 3 name").fill("TMP")
    page.get_by_role("button", name="Remove environment variable 3").click()
    expect(page.get_by_label("Environment variable 3 name")).to_have_count(0)
    expect(page.get_by_label("Environment variable 2 name")).to_be_focused()
    assert page.evaluate("window.stillThisPage") is True  # no reload
    # The advanced view: the same values as the API's JSON
    page.get_by_role("button", name="JSON (advanced)").click()
    assert json.loads(page.get_by_label("Spec template (JSON)").input_value()) == {
        "image": "python:3.12", "args": "--epochs {{ epochs }}", "imagePullPolicy": "IfNotPresent",
        "compute": {"cpuCoreRequest": 2}, "environmentVariables": [{"name": "MODE"},
                                                                  {"name": "EPOCHS", "value": "run-{{ epochs }}"}],
        "storage": {"pvc": [{"path": "/scratch", "claimInfo": {"size": "10Gi"}}]},
        "probes": {"readiness": {"periodSeconds": 10, "handler": {"httpGet": {
            "path": "/health", "port": 8888, "host": "localhost", "scheme": "HTTP"}}}}}
    variables = json.loads(page.get_by_label("Variables (JSON list)").input_value())
    assert variables == [{"name": "epochs", "type": "integer", "required": False, "default": 3, "min": 1},
                         {"name": "lr", "type": "number", "required": False, "default": 0.5}]
    assert json.loads(page.get_by_label("Outputs (JSON list)").input_value()) == [
        {"name": "run", "expression": "{{ workload.name }}", "sensitive": False}]
    page.get_by_role("button", name="Form", exact=True).click()
    expect(page.get_by_label("Variable 1 min", exact=True)).to_have_value("1")
    expect(page.get_by_label("Output 1 expression")).to_have_value("{{ workload.name }}")
    expect(page.get_by_label("Image", exact=True)).to_have_value("python:3.12")  # back from JSON, typed
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []
    page.get_by_role("button", name="Add version").click()
    expect(page.get_by_text("Added version 1.0.0 (draft).")).to_be_visible()
    version = EnvironmentTemplate.objects.get(name="trainer").versions.get()
    assert version.variables[0]["name"] == "epochs" and version.variables[0]["default"] == 3
    assert version.outputs[0]["expression"] == "{{ workload.name }}"
    assert version.spec_template["compute"] == {"cpuCoreRequest": 2}
    page.get_by_role("button", name="Activate version 1.0.0").click()
    expect(page.get_by_text("Version 1.0.0 is active.")).to_be_visible()
    assert EnvironmentTemplate.objects.get(name="trainer").versions.get().state == "active"
    session.screenshot("environment-template")
    page.get_by_role("navigation", name="Breadcrumb").get_by_role("link", name="Environment templates").click()
    expect(page.get_by_role("link", name="trainer")).to_be_visible()
    session.screenshot("environment-templates")


def test_disabling_a_version_profiles_use_warns_and_it_can_be_enabled_again(open_session, org, make_profile):
    profile = make_profile("lab-notebook", display_name="Lab notebook")
    version = profile.template_version
    session = open_session("root")
    page = session.page
    page.goto(f"/studio/environment-templates/{version.template_id}")
    expect(page.get_by_text("Used by lab-notebook")).to_be_visible()
    page.get_by_role("button", name=f"Disable version {version.version}").click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_contain_text("1 profile uses it: lab-notebook. They can no longer be launched")
    dialog.get_by_role("button", name="Cancel").click()  # nothing changes
    expect(dialog).to_be_hidden()
    version.refresh_from_db()
    assert version.state == "active"
    page.get_by_role("button", name=f"Disable version {version.version}").click()
    session.confirm(f"Disable {version.version}")
    expect(page.get_by_text(f"Version {version.version} is disabled.")).to_be_visible()
    assert not catalog_for(org.a).filter(pk=profile.pk).exists()
    page.get_by_role("button", name=f"Enable version {version.version}").click()
    expect(page.get_by_text(f"Version {version.version} is active.")).to_be_visible()
    version.refresh_from_db()
    assert version.state == "active" and catalog_for(org.a).filter(pk=profile.pk).exists()


def test_a_viewer_reads_the_catalog_but_cannot_launch(open_session, org, make_profile):
    profile = make_profile(readme="Use it **well**.")
    session = open_session("carol")
    page = session.page
    page.goto("/catalog")
    card = page.locator("article", has=page.get_by_role("heading", name=profile.display_name))
    expect(card.get_by_text("Viewers cannot launch workloads.")).to_be_visible()
    expect(card.get_by_role("link", name="Launch")).to_have_count(0)
    page.goto(f"/catalog/{profile.pk}/launch")
    expect(page.get_by_role("button", name="Launch")).to_have_count(0)
    expect(page.get_by_text("Viewers cannot launch workloads.")).to_be_visible()
