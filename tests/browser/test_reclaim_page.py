"""Idle GPU reclaim, in the browser: a notebook whose GPU sits idle is suspended by the reclaim round while its
page is open; the page says why (next to Resume) without a reload, and one click on Resume brings it back."""

import pytest
from playwright.sync_api import expect

from tests.workloads.test_e2e import submit, wait_phase
from tests.workloads.test_reclaim import collect_for, set_rules, workspace_body
from workloads import tasks
from workloads.models import Workload

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_an_idle_notebook_is_suspended_with_a_notice_and_resumes_in_one_click(open_session, sim_org, worker):
    set_rules(sim_org, {"interactiveJobMaxIdleDurationSeconds": 2})
    idle_id = submit(sim_org, "workspaces", workspace_body(sim_org, "idle-notebook", idle=True))
    wait_phase(sim_org, idle_id, "Running")
    session = open_session(sim_org.user.username)
    page = session.page
    page.goto(f"/workloads/{idle_id}")

    collect_for(sim_org, 3.0)  # GPU samples at 0% over the whole 2 s window
    tasks.workloads_reclaim.apply()
    wait_phase(sim_org, idle_id, "Stopped")
    notice = page.get_by_test_id("reclaimed")
    expect(notice).to_contain_text("Suspended: idle GPU", timeout=15_000)  # the live panel, no reload
    expect(notice).to_contain_text("GPU utilisation stayed under 5%")
    resume = page.get_by_role("button", name="Resume")
    expect(resume).to_be_visible()
    session.screenshot("workload-reclaimed")

    resume.click()
    wait_phase(sim_org, idle_id, "Running")
    assert Workload.objects.get(pk=idle_id).desired_phase == "Running"
    expect(page.get_by_test_id("reclaimed")).to_have_count(0, timeout=15_000)
