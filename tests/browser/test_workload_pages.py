import pytest
from playwright.sync_api import expect

from workloads import services
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
    """The page's reads still in flight when Delete submits are cancelled: answered after the workload is gone,
    each would be a 404 (a console error). Every read of the workload's API is held until the delete is through,
    then answered by the server, before the delete's answer lets the page go."""
    workload = make_workload(org)
    session = open_session("bob", width=390)
    page = session.page
    held, cancelled, answered = [], set(), []
    page.on("requestfailed", lambda request: cancelled.add(request.url))
    page.route(f"**/api/v1/workloads/{workload.pk}/**", lambda route: held.append(route))

    def delete_then_answer_the_reads(route):
        deleted = route.fetch(max_redirects=0)
        for read in held:
            if read.request.url not in cancelled:
                read.fulfill(response=read.fetch())  # the server's answer now: 404
                answered.append(read.request.url)
        route.fulfill(response=deleted)

    page.route(f"**/workloads/{workload.pk}/delete", delete_then_answer_the_reads)
    with page.expect_request(f"**/api/v1/workloads/{workload.pk}/metrics?**"):
        page.goto(f"/workloads/{workload.pk}")
    page.get_by_role("button", name="Delete").click()
    session.confirm("Delete train-a", says="Delete train-a?")
    page.wait_for_url("**/workloads")
    assert held and answered == []
    expect(page.get_by_role("status").filter(has_text="Deleting train-a.")).to_be_visible()
    assert Workload.objects.get(pk=workload.pk).deleted_at is not None
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_a_page_left_open_stops_reading_a_workload_deleted_elsewhere(open_session, org):
    """Its charts ask every 5 s: once the workload's API answers 404 (deleted in another tab, by its admin),
    the page asks no more, rather than one 404 every 5 s for as long as it stays open."""
    workload = make_workload(org)
    session = open_session("bob")
    page = session.page
    api = f"/api/v1/workloads/{workload.pk}/"
    reads = []
    page.on("request", lambda request: api in request.url and reads.append(request.url))
    with page.expect_response(lambda r: api + "metrics?" in r.url and r.status == 200):
        page.goto(f"/workloads/{workload.pk}")
    services.workload_delete(workload=workload, user=org.users.member)
    with page.expect_response(lambda r: api + "metrics?" in r.url and r.status == 404, timeout=15_000):
        pass
    asked = len(reads)
    page.wait_for_timeout(11_000)  # two more rounds of the charts' poll
    assert len(reads) == asked
    session.console_errors = [(m, url) for m, url in session.console_errors if api not in url]  # the 404 awaited
