import pytest
from playwright.sync_api import expect

from workloads.models import Workload

pytestmark = pytest.mark.django_db(transaction=True)


def make_workload(org, **fields):
    values = dict(kind="training", name="train-a", requested_name="train-a", project=org.a,
                  department=org.department, cluster=org.cluster, created_by_name="bob@example.com",
                  spec={"image": "python:3.11"}, actual_phase="Running", running_pods=1)
    values.update(fields)
    return Workload.objects.create(**values)


def test_workloads_list_and_detail_with_suspend_and_resume(open_session, org):
    workload = make_workload(org)
    make_workload(org, name="serve-b", kind="inference", actual_phase="Pending")
    session = open_session("bob")
    page = session.page
    page.goto("/workloads")
    expect(page.get_by_role("link", name="train-a")).to_be_visible()
    expect(page.locator("[data-phase=Pending]")).to_have_text("Pending")
    session.screenshot("workloads")

    page.get_by_label("Type", exact=True).select_option("type==inference")
    page.get_by_role("button", name="Filter").click()
    expect(page.get_by_role("link", name="serve-b")).to_be_visible()
    expect(page.get_by_role("link", name="train-a")).to_have_count(0)

    page.goto(f"/workloads/{workload.pk}")
    expect(page.get_by_test_id("phase")).to_have_text("Running")
    session.screenshot("workload-detail")
    page.get_by_role("button", name="Suspend").click()
    session.confirm("Suspend train-a", says="Its pods are stopped")
    expect(page.get_by_test_id("phase")).to_have_text("Stopping")
    workload.refresh_from_db()
    assert workload.desired_phase == "Stopped"
    page.get_by_role("button", name="Resume").click()
    expect(page.get_by_test_id("phase")).to_have_text("Resuming")
    assert Workload.objects.get(pk=workload.pk).desired_phase == "Running"


def test_viewer_sees_no_actions_and_outsider_gets_404(open_session, org):
    workload = make_workload(org)
    viewer = open_session("carol").page
    viewer.goto(f"/workloads/{workload.pk}")
    expect(viewer.get_by_test_id("phase")).to_have_text("Running")
    expect(viewer.get_by_role("button", name="Suspend")).to_have_count(0)
    open_session("dave").goto_expecting(f"/workloads/{workload.pk}", 404)


def test_delete_from_the_page_at_phone_width(open_session, org):
    workload = make_workload(org)
    session = open_session("bob", width=390)
    page = session.page
    page.goto(f"/workloads/{workload.pk}")
    page.wait_for_load_state("networkidle")  # the charts' requests, before their workload is gone
    page.get_by_role("button", name="Delete").click()
    session.confirm("Delete train-a", says="Delete train-a?")
    page.wait_for_url("**/workloads")
    expect(page.get_by_role("status").filter(has_text="Deleting train-a.")).to_be_visible()
    assert Workload.objects.get(pk=workload.pk).deleted_at is not None
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
