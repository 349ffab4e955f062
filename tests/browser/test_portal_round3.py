"""Bugs of the portal seen in a real Chromium: the confirmation dialog's focus, a phone's width (the logs' pod
select, the list's row checkboxes), the Kit session's routes, charts without empty series, the launch form naming
every problem at once, and the wizard proposing the service type of the chosen template version."""

import pytest
from playwright.sync_api import expect

from tests.browser.test_workload_metrics import LABELS, POINTS, samples
from tests.browser.test_workload_pages import make_workload
from tests.kit.streams import running_stream
from workloads.models import Pod, Workload

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LONG_POD = "a-rather-long-training-run-name-for-the-nightly-sweep-0-worker-7f9c8d6b5-xk2lp"


def test_the_confirm_dialog_focuses_cancel_and_gives_the_focus_back(open_session, org):
    workload = make_workload(org)
    page = open_session("bob").page
    page.goto(f"/workloads/{workload.pk}")
    suspend = page.get_by_role("button", name="Suspend", exact=True)
    suspend.click()
    dialog = page.get_by_role("dialog")
    expect(dialog).to_be_visible()
    expect(dialog.get_by_role("button", name="Cancel")).to_be_focused()  # Enter must not suspend it
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    expect(page.get_by_role("button", name="Suspend", exact=True)).to_be_focused()
    assert Workload.objects.get(pk=workload.pk).desired_phase != "Stopped"


def test_at_390_px_the_logs_and_the_list_fit(open_session, org):
    workload = make_workload(org, name="train-with-a-long-name-for-a-phone")
    Pod.objects.create(workload=workload, uid="u-0", name=LONG_POD, phase="Running")
    page = open_session("root", width=390).page
    page.goto(f"/workloads/{workload.pk}")
    expect(page.locator("#log-pod")).to_have_value(LONG_POD)
    box = page.locator("#log-pod").bounding_box()
    assert box["x"] + box["width"] <= 390, box
    assert page.evaluate("document.documentElement.scrollWidth") <= 390

    page.goto("/workloads?scope=all")
    row = page.locator("tbody tr", has=page.get_by_role("link", name=workload.name))
    checkbox = row.locator("input[data-select-row]").bounding_box()
    name = row.locator("td[data-col=name]").bounding_box()
    assert checkbox["x"] + checkbox["width"] <= name["x"], (checkbox, name)  # side by side, not on top


@pytest.fixture
def stream(org):
    return running_stream(org, address="a4f1c2d3e5b6a7c8d9e0f1a2b3c4d5e6-1234567890.eu-central-1.elb.amazonaws.com")


@pytest.mark.parametrize("width", [1440, 390])
def test_the_kit_session_routes_are_not_clipped(open_session, stream, width):
    page = open_session("bob", width=width).page
    page.goto(f"/kit/sessions/{stream.pk}")
    routes = page.locator("#routes")
    expect(routes).to_contain_text("elb.amazonaws.com")
    # the whole table is in view: nothing hidden behind a sideways scroll of its box
    clipped = routes.evaluate("(t) => t.parentElement.scrollWidth - t.parentElement.clientWidth")
    assert clipped <= 1, clipped
    udp = routes.get_by_text("UDP").bounding_box()
    card = page.locator("section[aria-labelledby=h-routes]").bounding_box()
    assert udp["x"] + udp["width"] <= card["x"] + card["width"], (udp, card)
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_a_chart_draws_no_series_without_points(open_session, org):
    workload = make_workload(org)
    samples(workload, "CPU_USAGE_CORES", [0.5, 1.0])
    samples(workload, "CPU_REQUEST_CORES", [2.0])
    samples(workload, "CPU_LIMIT_CORES", [0])  # no limit set: nothing to draw
    page = open_session("bob").page
    page.goto(f"/workloads/{workload.pk}")
    page.wait_for_function(f"() => typeof Chart !== 'undefined' && ({POINTS})('chart-cpu') === 10")
    assert page.evaluate(LABELS, "chart-cpu") == ["CPU used", "CPU requested"]
    empty = "(id) => Chart.getChart(document.getElementById(id)).data.datasets.filter((d) => !d.data.length).length"
    assert page.evaluate(empty, "chart-memory") == 0


def test_the_launch_form_names_every_problem_at_once(open_session, org, make_profile):
    profile = make_profile()
    page = open_session("bob").page
    page.goto(f"/catalog/{profile.pk}/launch?projectId={org.a.pk}")
    page.get_by_label("Workload name").fill("nb-1")
    page.get_by_label("CPU cores").fill("100")  # over its maximum
    page.get_by_label("Memory", exact=True).fill("128Gi")  # over its maximum, which only the server can compare
    page.get_by_role("button", name="Launch").click()
    expect(page.locator(".field", has=page.get_by_label("CPU cores")).get_by_role("alert")).to_be_visible()
    expect(page.locator(".field", has=page.get_by_label("Memory", exact=True)).get_by_role("alert")).to_be_visible()
    assert not Workload.objects.filter(name="nb-1").exists()


def test_the_wizard_proposes_the_service_type_of_the_chosen_version(open_session, org, notebook_version):
    page = open_session("root").page
    page.goto("/studio/service-profiles/new")
    expect(page.get_by_label("Service type")).to_have_value("")
    with page.expect_response(lambda r: "version-options" in r.url):
        page.get_by_label("Environment template", exact=True).select_option("notebook")
    version = page.get_by_label("Environment template version")
    expect(version.locator(f"option[value='{notebook_version.version}']")).to_have_attribute("data-kind", "workspace")
    version.select_option(notebook_version.version)
    expect(page.get_by_label("Service type")).to_have_value("notebook")
    page.get_by_label("Service type").select_option("custom")  # her own choice stays
    version.select_option("")
    version.select_option(notebook_version.version)
    expect(page.get_by_label("Service type")).to_have_value("custom")
