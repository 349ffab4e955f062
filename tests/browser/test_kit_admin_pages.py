"""A platform admin manages Kit's catalog in the browser: applications, their versions and application profiles
(create, edit, delete), with the API's refusals shown next to the fields; a member sees no such controls and the
forms refuse them."""

import re

import pytest
from django.test import Client
from playwright.sync_api import expect

from kit.models import Application, ApplicationProfile, ApplicationVersion
from tests.browser.test_layout import AXE, AXE_RUN

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def error_of(page, label: str):
    """The error shown next to the control labelled `label`."""
    control = page.get_by_label(label, exact=True)
    return page.locator(f"#{control.get_attribute('id')}-error")


def test_admin_creates_edits_and_deletes_an_application_and_its_versions(open_session, org):
    session = open_session("root")
    page = session.page
    page.goto("/kit/apps")
    page.get_by_role("link", name="New application").click()
    # Bad input: an id that is not a name, no display name
    page.get_by_label("Id", exact=True).fill("USD Viewer")
    page.get_by_role("button", name="Create application").click()
    expect(error_of(page, "Id")).to_contain_text("lowercase")
    expect(error_of(page, "Name")).to_be_visible()
    expect(page.get_by_label("Id", exact=True)).to_have_attribute("aria-invalid", "true")
    assert not Application.objects.exists()
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []
    session.screenshot("kit-application-form-errors")

    page.get_by_label("Id", exact=True).fill("usd-viewer")
    page.get_by_label("Name", exact=True).fill("USD Viewer")
    page.get_by_label("Description").fill("View OpenUSD stages.")
    page.get_by_label("Tags").fill("viewer, omniverse")
    page.get_by_role("button", name="Create application").click()
    expect(page.get_by_role("status").filter(has_text="Created application usd-viewer")).to_be_visible()
    assert Application.objects.get(pk="usd-viewer").tags == ["viewer", "omniverse"]

    # The same id again is refused on its field
    page.goto("/kit/new/app")
    page.get_by_label("Id", exact=True).fill("usd-viewer")
    page.get_by_label("Name", exact=True).fill("Again")
    page.get_by_role("button", name="Create application").click()
    expect(error_of(page, "Id")).to_contain_text("already exists")

    # Versions: a bad one is refused next to its fields, a good one is listed newest first
    page.goto("/kit/apps/usd-viewer")
    form = page.locator("section", has=page.get_by_role("heading", name="Add a version"))
    form.get_by_label("Version", exact=True).fill("one")
    form.get_by_label("Container image").fill("nvcr.io/nvidia/usd viewer")
    form.get_by_role("button", name="Add version").click()
    expect(error_of(page, "Version")).to_contain_text("semantic version")
    expect(error_of(page, "Container image")).to_be_visible()
    expect(error_of(page, "Image tag")).to_be_visible()
    for version in ("1.0.0", "1.1.0"):
        form.get_by_label("Version", exact=True).fill(version)
        form.get_by_label("Container image").fill("nvcr.io/nvidia/omniverse/usd-viewer")
        form.get_by_label("Image tag").fill(version)
        form.get_by_role("button", name="Add version").click()
        expect(page.get_by_role("status").filter(has_text=f"Added version {version}")).to_be_visible()
    form.get_by_label("Version", exact=True).fill("1.1.0")
    form.get_by_label("Container image").fill("nvcr.io/nvidia/omniverse/usd-viewer")
    form.get_by_label("Image tag").fill("1.1.0")
    form.get_by_role("button", name="Add version").click()
    expect(page.get_by_role("alert").filter(has_text="already has version 1.1.0")).to_be_visible()
    rows = page.locator("table tbody tr")
    expect(rows.first).to_contain_text("1.1.0")
    expect(rows.first).to_contain_text("newest")
    session.screenshot("kit-application-admin")

    page.get_by_role("button", name="Delete version 1.0.0").click()
    session.confirm("Delete 1.0.0", says="Sessions running it keep running")
    expect(page.get_by_role("status").filter(has_text="Deleted version 1.0.0")).to_be_visible()
    assert list(ApplicationVersion.objects.values_list("version", flat=True)) == ["1.1.0"]

    page.get_by_role("link", name="Edit").click()
    expect(page.get_by_label("Id", exact=True)).to_be_disabled()
    page.get_by_label("Name", exact=True).fill("")
    page.get_by_role("button", name="Save").click()
    expect(error_of(page, "Name")).to_be_visible()
    page.get_by_label("Name", exact=True).fill("USD Viewer 2")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("main h1.page-title")).to_have_text("USD Viewer 2")

    page.get_by_role("button", name="Delete", exact=True).click()
    session.confirm("Delete usd-viewer", says="all its versions")
    expect(page.get_by_role("status").filter(has_text="Deleted application usd-viewer")).to_be_visible()
    assert not Application.objects.exists() and not ApplicationVersion.objects.exists()


def test_admin_builds_an_application_profile_with_wildcards_and_sees_errors_by_line(open_session, org):
    app = Application.objects.create(id="usd-viewer", name="USD Viewer")
    ApplicationVersion.objects.create(application=app, version="1.0.0", container="nvcr.io/x/usd-viewer",
                                      container_version="1.0.0")
    session = open_session("root")
    page = session.page
    page.goto("/kit/profiles")
    page.get_by_role("link", name="New application profile").click()
    expect(page.get_by_text("'*' as the id matches every application")).to_be_visible()
    page.get_by_label("Id", exact=True).fill("gpu-l40s")
    page.get_by_label("Name", exact=True).fill("L40S")
    page.get_by_label("Application 1 application").select_option("usd-viewer")  # a choice of the known ones
    page.get_by_label("Application 1 versions").fill("1.0.0")
    page.get_by_role("button", name="Add an application").click()
    page.get_by_label("Application 2 application").select_option("*")
    page.get_by_label("Application 2 versions").fill("2.x")
    page.get_by_label("Encryption").select_option("pod")  # without a TLS secret
    page.get_by_label("Share with").select_option("selected")  # and no project chosen
    expect(page.get_by_label("Compute (JSON)")).to_have_count(0)  # typed inputs, from the API's serializers
    page.get_by_label("GPU devices").fill("-1")
    # a toleration and a port, each row added in the page (no reload: what was typed stays)
    page.get_by_label("Toleration 1 key").fill("nvidia.com/gpu")
    page.get_by_role("button", name="Add a toleration").click()
    page.get_by_label("Toleration 2 operator").select_option("Exists")
    page.get_by_label("Toleration 2 value").fill("x")  # Exists with a value and no key: two problems
    expect(page.get_by_label("Toleration 1 key")).to_have_value("nvidia.com/gpu")
    page.get_by_label("Port 1 name").fill("signaling")
    page.get_by_label("Port 1 port").fill("49100")
    page.get_by_role("button", name="Add a port").click()
    page.get_by_label("Port 2 name").fill("media")
    page.get_by_label("Port 2 port").fill("47998")
    page.get_by_label("Port 2 protocol").select_option("UDP")
    page.get_by_label("Variable 1 name").fill("LOG_LEVEL")
    page.get_by_label("Variable 1 value").fill("debug")
    page.get_by_label("End a stream idle for (seconds)").fill("30")
    page.get_by_role("button", name="Create profile").click()
    expect(page.locator("#id_idleTimeoutSeconds-error")).to_contain_text("at least 60")
    expect(page.get_by_label("Application 2 versions")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("Application 1 application")).to_have_value("usd-viewer")
    expect(error_of(page, "TLS secret")).to_contain_text("Is required when mode is pod")
    expect(page.get_by_label("GPU devices")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#computegpudevicesrequest-err")).to_contain_text("0")
    expect(page.get_by_label("Toleration 2 key")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("Toleration 2 value")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("Port 2 protocol")).to_have_value("UDP")  # rows added in the page were posted
    expect(page.locator("#id_sharing_projectIds-error")).to_contain_text("at least one project")
    assert not ApplicationProfile.objects.exists()
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []
    session.screenshot("kit-profile-form-errors")

    page.get_by_label("Application 1 versions").fill("1.*")
    page.get_by_role("button", name="Remove application 2").click()
    page.get_by_label("Encryption").select_option("none")
    page.get_by_label("GPU devices").fill("1")
    page.get_by_label("Toleration 2 operator").select_option("")
    page.get_by_label("Toleration 2 value").fill("")
    page.get_by_label("Owner project").select_option(label="alpha")
    page.get_by_label("beta").check()
    page.get_by_role("button", name="Create profile").click()
    expect(page.locator("#supportedapplications-0-versions-err")).to_contain_text("semantic version or '*'")
    page.get_by_label("Application 1 versions").fill("*")
    page.get_by_label("End a stream idle for (seconds)").fill("900")
    page.get_by_label("Over the project's cap of streams").select_option("refuse")
    page.get_by_role("button", name="Create profile").click()
    expect(page.get_by_role("status").filter(has_text="Created application profile gpu-l40s")).to_be_visible()
    profile = ApplicationProfile.objects.get(slug="gpu-l40s")
    assert profile.supported_applications == [{"name": "usd-viewer", "versions": ["*"]}]
    assert profile.sharing() == {"mode": "selected", "projectIds": [org.b.pk]} and profile.owner_project == org.a
    assert profile.compute == {"gpuDevicesRequest": 1}
    assert profile.tolerations == [{"key": "nvidia.com/gpu"}]
    assert profile.ports == [{"name": "signaling", "port": 49100}, {"name": "media", "port": 47998, "protocol": "UDP"}]
    assert profile.environment == [{"name": "LOG_LEVEL", "value": "debug"}]
    assert (profile.idle_timeout_seconds, profile.over_capacity) == (900, "refuse")
    # the application's page lists it: its wildcard serves the app
    page.goto("/kit/apps/usd-viewer")
    expect(page.get_by_role("link", name="L40S")).to_be_visible()

    page.goto("/kit/profiles/gpu-l40s")
    page.get_by_role("link", name="Edit").click()
    expect(page.get_by_label("Application 1 application")).to_have_value("usd-viewer")
    expect(page.get_by_label("Application 1 versions")).to_have_value("*")
    expect(page.get_by_label("Port 2 port")).to_have_value("47998")  # the stored rows, typed
    expect(page.get_by_label("GPU devices")).to_have_value("1")
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []
    page.get_by_label("Application 1 application").select_option("*")
    page.get_by_label("Load balancing").select_option("NodePort")
    page.get_by_label("Require authorization").uncheck()
    page.get_by_label("Owner project").select_option(label="None")  # no owner any more
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_role("status").filter(has_text="later sessions use revision 2")).to_be_visible()
    profile.refresh_from_db()
    assert profile.supported_applications == [{"name": "*", "versions": ["*"]}]
    assert (profile.service_type, profile.authorization, profile.revision) == ("NodePort", False, 2)
    assert profile.compute == {"gpuDevicesRequest": 1} and profile.tolerations == [{"key": "nvidia.com/gpu"}]
    assert (profile.idle_timeout_seconds, profile.over_capacity) == (900, "refuse")  # kept
    assert profile.owner_project is None and profile.sharing() == {"mode": "selected", "projectIds": [org.b.pk]}
    session.screenshot("kit-profile-admin")

    page.get_by_role("button", name="Delete", exact=True).click()
    session.confirm("Delete gpu-l40s", says="Sessions running from it keep running")
    expect(page.get_by_role("status").filter(has_text="Deleted application profile gpu-l40s")).to_be_visible()
    assert not ApplicationProfile.objects.exists()


def test_a_member_sees_no_kit_admin_controls_and_cannot_post(open_session, org):
    Application.objects.create(id="usd-viewer", name="USD Viewer")
    session = open_session("bob")
    page = session.page
    page.goto("/kit/apps")
    expect(page.get_by_role("link", name="New application")).to_have_count(0)
    page.goto("/kit/apps/usd-viewer")
    expect(page.get_by_role("button", name=re.compile("Delete"))).to_have_count(0)
    expect(page.get_by_role("heading", name="Add a version")).to_have_count(0)
    session.goto_expecting("/kit/new/app", 403)
    session.goto_expecting("/kit/new/profile", 403)
    session.goto_expecting("/kit/apps/usd-viewer/edit", 403)
    client = Client()
    client.force_login(org.users.member)
    assert client.post("/kit/apps/usd-viewer/delete").status_code == 403
    assert client.post("/kit/new/app", {"id": "x", "name": "X"}).status_code == 403
    assert Application.objects.filter(pk="usd-viewer").exists()
