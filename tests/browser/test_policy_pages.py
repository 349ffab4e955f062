"""The policy pages in a real browser: a platform admin opens Policies from the nav, writes a project policy
with a mistake (shown at its field), fixes it, and reads the project's effective policy; a member sees only
the effective policy of their project."""

import json

import pytest
from playwright.sync_api import expect

from policies.models import Policy

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_platform_admin_edits_a_project_policy_and_reads_the_effective_one(open_session, org):
    session = open_session("root")
    page = session.page
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Policies", exact=True).click()
    expect(page.get_by_role("heading", name="Workload policies")).to_be_visible()
    expect(page.locator("main")).to_contain_text("tenant default")
    session.screenshot("policies")
    page.get_by_role("link", name="project alpha").first.click()  # the trainings policy of alpha
    expect(page.get_by_role("heading", level=1)).to_have_text("Trainings policy of project alpha")
    edit_url = page.url
    page.get_by_role("link", name="JSON (advanced)").click()
    page.get_by_label("Rules (JSON)").fill(json.dumps({"security": {"runAsUid": {"min": "zero"}},
                                                      "compute": {"gpuDevicesRequest": {"max": 1}}}))
    page.get_by_role("button", name="Save policy").click()
    errors = page.locator("#f-rules-errors")
    expect(errors).to_contain_text("policy.rules.security.runAsUid.min")
    expect(page.get_by_label("Rules (JSON)")).to_have_attribute("aria-invalid", "true")
    session.screenshot("policy-edit-error")
    page.get_by_label("Rules (JSON)").fill(json.dumps({"compute": {"gpuDevicesRequest": {"max": 1}},
                                                      "storage": {"hostPath": {"instances": {"canAdd": True}}}}))
    page.get_by_role("button", name="Save policy").click()
    expect(page.locator("#toasts")).to_contain_text("Saved the training policy")
    assert Policy.objects.get(scope_key=f"project:{org.a.pk}").rules["compute"] == {"gpuDevicesRequest": {"max": 1}}
    page.goto(f"/projects/{org.a.pk}/policy")
    expect(page.locator("main")).to_contain_text("privileged")  # hostPath allowed: the namespace follows
    expect(page.locator("#h-trainings")).to_be_visible()
    expect(page.locator("main")).to_contain_text("compute.gpuDevicesRequest")
    session.screenshot("policy-effective")

    # deleting it asks first, naming what is lost; Cancel keeps it
    page.goto(edit_url)
    page.get_by_role("button", name="Delete this policy").click()
    session.confirm("Cancel", says="the wider policies apply again")
    assert Policy.objects.filter(scope_key=f"project:{org.a.pk}").exists()
    page.get_by_role("button", name="Delete this policy").click()
    session.confirm("Delete policy", says="Delete the trainings policy of project alpha?")
    expect(page.locator("#toasts")).to_be_visible()
    assert not Policy.objects.filter(scope_key=f"project:{org.a.pk}").exists()


def test_a_member_reads_only_their_projects_effective_policy(open_session, org):
    session = open_session("bob")
    page = session.page
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Policy", exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Effective policy of project alpha")
    expect(page.locator("main")).to_contain_text("baseline")
    expect(page.get_by_role("link", name="edit project policy")).to_have_count(0)
    session.goto_expecting("/policies", 403)
