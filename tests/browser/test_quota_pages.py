"""Quota and use: a project's per-pool bars of allocated vs deserved vs limit (GPU, CPU, memory), over quota
shown, and the department roll-up of the projects the user sees."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_layout import AXE, AXE_RUN
from tests.browser.test_workload_pages import make_workload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def quotas(org):
    org.a.node_pool_resources = [{"nodePool": {"id": "1", "name": "default"}, "gpu": {"deserved": 2, "limit": 4},
                                  "cpu": {"deserved": 4000, "limit": 8000},
                                  "memory": {"deserved": 16, "limit": 32, "units": "GB"}}]
    org.a.save(update_fields=["node_pool_resources"])
    org.b.gpu_deserved, org.b.gpu_limit = 1, None
    org.b.save(update_fields=["gpu_deserved", "gpu_limit"])
    make_workload(org, gpu_request=3, spec={"image": "python:3.11",
                                            "compute": {"cpuCoreRequest": "2", "cpuMemoryRequest": "8G"}})
    make_workload(org, name="done", gpu_request=8, actual_phase="Completed", running_pods=0)  # holds nothing
    make_workload(org, name="other", project=org.b, gpu_request=1)
    return org


def cell(row, resource):
    return {el.get_attribute("data-value"): el.inner_text()
            for el in row.locator(f"[data-resource='{resource}'] [data-value]").all()}


@pytest.mark.parametrize("width", [1440, 390])
def test_project_quota_page_and_department_rollup(open_session, quotas, width):
    session = open_session("root", width=width)
    page = session.page
    page.goto("/quota")
    department = page.locator("[data-department=research]")
    # beta has GPU totals only: they count in the cluster's default pool, beside alpha's quota there
    assert cell(department.locator("tr[data-pool=default]").first, "GPUs") == {
        "allocated": "4", "requested": "4", "deserved": "3", "limit": "none"}
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    session.screenshot(f"quota-overview-{width}")

    department.get_by_role("link", name="alpha").click()
    expect(page.locator("main h1.page-title")).to_contain_text("Quota of alpha")
    row = page.locator("tr[data-pool=default]")
    assert cell(row, "GPUs") == {"allocated": "3", "requested": "3", "deserved": "2", "limit": "4"}
    assert cell(row, "CPU") == {"allocated": "2", "deserved": "4", "limit": "8"}
    assert cell(row, "Memory") == {"allocated": "8", "deserved": "16", "limit": "32"}
    expect(row.get_by_test_id("over-quota")).to_have_text("over quota by 1")
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    session.screenshot(f"project-quota-{width}")


def test_a_member_sees_the_quota_of_their_projects_only(open_session, quotas):
    session = open_session("bob")
    page = session.page
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Quota").click()
    expect(page.locator("tr[data-project]")).to_have_count(1)
    expect(page.locator("tr[data-project=alpha]")).to_be_visible()
    session.goto_expecting(f"/quota/projects/{quotas.b.pk}", 404)
