"""The typed policy form (generated from Run:ai's policy schema): a platform admin sets a default and rules in
it, sees every mistake at once, each at its field, fixes them and saves; at 1440 and 390 px, light and dark,
axe-clean, no sideways scroll."""

import pytest
from playwright.sync_api import expect

from policies.models import Policy
from tests.browser.test_layout import AXE, AXE_RUN, UNNAMED

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _axe_and_width(page, width):
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.evaluate(UNNAMED) == []
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []


@pytest.mark.parametrize("width", [1440, 390])
def test_an_admin_writes_a_policy_in_the_typed_form(open_session, org, width):
    session = open_session("root", width=width)
    page = session.page
    page.goto(f"/policies/trainings/edit?scope=project&projectId={org.a.pk}")
    expect(page.get_by_role("heading", level=1)).to_have_text("Trainings policy of project alpha")
    expect(page.get_by_label("Rules (JSON)")).to_have_count(0)  # no JSON box: the form
    compute = page.locator("details[data-section=compute]")
    compute.locator("summary").click()
    compute.get_by_label("compute.gpuDevicesRequest max").fill("many")
    compute.get_by_label("compute.gpuDevicesRequest default").fill("1")
    security = page.locator("details[data-section=security]")
    security.locator("summary").click()
    security.get_by_label("security.runAsUid min").fill("zero")
    security.get_by_label("security.hostNetwork can edit").select_option("No")
    page.get_by_role("button", name="Save policy").click()
    # both mistakes at once, each at its field; the sections holding them open
    expect(page.locator("#policy-errors")).to_contain_text("2 fields to fix")
    expect(page.get_by_label("compute.gpuDevicesRequest max")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("security.runAsUid min")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("details[data-section=security] tr[data-field='security.runAsUid']")).to_contain_text(
        "policy.rules.security.runAsUid.min")
    expect(page.get_by_label("compute.gpuDevicesRequest default")).to_have_value("1")  # what was typed stays
    _axe_and_width(page, width)
    session.screenshot(f"policy-form-errors-{width}")
    page.get_by_label("compute.gpuDevicesRequest max").fill("4")
    page.get_by_label("security.runAsUid min").fill("1000")
    page.get_by_role("button", name="Save policy").click()
    expect(page.locator("#toasts")).to_contain_text("Saved the training policy")
    policy = Policy.objects.get(scope_key=f"project:{org.a.pk}")
    assert policy.rules == {"compute": {"gpuDevicesRequest": {"max": 4}},
                            "security": {"runAsUid": {"min": 1000}, "hostNetwork": {"canEdit": False}}}
    assert policy.defaults == {"compute": {"gpuDevicesRequest": 1}}
    expect(page.locator("details[data-section=compute]")).to_have_attribute("open", "")  # set: shown open
    _axe_and_width(page, width)
    session.screenshot(f"policy-form-{width}")

    # the list: the stored policy as a table row
    page.goto("/policies")
    expect(page.locator("table[data-table=policies] tbody td[data-col=rules]")).to_have_text("3")
    _axe_and_width(page, width)
    session.screenshot(f"policies-table-{width}")
    page.go_back()
    # the advanced view edits the same policy as JSON
    page.get_by_role("link", name="JSON (advanced)").click()
    expect(page.get_by_label("Rules (JSON)")).to_contain_text('"max": 4')
    _axe_and_width(page, width)


@pytest.mark.parametrize("width", [1440, 390])
def test_an_admin_sets_a_list_fields_default_instances_as_rows(open_session, org, width):
    """Default environment variables, PVCs and ports as typed rows generated from the schema: a row added and
    one removed in the page (no reload), a wrong type shown on its cell, then saved."""
    session = open_session("root", width=width)
    page = session.page
    page.goto(f"/policies/trainings/edit?scope=project&projectId={org.a.pk}")
    page.evaluate("window.stillThisPage = true")
    env = page.locator("details[data-section=environmentVariables]")
    env.locator("summary").click()
    env.get_by_label("Environment variable 1 name").fill("MODE")
    env.get_by_label("Environment variable 1 value").fill("fast")
    env.get_by_role("button", name="Add a default environment variable").click()
    expect(env.get_by_label("Environment variable 2 name")).to_be_focused()
    env.get_by_label("Environment variable 2 name").fill("TMP")
    env.get_by_role("button", name="Remove environment variable 2").click()
    expect(env.get_by_label("Environment variable 2 name")).to_have_count(0)
    assert page.evaluate("window.stillThisPage") is True  # no reload
    pvc = page.locator("details[data-section=storage-pvc]")
    pvc.locator("summary").click()
    pvc.get_by_label("PVC 1 path").fill("/scratch")
    pvc.get_by_label("PVC 1 claim info size").fill("10Gi")
    pvc.get_by_label("PVC 1 claim info volume mode").select_option("Filesystem")
    ports = page.locator("details[data-section=ports]")
    ports.locator("summary").click()
    ports.get_by_label("Port 1 container").fill("http")
    page.get_by_role("button", name="Save policy").click()
    expect(page.locator("#policy-errors")).to_contain_text("1 field to fix")
    expect(page.get_by_label("Port 1 container")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("PVC 1 claim info size")).to_have_value("10Gi")  # what was typed stays, shown open
    expect(page.get_by_label("Environment variable 2 name")).to_have_count(0)  # the removed row stays removed
    _axe_and_width(page, width)
    session.screenshot(f"policy-form-instances-errors-{width}")
    page.get_by_label("Port 1 container").fill("8888")
    page.get_by_role("button", name="Save policy").click()
    expect(page.locator("#toasts")).to_contain_text("Saved the training policy")
    assert Policy.objects.get(scope_key=f"project:{org.a.pk}").defaults == {
        "environmentVariables": {"instances": [{"name": "MODE", "value": "fast"}]},
        "storage": {"pvc": {"instances": [{"path": "/scratch",
                                           "claimInfo": {"size": "10Gi", "volumeMode": "Filesystem"}}]}},
        "ports": {"instances": [{"container": 8888}]}}
    expect(page.get_by_label("Environment variable 1 name")).to_have_value("MODE")  # saved rows, shown open
    _axe_and_width(page, width)
    session.screenshot(f"policy-form-instances-{width}")


def test_the_policy_form_is_axe_clean_in_dark_mode(open_session, org):
    session = open_session("root")
    page = session.page
    page.goto("/policies")
    page.get_by_role("button", name="Dark mode").click()
    expect(page.locator("html")).to_have_attribute("data-bs-theme", "dark")
    for width in (1440, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"/policies/workspaces/edit?scope=project&projectId={org.a.pk}")
        page.locator("details[data-section=compute] summary").click()
        page.get_by_label("compute.gpuDevicesRequest max").fill("x")
        page.locator("details[data-section=ports] summary").click()
        page.get_by_label("Port 1 container").fill("x")  # a default instance's row, in error
        page.get_by_role("button", name="Save policy").click()
        expect(page.locator("#policy-errors")).to_be_visible()
        expect(page.get_by_label("Port 1 container")).to_have_attribute("aria-invalid", "true")
        _axe_and_width(page, width)
        session.screenshot(f"policy-form-dark-{width}")
        page.goto("/policies")
        _axe_and_width(page, width)


@pytest.mark.parametrize("width,dark", [(1440, False), (390, False), (1440, True), (390, True)])
def test_an_admin_edits_lists_inside_a_default_instance_and_objects_two_deep(open_session, org, width, dark):
    """An exposed URL's authorized users and groups (lists inside an item) and a PVC's access modes (an object
    two deep) as cells of their rows: filled, a row added in the page, a bad value on its cell, saved, and the
    API answers what was typed."""
    session = open_session("root", width=width)
    page = session.page
    page.goto(f"/policies/workspaces/edit?scope=project&projectId={org.a.pk}")
    if dark:
        page.get_by_role("button", name="Dark mode").click()
        expect(page.locator("html")).to_have_attribute("data-bs-theme", "dark")
    page.evaluate("window.stillThisPage = true")
    urls = page.locator("details[data-section=exposedUrls]")
    urls.locator("summary").click()
    urls.get_by_label("Exposed URL 1 container").fill("8888")
    urls.get_by_label("Exposed URL 1 authorized users").fill("ann, bob")
    urls.get_by_role("button", name="Add a default exposed URL").click()
    urls.get_by_label("Exposed URL 2 container").fill("8080")
    urls.get_by_label("Exposed URL 2 authorized groups").fill("ml, ops")
    assert page.evaluate("window.stillThisPage") is True  # no reload
    pvc = page.locator("details[data-section=storage-pvc]")
    pvc.locator("summary").click()
    pvc.get_by_label("PVC 1 path").fill("/scratch")
    pvc.get_by_label("PVC 1 claim info access modes read write many").select_option("Yes")
    pvc.get_by_label("PVC 1 claim info size").fill("lots")  # not a quantity: named on its cell
    page.get_by_role("button", name="Save policy").click()
    expect(page.locator("#policy-errors")).to_contain_text("1 field to fix")
    expect(page.get_by_label("PVC 1 claim info size")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("Exposed URL 2 authorized groups")).to_have_value("ml, ops")  # what was typed stays
    expect(page.get_by_label("PVC 1 claim info access modes read write many")).to_have_value("true")
    _axe_and_width(page, width)
    if not dark:
        session.screenshot(f"policy-form-nested-errors-{width}")
    page.get_by_label("PVC 1 claim info size").fill("10Gi")
    page.get_by_role("button", name="Save policy").click()
    expect(page.locator("#toasts")).to_contain_text("Saved the workspace policy")
    answer = page.request.get(f"{session.base_url}/api/v2/policy/workspaces?scope=project&projectId={org.a.pk}")
    defaults = answer.json()["policy"]["defaults"]
    assert defaults["exposedUrls"] == {"instances": [{"container": 8888, "authorizedUsers": ["ann", "bob"]},
                                                     {"container": 8080, "authorizedGroups": ["ml", "ops"]}]}
    assert defaults["storage"] == {"pvc": {"instances": [
        {"path": "/scratch", "claimInfo": {"size": "10Gi", "accessModes": {"readWriteMany": True}}}]}}
    expect(page.get_by_label("Exposed URL 1 authorized users")).to_have_value("ann, bob")  # saved, shown open
    _axe_and_width(page, width)
