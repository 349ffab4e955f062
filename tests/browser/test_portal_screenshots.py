"""Screenshots of the portal's third round, at 1440 and 390 px, light and dark, each page axe-clean: the home of a
platform admin and of a member (with what changed since the last visit), the workload list with filter chips, the
log viewer (a suspended workload's last lines, kept after its pod went) and a waiting workload's explanation.
The PNGs go to docs/screenshots/ with STUDIO_REFRESH_DOCS=1 (tests/docs_output.py), the run's own folder
otherwise; viewport-sized, not whole pages, to stay small."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from portal.models import HomeVisit
from tests import docs_output
from tests.browser.test_layout import AXE, AXE_RUN, UNNAMED
from tests.browser.test_workload_pages import make_workload
from workloads.models import PodLogCapture, WorkloadEvent

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

NO_ROOM = {"type": "NoNodeRoom", "resource": "nvidia.com/gpu", "resources": ["nvidia.com/gpu"],
           "nodePool": "default", "queueLength": 3,
           "message": "No node in node pool default has room for it: not enough nvidia.com/gpu free.",
           "schedulerMessage": "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."}
LOG = "\n".join(f"2026-11-29T07:{m:02d}:00.000000000Z epoch {m}: loss {2.5 / (m + 1):.4f}" for m in range(40))


@pytest.fixture
def world(org):
    bob, now = org.users.member, timezone.now()
    waiting = make_workload(org, name="big-train", created_by=bob, actual_phase="Pending", gpu_request=4,
                            pending_reason=NO_ROOM, queue_position=2, running_pods=0)
    stopped = make_workload(org, name="sweep-lr", created_by=bob, actual_phase="Stopped", running_pods=0)
    PodLogCapture.objects.create(workload=stopped, pod_name="sweep-lr-0-worker-7f9c8", text=LOG,
                                 captured_at=now - timedelta(minutes=12), reason="Suspended")
    for index in range(6):
        make_workload(org, name=f"train-{index:02d}", created_by=bob, gpu_request=1,
                      actual_phase="Pending" if index % 2 else "Running",
                      pending_reason=NO_ROOM if index % 2 else {}, queue_position=3 if index % 2 else None)
    done = make_workload(org, name="eval-nightly", created_by=bob, actual_phase="Completed")
    failed = make_workload(org, name="finetune-7b", created_by=bob, actual_phase="Failed",
                           phase_message="Container main exited with code 137 (OOMKilled).",
                           phase_updated_at=now - timedelta(hours=1))
    HomeVisit.objects.create(user=bob, seen_at=now - timedelta(hours=5), since=None)
    for workload, phase in ((done, "Completed"), (failed, "Failed"), (stopped, "Stopping")):
        WorkloadEvent.objects.create(workload=workload, at=now - timedelta(hours=2), reason=phase, phase=phase)
    return {"waiting": waiting, "stopped": stopped}


def _shot(page, name: str, width: int, dark: bool, element=None):
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    assert page.evaluate(UNNAMED) == []
    page.add_script_tag(url=AXE)
    assert page.evaluate(AXE_RUN) == [], f"{name} at {width}px{' dark' if dark else ''}: axe-core violations"
    path = docs_output.folder("screenshots") / f"{name}-{width}{'-dark' if dark else ''}.png"
    (element or page).screenshot(path=str(path))


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
@pytest.mark.parametrize("width", [1440, 390])
def test_screenshots_of_the_homes_the_list_the_logs_and_a_waiting_workload(open_session, world, width, dark):
    for username in ("root", "bob"):
        page = open_session(username, width=width).page
        if dark:
            page.get_by_role("button", name="Dark mode").click()
            expect(page.locator("html")).to_have_attribute("data-bs-theme", "dark")
        page.goto("/")
        if username == "root":
            expect(page.get_by_test_id("home-waiting").first).to_be_visible()
            _shot(page, "home-admin", width, dark)
            continue
        expect(page.get_by_test_id("home-change")).to_have_count(3)
        _shot(page, "home-member", width, dark, page.get_by_test_id("home-changes") if width == 390 else None)

        page.goto("/workloads?filterBy=phase%3D%3DPending&filterBy=type%3D%3Dtraining&sortBy=name")
        expect(page.get_by_test_id("filter-chips").locator("[data-chip]")).to_have_count(2)
        _shot(page, "workloads-chips", width, dark)

        page.goto(f"/workloads/{world['stopped'].pk}")
        note = page.locator("#log-note")
        expect(note).to_contain_text("The pod is gone: these are the last lines of its log, captured at")
        expect(page.locator("#log-view")).to_contain_text("epoch 39: loss")
        page.get_by_label("Search the log").fill("epoch 3")
        expect(note).to_contain_text("when the workload was suspended. 11 of 40 lines hold")
        page.locator("#logs").scroll_into_view_if_needed()
        _shot(page, "log-viewer", width, dark, page.locator("#logs"))

        page.goto(f"/workloads/{world['waiting'].pk}")
        reason = page.get_by_test_id("pending-reason")
        expect(reason).to_contain_text("No room yet")
        reason.get_by_text("The scheduler's own words").click()
        _shot(page, "waiting-explained", width, dark)
