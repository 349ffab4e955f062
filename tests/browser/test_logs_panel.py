"""The workload page's logs: searched (only the lines that hold the text, and how many), with timestamps, and
downloaded as the panel shows them."""

import pytest
from playwright.sync_api import expect

from tests.workloads.cluster_support import run_seconds, training_body, wait_for
from workloads import tasks
from workloads.models import Workload

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_member_searches_stamps_and_downloads_a_log(open_session, sim_org, worker):
    body = training_body(sim_org.project, "train-logs", annotations=run_seconds(600))
    workload_id = sim_org.api.post("/api/v1/workloads/trainings", body, format="json").json()["workloadId"]
    wait_for(lambda: Workload.objects.get(pk=workload_id).actual_phase == "Running",
             step=lambda: tasks.cluster_sync.apply(args=[str(sim_org.cluster.pk)]), interval=0.5, timeout=60,
             what="train-logs to run")
    page = open_session(sim_org.user.username).page
    page.goto(f"/workloads/{workload_id}")
    view = page.locator("#log-view")
    expect(view).to_contain_text("working, step 3", timeout=20_000)

    page.get_by_label("Search the log").fill("started from image")
    expect(view).to_have_text("kubesim: container main started from image python:3.11")
    expect(page.locator("#log-note")).to_contain_text("1 of ")
    page.get_by_label("Search the log").fill("")
    expect(view).to_contain_text("working, step 2")

    page.get_by_label("Timestamps").check()
    expect(view).to_contain_text("Z kubesim: container main started", timeout=10_000)
    href = page.locator("#log-download").get_attribute("href")
    assert "download=true" in href and "timestamps=true" in href
    with page.expect_download() as info:
        page.locator("#log-download").click()
    saved = info.value
    assert saved.suggested_filename.endswith(".log")
    text = open(saved.path(), encoding="utf-8").read()
    assert text.startswith("20") and "kubesim: container main started from image" in text
