"""The usage pages in a browser: a project's GPU trend drawn from a week of history (switching 1 h / 24 h / 7 d /
30 d, values on hover), the Reports page (request a report, the worker makes it, download its CSV) and the bell
(unread count, the menu, mark read), at 1440 and 390 px wide without horizontal overflow; screenshots for docs/."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from studio.models import NodePool
from tests.browser.test_layout import AXE, AXE_RUN, UNNAMED
from tests.factories import NotificationFactory, usage_history
from tests.workloads.cluster_support import make_workload
from usage import tasks
from usage.models import NodePoolPrice, Report
from workloads.models import MetricSample, Workload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHART = """(canvas) => { const c = Chart.getChart(canvas);
  return c ? c.data.datasets.map((d) => [d.label, d.data.length, Math.max(...d.data)]) : null; }"""


@pytest.fixture
def used(org):
    """Eight days of alpha's history (2 GPUs, 30 % busy), a day of beta's, and a training of alpha running now
    with its GPUs sampled at 25 % over the last hour."""
    default, _ = NodePool.objects.get_or_create(cluster=org.cluster, name="default", defaults={"is_default": True})
    NodePoolPrice.objects.create(node_pool=default, gpu_hour=2)
    usage_history(org.a, hours=24 * 8, busy=0.3)
    usage_history(org.b, hours=24, gpus=4.0, busy=0.25, user_name="dave@example.com")
    now = timezone.now()
    live = make_workload(org.a, "live", compute={"gpuDevicesRequest": 2})
    Workload.objects.filter(pk=live.pk).update(actual_phase="Running", created_at=now - timedelta(hours=3),
                                               started_at=now - timedelta(hours=2))
    MetricSample.objects.bulk_create([MetricSample(workload=live, type="GPU_UTILIZATION", value=25.0,
                                                   timestamp=now - timedelta(minutes=m)) for m in range(1, 60, 2)])
    return org


def no_overflow(page, width):
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.evaluate(UNNAMED) == []


@pytest.mark.parametrize("width", [1440, 390])
def test_trends_switch_ranges_and_show_values_on_hover(open_session, used, width):
    session = open_session("bob", width=width)
    page = session.page
    page.goto(f"/quota/projects/{used.a.pk}")
    card = page.get_by_test_id("usage-trend")
    expect(card).to_have_attribute("data-range", "24h")
    canvas = card.locator("canvas")
    page.wait_for_function("(c) => window.Chart && Chart.getChart(c)", arg=canvas.element_handle())
    assert canvas.evaluate(CHART) == [["GPUs allocated", 24, 2], ["GPUs used", 24, 0.6],
                                      ["GPUs idle (allocated, not busy)", 24, 1.4]]
    expected = {"1h": 12, "7d": 24 * 7, "30d": 30}
    for range_key, points in expected.items():
        card.locator(f"[data-trend-range='{range_key}']").click()
        card = page.get_by_test_id("usage-trend")
        expect(card).to_have_attribute("data-range", range_key)
        expect(card.locator(f"[data-trend-range='{range_key}']")).to_have_attribute("aria-pressed", "true")
        canvas = card.locator("canvas")
        page.wait_for_function("(c) => Chart.getChart(c)", arg=canvas.element_handle())
        series = canvas.evaluate(CHART)
        assert [s[1] for s in series] == [points] * 3, (range_key, series)
        if range_key == "1h":  # the running training: 2 GPUs, a quarter busy
            assert series[0][2] == 2 and series[1][2] == 0.5 and series[2][2] == 1.5
    card.locator("[data-trend-range='7d']").click()
    card = page.get_by_test_id("usage-trend")
    expect(card).to_have_attribute("data-range", "7d")
    canvas = card.locator("canvas")
    page.wait_for_function("(c) => Chart.getChart(c)", arg=canvas.element_handle())
    box = canvas.bounding_box()
    canvas.hover(position={"x": box["width"] * 0.6, "y": box["height"] * 0.5})  # scrolled into view first
    page.wait_for_function("(c) => Chart.getChart(c).tooltip.getActiveElements().length === 3",
                           arg=canvas.element_handle())
    expect(card.get_by_test_id("trend-totals")).to_contain_text("GPU-hours allocated")
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []
    no_overflow(page, width)
    session.screenshot(f"trends-{width}")
    # the member sees the trend of the GPU overview too: their projects' usage only
    page.goto("/gpus")
    overview = page.get_by_test_id("usage-trend")
    expect(overview).to_contain_text("your projects")
    no_overflow(page, width)


@pytest.mark.parametrize("width", [1440, 390])
def test_request_a_report_then_download_it(open_session, used, width):
    session = open_session("root", width=width)
    page = session.page
    page.goto("/usage/reports")
    form = page.get_by_test_id("report-form")
    form.get_by_label("Name", exact=True).fill("last week")
    start = (timezone.now() - timedelta(days=7)).strftime("%Y-%m-%dT%H:00")
    form.get_by_label("From (UTC)").fill(start)
    form.get_by_label("Group by").select_option("Project")
    form.get_by_role("button", name="Request report").click()
    row = page.locator("tr[data-report='last week']")
    expect(row).to_have_attribute("data-status", "Pending")
    tasks.report_produce(str(Report.objects.get(name="last week").pk))  # what the worker does
    expect(row).to_have_attribute("data-status", "Ready", timeout=10_000)  # the list polls while one is pending
    with page.expect_download() as download:
        row.get_by_role("link", name="Download CSV").click()
    text = open(download.value.path(), encoding="utf-8").read()
    header, *lines = text.splitlines()
    assert header.startswith("date,project_id,project,department,user,gpu_allocation_hours")
    assert {line.split(",")[2] for line in lines} == {"alpha", "beta"}
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []
    no_overflow(page, width)
    page.evaluate("document.querySelectorAll('#toasts .toast').forEach((t) => t.remove())")  # not over the form
    page.evaluate("window.scrollTo(0, 0)")  # the side menu is sticky: a scrolled full-page shot shifts it
    session.screenshot(f"reports-{width}")
    page.goto("/usage")
    expect(page.locator("tr[data-project='alpha'] [data-value='idle_hours']")).to_contain_text("idle")
    no_overflow(page, width)


@pytest.mark.parametrize("width", [1440, 390])
def test_the_bell_lists_unread_notifications_and_marks_them_read(open_session, used, width):
    for name in ("train-a", "train-b", "train-c"):
        NotificationFactory(user=used.users.member, title=f"Workload {name} failed",
                            message=f"Workload {name} of project alpha failed: its pod exited with code 1.")
    NotificationFactory(user=used.users.other, title="Not for bob")
    session = open_session("bob", width=width)
    page = session.page
    page.goto("/")
    bell = page.get_by_test_id("bell")
    expect(bell.get_by_test_id("bell-count")).to_have_text("3")
    bell.get_by_role("button", name="Notifications").click()
    menu = page.get_by_test_id("bell-menu")
    expect(menu).to_be_visible()
    expect(menu.locator("[data-notification]")).to_have_count(3)
    expect(menu).not_to_contain_text("Not for bob")
    no_overflow(page, width)
    box = menu.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width
    session.screenshot(f"bell-{width}")
    menu.get_by_role("button", name="Mark read: Workload train-a failed").click()
    expect(menu.locator("[data-notification]")).to_have_count(2)
    expect(bell.get_by_test_id("bell-count")).to_have_text("2")
    menu.get_by_role("button", name="Mark all read").click()
    expect(menu.get_by_test_id("bell-empty")).to_be_visible()
    expect(bell.get_by_test_id("bell-count")).to_have_count(0)
    if width == 1440:  # live: a new notification reaches the count within its 15 s poll, the menu stays
        NotificationFactory(user=used.users.member, title="Workload train-d failed")
        expect(bell.get_by_test_id("bell-count")).to_have_text("1", timeout=20_000)
        expect(menu).to_be_attached()
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []
    # the notifications page, in dark mode: what bob was told (read now), his subscriptions' form
    menu.get_by_role("link", name="All notifications and settings").click()
    expect(page.locator("main h1.page-title")).to_have_text("Notifications")
    page.get_by_role("button", name="Dark mode").click()
    expect(page.locator("[data-notification='Workload train-a failed']")).to_have_attribute("data-read", "true")
    form = page.get_by_test_id("subscription-form")
    form.locator("input[value='Workload status change|Failed']").check()
    form.get_by_label("For", exact=True).select_option(label="Project alpha")
    form.get_by_role("button", name="Subscribe").click()
    expect(page.get_by_test_id("subscription-list")).to_contain_text("Project alpha")
    no_overflow(page, width)
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == []
