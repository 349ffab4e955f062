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
        page.get_by_role("button", name="Save policy").click()
        expect(page.locator("#policy-errors")).to_be_visible()
        _axe_and_width(page, width)
        session.screenshot(f"policy-form-dark-{width}")
        page.goto("/policies")
        _axe_and_width(page, width)
