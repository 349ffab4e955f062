"""A member's home says what changed since their last visit: their own workloads that finished, failed, were
reclaimed or changed phase while they were away, each once; a reload within the same visit keeps the same
changes, and the page's live refresh (htmx, ?part=live) notes no visit. Its queries do not grow with the
changes."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from portal.models import HomeVisit
from tests.browser.test_workload_pages import make_workload
from workloads.models import WorkloadEvent

pytestmark = pytest.mark.django_db

LIVE = {"HTTP_HX_REQUEST": "true"}


def changed(workload, phase, *, ago, reason=None, message=""):
    WorkloadEvent.objects.create(workload=workload, at=timezone.now() - ago, reason=reason or phase, phase=phase,
                                 message=message)


def items(html: str) -> dict[str, str]:
    """{workload name: what} of the changes listed."""
    import re

    found = re.findall(r'data-testid="home-change" data-what="(\w+)"><a href="[^"]+">([^<]+)</a>', html)
    return {name: what for what, name in found}


def away(user, hours=2):
    HomeVisit.objects.filter(user=user).update(seen_at=timezone.now() - timedelta(hours=hours))


def test_what_changed_since_the_last_visit(client, org):
    bob = org.users.member
    client.force_login(bob)
    first = client.get("/").content.decode()
    assert "Welcome. From your next visit" in first and items(first) == {}
    visit = HomeVisit.objects.get(user=bob)

    done = make_workload(org, name="done", created_by=bob, actual_phase="Completed")
    broke = make_workload(org, name="broke", created_by=bob, actual_phase="Failed", phase_message="OOMKilled")
    evicted = make_workload(org, name="evicted", created_by=bob, actual_phase="Pending",
                            pending_reason={"type": "Reclaimed", "reclaimedBy": {"project": "beta"}})
    freed = make_workload(org, name="freed", created_by=bob, actual_phase="Stopped")
    runs = make_workload(org, name="runs", created_by=bob, actual_phase="Running")
    quiet = make_workload(org, name="quiet", created_by=bob, actual_phase="Running")
    theirs = make_workload(org, name="theirs", created_by=org.users.admin, actual_phase="Failed")
    away(bob, hours=3)
    for workload, phase in ((done, "Running"), (done, "Completed"), (broke, "Failed"), (evicted, "Pending"),
                            (runs, "Running"), (theirs, "Failed")):
        changed(workload, phase, ago=timedelta(hours=1))
    changed(freed, "Stopping", ago=timedelta(hours=1), reason="IdleGpuReclaimed")
    changed(quiet, "Running", ago=timedelta(hours=5))  # before the last visit
    WorkloadEvent.objects.create(workload=quiet, at=timezone.now(), reason="BackOff", message="x")  # no phase

    html = client.get("/").content.decode()
    assert items(html) == {"done": "finished", "broke": "failed", "evicted": "reclaimed", "freed": "reclaimed",
                           "runs": "changed"}
    assert "failed: OOMKilled" in html and "is Running now" in html and "was reclaimed; now Stopped" in html
    assert "Since your last visit" in html and "3\xa0hours ago" in html
    visit.refresh_from_db()
    assert visit.since is not None and timezone.now() - visit.seen_at < timedelta(minutes=1)

    # a reload within the same visit: the same changes; the live refresh neither notes a visit nor drops them
    assert items(client.get("/").content.decode()) == items(html)
    seen = HomeVisit.objects.get(user=bob).seen_at
    live = client.get("/?part=live", **LIVE)
    assert live.status_code == 200 and "<html" not in live.content.decode()
    assert items(live.content.decode()) == items(html)
    assert HomeVisit.objects.get(user=bob).seen_at == seen

    # the next visit starts where this one was last seen
    away(bob, hours=1)
    assert "Nothing of yours changed since then." in client.get("/").content.decode()


def test_the_home_is_live_for_both_roles(client, org):
    client.force_login(org.users.member)
    page = client.get("/").content.decode()
    assert 'id="home-live" hx-get="/?part=live" hx-trigger="every 5s" data-poll-when-visible' in page
    make_workload(org, name="new-one", created_by=org.users.member, actual_phase="Running")
    assert "new-one" in client.get("/?part=live", **LIVE).content.decode()
    client.force_login(org.users.platform_admin)
    page = client.get("/").content.decode()
    assert 'id="home-live"' in page
    live = client.get("/?part=live", **LIVE).content.decode()
    assert "Clusters: GPUs per node pool" in live and "<html" not in live
    assert not HomeVisit.objects.filter(user=org.users.platform_admin).exists()


def test_the_members_home_reads_the_same_queries_for_one_and_many_changes(client, org, django_assert_num_queries):
    bob = org.users.member
    client.force_login(bob)
    client.get("/")
    one = make_workload(org, name="w-0", created_by=bob, actual_phase="Completed")
    away(bob)
    changed(one, "Completed", ago=timedelta(minutes=30))
    client.get("/")
    with CaptureQueriesContext(connection) as few:
        client.get("/?part=live", **LIVE)
    for index in range(1, 12):
        workload = make_workload(org, name=f"w-{index}", created_by=bob, actual_phase="Failed")
        changed(workload, "Failed", ago=timedelta(minutes=20))
    with django_assert_num_queries(len(few.captured_queries)):
        html = client.get("/?part=live", **LIVE).content.decode()
    assert len(items(html)) == 10  # the latest ten
