"""Clusters, departments and projects in the one table component: natural sort, totals, column chooser, CSV
export and bulk delete (confirmed, refusals named), at 1440 and 390 px, light and dark, axe-clean."""

import pytest
from playwright.sync_api import expect

from studio.models import Department
from tests.browser.test_layout import AXE, AXE_RUN, UNNAMED
from tests.factories import DepartmentFactory, ProjectFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _clean(page, width):
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.evaluate(UNNAMED) == []
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []


@pytest.mark.parametrize("width", [1440, 390])
def test_org_lists_are_tables(open_session, org, width):
    for name in ("vision-10", "vision-2", "vision-1"):
        ProjectFactory(name=name, department=org.department, cluster=org.cluster, gpu_deserved=2, gpu_limit=None)
    DepartmentFactory(name="idle-a")
    DepartmentFactory(name="idle-b")
    session = open_session("root", width=width)
    page = session.page
    page.goto("/org/projects?sortBy=name")
    names = page.locator("table[data-table=projects] tbody td[data-col=name]").all_inner_texts()
    assert names == ["alpha", "beta", "vision-1", "vision-2", "vision-10"]
    expect(page.get_by_test_id("total-count")).to_have_text("5 projects")
    expect(page.locator("tfoot td[data-col=deserved]")).to_contain_text("14")  # 4 + 4 + 3 × 2
    _clean(page, width)
    session.screenshot(f"projects-table-{width}")

    page.goto("/org/departments")
    page.get_by_label("Select idle-a").check()
    page.get_by_label("Select idle-b").check()
    page.get_by_label("Select research").check()
    page.get_by_role("button", name="Delete").first.click()
    session.confirm("Delete 3 departments", says="idle-a, idle-b, research")
    expect(page.locator(".toast-success")).to_contain_text("Deleted 2 departments")
    expect(page.locator(".toast-error")).to_contain_text("research")  # it has projects
    assert list(Department.objects.values_list("name", flat=True)) == ["research"]
    page.goto("/org/departments")
    _clean(page, width)
    session.screenshot(f"departments-table-{width}")
    page.goto("/org/clusters")
    expect(page.locator("table[data-table=clusters] td[data-col=projects]").first).to_have_text("5")
    _clean(page, width)
    page.goto("/org/audit")  # the two deletes, newest first
    expect(page.locator("table[data-table=audit] tbody td[data-col=object]").first).to_have_text("idle-b")
    page.locator("table[data-table=audit] tbody summary").first.click()
    _clean(page, width)
    session.screenshot(f"audit-table-{width}")


def test_org_tables_are_axe_clean_in_dark_mode(open_session, org):
    session = open_session("root")
    page = session.page
    page.goto("/org/projects")
    page.get_by_role("button", name="Dark mode").click()
    expect(page.locator("html")).to_have_attribute("data-bs-theme", "dark")
    for width in (1440, 390):
        page.set_viewport_size({"width": width, "height": 900})
        for path in ("/org/projects", "/org/departments", "/org/clusters", "/org/audit"):
            page.goto(path)
            _clean(page, width)


@pytest.mark.parametrize("width", [1440, 390])
def test_a_project_admin_removes_members_from_the_table(open_session, org, width):
    from studio.models import AccessRule

    session = open_session("alice", width=width)
    page = session.page
    page.goto(f"/org/projects/{org.a.pk}/members?sortBy=username")
    assert page.locator("table[data-table=members] tbody td[data-col=user]").all_inner_texts() == [
        "alice", "bob", "carol"]
    _clean(page, width)
    page.get_by_label("Select carol").check()
    page.get_by_role("button", name="Remove").first.click()
    session.confirm("Remove 1 member", says="carol")
    expect(page.locator(".toast-success")).to_contain_text("Removed from alpha 1 member: carol.")
    assert not AccessRule.objects.filter(user=org.users.viewer, project=org.a).exists()
    page.get_by_role("button", name="Dark mode").click()
    page.reload()
    expect(page.locator("html")).to_have_attribute("data-bs-theme", "dark")
    _clean(page, width)
    session.screenshot(f"members-table-{width}-dark")
