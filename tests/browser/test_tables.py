"""The table component (studio.tables) on the workloads list: natural sort of names, the column chooser kept in
the browser, totals over the filtered list, bulk suspend / resume / delete through the single actions' services
(refusals reported row by row), and the CSV export of the filtered list with the same authorization."""

import csv
import io
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from tests.browser.test_layout import AXE, AXE_RUN
from tests.browser.test_workload_pages import make_workload
from workloads.models import Workload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def names_in_order(page) -> list[str]:
    return page.locator("table[data-table=workloads] tbody td[data-col=name]").all_inner_texts()


def test_names_sort_naturally_and_the_chosen_columns_are_remembered(open_session, org):
    for name in ("train-10", "train-2", "Train-1", "train-1b"):
        make_workload(org, name=name, requested_name=name, gpu_request=Decimal("1.5"))
    make_workload(org, name="elsewhere", project=org.b, gpu_request=Decimal("4"))
    session = open_session("bob")
    page = session.page
    page.goto("/workloads")
    page.get_by_role("link", name="Name").click()
    page.wait_for_url("**sortBy=name**")
    assert names_in_order(page) == ["Train-1", "train-1b", "train-2", "train-10"]  # lexical: train-10 before train-2
    page.get_by_role("link", name="Name").click()  # again: descending
    page.wait_for_url("**sortOrder=desc**")
    assert names_in_order(page) == ["train-10", "train-2", "train-1b", "Train-1"]
    # totals cover the listed project's workloads only (bob does not see beta's)
    expect(page.get_by_test_id("total-count")).to_have_text("4 workloads")
    expect(page.locator("tfoot td[data-col=gpus]")).to_have_text("6")

    owner = page.locator("thead th[data-col=owner]")
    expect(owner).to_be_visible()
    expect(page.locator("thead th[data-col=cluster]")).to_be_hidden()  # not a default column
    page.get_by_text("Columns", exact=True).click()
    page.get_by_label("Owner column").uncheck()
    page.get_by_label("Cluster column").check()
    expect(owner).to_be_hidden()
    expect(page.locator("tbody td[data-col=cluster]").first).to_be_visible()
    page.wait_for_timeout(2500)  # a live refresh of the rows keeps the choice
    expect(page.locator("tbody td[data-col=owner]").first).to_be_hidden()
    page.goto("/workloads")  # kept for the next visit
    expect(page.locator("thead th[data-col=owner]")).to_be_hidden()
    expect(page.locator("thead th[data-col=cluster]")).to_be_visible()
    export = page.get_by_role("link", name="Export CSV")
    with page.expect_download() as download:
        export.click()
    rows = list(csv.reader(io.StringIO(open(download.value.path(), encoding="utf-8").read())))
    assert "Owner" not in rows[0] and "Cluster" in rows[0]
    assert len(rows) == 5
    page.get_by_text("Columns", exact=True).click()
    page.get_by_role("button", name="Default columns").click()
    expect(page.locator("thead th[data-col=owner]")).to_be_visible()


def test_bulk_actions_go_through_the_single_actions_and_report_refusals_per_row(open_session, org):
    training = make_workload(org, name="train-a")
    inference = make_workload(org, name="serve-b", requested_name="serve-b", kind="inference")
    done = make_workload(org, name="done-c", requested_name="done-c", actual_phase="Completed")
    session = open_session("bob")
    page = session.page
    page.goto("/workloads")
    suspend = page.get_by_role("button", name="Suspend")
    expect(suspend).to_be_disabled()
    for name in ("train-a", "serve-b", "done-c"):
        page.get_by_label(f"Select {name}").check()
    expect(page.get_by_text("3 selected")).to_be_visible()
    page.wait_for_timeout(2500)  # the rows' live refresh keeps the selection
    expect(page.get_by_label("Select serve-b")).to_be_checked()
    suspend.click()
    session.confirm("Suspend 3 workloads", says="train-a")
    expect(page.locator(".toast-success")).to_contain_text("Suspending 1 workload: train-a.")
    expect(page.locator(".toast-error")).to_have_count(2)
    expect(page.locator(".toast-error").filter(has_text="serve-b")).to_contain_text("Only trainings")
    expect(page.locator(".toast-error").filter(has_text="done-c")).to_contain_text("has finished")
    assert Workload.objects.get(pk=training.pk).desired_phase == "Stopped"
    assert Workload.objects.get(pk=inference.pk).desired_phase == "Running"
    assert Workload.objects.get(pk=done.pk).desired_phase == "Running"

    page.get_by_label("Select every workload on this page").check()
    page.get_by_role("button", name="Delete").click()
    session.confirm("Delete 3 workloads")
    expect(page.locator(".toast-success")).to_contain_text("Deleting 3 workloads")
    assert set(Workload.objects.values_list("desired_phase", flat=True)) == {"Deleted"}

    # a viewer is offered neither a row's checkbox nor the bulk actions her role may not use
    make_workload(org, name="train-v", requested_name="train-v")
    viewer = open_session("carol")
    viewer.page.goto("/workloads")
    expect(viewer.page.get_by_role("link", name="train-v")).to_be_visible()
    expect(viewer.page.get_by_label("Select train-v")).to_have_count(0)
    expect(viewer.page.get_by_role("button", name="Suspend")).to_have_count(0)


def test_the_export_is_the_filtered_list_the_user_may_see(client, org):
    make_workload(org, name="=HYPERLINK(1)", requested_name="x", gpu_request=Decimal("2"))
    make_workload(org, name="serve-b", requested_name="serve-b", kind="inference")
    make_workload(org, name="theirs", project=org.b)
    client.force_login(org.users.member)
    response = client.get("/workloads/export.csv?scope=all&filterBy=type==training&columns=name,gpus,owner")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows == [["Name", "GPUs", "Owner"], ["'=HYPERLINK(1)", "2", "bob@example.com"]]  # a formula stays text
    everything = client.get("/workloads/export.csv?scope=all")
    names = {row[0] for row in csv.reader(io.StringIO(b"".join(everything.streaming_content).decode()))}
    assert names == {"Name", "'=HYPERLINK(1)", "serve-b"}  # not beta's workload
    bad = client.get("/workloads/export.csv?sortBy=secret")
    assert bad.status_code == 400 and "sortBy" in bad.content.decode()
    client.force_login(org.users.other)
    theirs = client.get("/workloads/export.csv?scope=all")
    assert [row[0] for row in csv.reader(io.StringIO(b"".join(theirs.streaming_content).decode()))] == ["Name", "theirs"]


@pytest.mark.parametrize("width", [1440, 390])
def test_a_hundred_workloads_pass_axe_in_both_modes(open_session, org, width):
    now = timezone.now()
    for index in range(100):
        phase = ("Running", "Pending", "Completed", "Failed")[index % 4]
        workload = make_workload(org, name=f"job-{index}", requested_name=f"job-{index}", actual_phase=phase,
                                 gpu_request=Decimal(index % 3), spec={"image": "x", "nodePools": ["a100"]}
                                 if index % 2 else {"image": "x"}, started_at=now - timedelta(minutes=index * 7))
        Workload.objects.filter(pk=workload.pk).update(created_at=now - timedelta(minutes=index))
    session = open_session("root", width=width)
    page = session.page
    page.goto("/workloads?scope=all")
    expect(page.get_by_test_id("total-count")).to_have_text("100 workloads")
    expect(page.locator("tfoot td[data-col=gpus]")).to_have_text("99")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []
    height = page.evaluate("document.documentElement.scrollHeight")
    if width == 390:
        assert height < 3600, f"25 rows on a phone take {height}px"  # 4,800 px and more before
    session.screenshot(f"workloads-100-{width}")
    page.get_by_role("button", name="Dark mode").click()
    page.reload()  # kept by the toggle, applied before paint (no colour transition under axe)
    expect(page.locator("html")).to_have_attribute("data-bs-theme", "dark")
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []
    session.screenshot(f"workloads-100-{width}-dark")


def test_the_users_list_is_the_same_table(open_session, org, client):
    from tests.factories import UserFactory

    for name in ("user10", "user9", "user1"):
        UserFactory(username=name, email=f"{name}@example.com")
    session = open_session("root")
    page = session.page
    page.goto("/org/users?sortBy=username&sortOrder=asc&search=user")
    assert page.locator("table[data-table=users] tbody td[data-col=username]").all_inner_texts() == [
        "user1", "user9", "user10"]
    expect(page.get_by_test_id("total-count")).to_have_text("3 users")
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []
    client.force_login(org.users.platform_admin)
    response = client.get("/org/users/export.csv?search=user&sortBy=username&columns=username,status")
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows == [["Username", "Status"], ["user1", "Active"], ["user9", "Active"], ["user10", "Active"]]
    client.force_login(org.users.member)
    assert client.get("/org/users/export.csv").status_code in (403, 404)
