"""Dense lists: at 1440x900 the workload list shows at least 15 rows without scrolling (waiting rows with their
plain-words reason and queue place included, on one line), the table not wider than its card; the other lists of
the table component have the same compact rows."""

import pytest
from playwright.sync_api import expect

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
