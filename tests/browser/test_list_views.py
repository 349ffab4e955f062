"""Lists of the table component in Chromium. Dense: at 1440x900 the workload list shows at least 15 rows without
scrolling (waiting rows with their plain-words reason on one line), the table not wider than its card; the other
lists have the same compact rows. Filters as removable chips and saved views: saved from the Views menu, opened
from it, the URL alone reproducing the list; axe-clean at 1440 and 390 px, light and dark."""

import pytest
from playwright.sync_api import expect

from studio.models import SavedView
from tests.browser.test_layout import AXE, AXE_RUN, UNNAMED
from tests.browser.test_workload_pages import make_workload
from tests.factories import DepartmentFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NO_ROOM = {"type": "NoNodeRoom", "resource": "nvidia.com/gpu", "resources": ["nvidia.com/gpu"],
           "nodePool": "my-node-pool-a", "queueLength": 3,
           "message": "No node in node pool my-node-pool-a has room for it: not enough nvidia.com/gpu free.",
           "schedulerMessage": "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."}
IN_VIEW = """(selector) => [...document.querySelectorAll(selector)]
  .filter((row) => { const box = row.getBoundingClientRect(); return box.height > 0 && box.bottom <= innerHeight; }).length"""
SIDEWAYS = "(t) => t.closest('.table-responsive').scrollWidth - t.closest('.table-responsive').clientWidth"


@pytest.mark.parametrize(("user", "path"), [("bob", "/workloads"), ("root", "/workloads?scope=all")])
def test_fifteen_workload_rows_fit_a_1440_by_900_screen(open_session, org, user, path):
    for index in range(20):
        waiting = index % 3 == 0
        make_workload(org, name=f"train-{index:02d}", requested_name=f"train-{index:02d}",
                      actual_phase="Pending" if waiting else "Running", gpu_request=1,
                      pending_reason=NO_ROOM if waiting else {}, queue_position=2 if waiting else None,
                      created_by_name="bob.the.researcher@example.com")
    page = open_session(user, width=1440).page
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(path)
    table = page.locator("table[data-table=workloads]")
    expect(table.locator("tbody tr")).to_have_count(20)
    expect(table.get_by_test_id("pending-reason").first).to_be_visible()
    assert page.evaluate(IN_VIEW, "table[data-table=workloads] tbody tr") >= 15
    assert table.evaluate(SIDEWAYS) <= 1  # every column in view, none behind a sideways scroll


def test_other_lists_have_the_same_compact_rows(open_session, org):
    for index in range(20):
        DepartmentFactory(name=f"dept-{index:02d}")
    page = open_session("root", width=1440).page
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto("/org/departments")
    expect(page.locator("table[data-table] tbody tr")).to_have_count(21)
    assert page.evaluate(IN_VIEW, "table[data-table] tbody tr") >= 15


def _clean(page, width):
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.evaluate(UNNAMED) == []
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []


def test_filters_are_chips_and_a_view_is_saved_and_opened(open_session, org):
    make_workload(org, name="train-a")
    make_workload(org, name="train-b", actual_phase="Pending", pending_reason=NO_ROOM, queue_position=1)
    make_workload(org, name="serve-c", kind="inference", actual_phase="Pending")
    session = open_session("bob", width=1440)
    page = session.page
    page.goto("/workloads")
    expect(page.get_by_test_id("filter-chips")).to_have_count(0)
    page.get_by_label("Phase", exact=True).select_option("phase==Pending")
    page.get_by_label("Type", exact=True).select_option("type==training")
    page.get_by_role("button", name="Filter").click()
    chips = page.get_by_test_id("filter-chips")
    expect(chips.locator("[data-chip]")).to_have_text(["Type is training", "Phase is Pending"])
    expect(page.locator("table[data-table=workloads] tbody tr")).to_have_count(1)
    _clean(page, 1440)

    page.get_by_text("Views", exact=True).click()
    page.get_by_label("Save the filters and order as").fill("My waiting trainings")
    page.get_by_role("button", name="Save view").click()
    expect(page.locator(".toast-success")).to_contain_text("Saved the view “My waiting trainings”.")
    assert SavedView.objects.get().name == "My waiting trainings"
    shared = page.url

    page.get_by_role("link", name="Remove the filter Type is training").click()
    expect(chips.locator("[data-chip]")).to_have_text(["Phase is Pending"])
    expect(page.locator("table[data-table=workloads] tbody tr")).to_have_count(2)
    page.get_by_role("link", name="Remove the filter Phase is Pending").click()
    expect(page.get_by_test_id("filter-chips")).to_have_count(0)
    expect(page.locator("table[data-table=workloads] tbody tr")).to_have_count(3)

    page.get_by_text("Views (1)").click()
    page.get_by_role("link", name="My waiting trainings").click()
    expect(page.locator("table[data-table=workloads] tbody tr")).to_have_count(1)
    expect(page.get_by_role("link", name="train-b")).to_be_visible()

    # the link alone, opened by a teammate: the same list
    other = open_session("alice", width=390).page
    other.goto(shared)
    expect(other.get_by_test_id("filter-chips").locator("[data-chip]")).to_have_count(2)
    expect(other.locator("table[data-table=workloads] tbody tr")).to_have_count(1)
    other.get_by_text("Views", exact=True).click()
    expect(other.get_by_text("No saved views of this list yet.")).to_be_visible()
    _clean(other, 390)
    other.get_by_role("button", name="Dark mode").click()
    expect(other.locator("html")).to_have_attribute("data-bs-theme", "dark")
    for width in (390, 1440):
        other.set_viewport_size({"width": width, "height": 900})
        other.goto(shared)
        other.get_by_text("Views", exact=True).click()
        _clean(other, width)
