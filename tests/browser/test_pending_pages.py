"""Why pending, in the browser: workloads on kubesim that wait say why and where they stand in their node pool's
queue, on the workload page (live, without a reload) and in the list."""

import pytest
from playwright.sync_api import expect

from tests.workloads.cluster_support import training_body, wait_for
from workloads import tasks
from workloads.models import Workload

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_waiting_workloads_say_why_and_their_place_in_the_queue(open_session, sim_org, worker):
    ids = [sim_org.api.post("/api/v1/workloads/trainings", training_body(
        sim_org.project, name, compute={"gpuDevicesRequest": 16}), format="json").json()["workloadId"]
        for name in ("huge-1", "huge-2")]
    bad = sim_org.api.post("/api/v1/workloads/trainings", training_body(
        sim_org.project, "bad-image", image="registry.example.com/does-not-exist:1"), format="json").json()

    def sync():
        tasks.cluster_sync.apply(args=[str(sim_org.cluster.pk)])

    session = open_session(sim_org.user.username)
    page = session.page
    page.goto(f"/workloads/{ids[1]}")  # opened before the scheduler has said anything: the page follows
    wait_for(lambda: Workload.objects.filter(pk__in=ids, queue_position__isnull=False).count() == 2
             and (Workload.objects.get(pk=bad["workloadId"]).pending_reason or {}).get("type") == "ImagePull",
             step=sync, interval=0.5, timeout=60, what="both queued and the pull error seen")
    reason = page.get_by_test_id("pending-reason")
    expect(reason).to_contain_text("No room yet", timeout=10_000)
    expect(page.get_by_test_id("pending-sentence")).to_contain_text("in node pool default: all its GPUs are in use.")
    expect(page.get_by_test_id("queue-position")).to_have_text("It is 2nd in line.")
    expect(page.get_by_test_id("queue-detail")).to_contain_text("node pool default, #2 of 2")
    words = page.get_by_test_id("scheduler-words")  # the scheduler's own text, behind a toggle
    expect(words.get_by_text("not enough nvidia.com/gpu free")).to_be_hidden()
    words.get_by_text("The scheduler's own words").click()
    expect(words).to_contain_text("not enough nvidia.com/gpu free")
    expect(words).to_contain_text("Scheduler: 0/4 nodes are available")
    session.screenshot("workload-pending")

    page.goto("/workloads")
    rows = {name: page.get_by_role("row").filter(has=page.get_by_role("link", name=name))
            for name in ("huge-1", "huge-2", "bad-image")}
    expect(rows["huge-1"].get_by_test_id("queue-position")).to_have_text("It is next in line.")
    expect(rows["huge-2"].get_by_test_id("queue-position")).to_have_text("It is 2nd in line.")
    expect(rows["huge-1"].get_by_test_id("pending-reason")).to_have_attribute("data-type", "NoNodeRoom")
    expect(rows["bad-image"].get_by_test_id("pending-reason")).to_contain_text(
        "Its container image registry.example.com/does-not-exist:1 cannot be downloaded")
    session.screenshot("workloads-pending")
