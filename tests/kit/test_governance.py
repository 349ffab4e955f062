"""Governed streams: a project's cap on concurrent streams (over it, a request waits in the project's queue with its
position, or is refused, as the profile says), and streams ended after the profile's idle time."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from kit import tasks
from kit.models import ApplicationProfile, StreamSession
from kit.sessions import IDLE_REASON, sessions_govern
from studio.models import AccessRule
from tests.kit.conftest import error, errors
from workloads.models import MetricSample, Workload

pytestmark = pytest.mark.django_db


@pytest.fixture
def member(client_for, org):
    return client_for(org.users.member)


def cap(api, project, value):
    response = api.put(f"/api/v1/kit/projects/{project.pk}/stream-limit", {"maxSessions": value}, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def launch(api, **body):
    response = api.post("/streaming/stream", {"id": "usd-viewer", "profile": "default", **body}, format="json")
    assert response.status_code == 202, response.json()
    return response.json()


def test_over_the_cap_a_request_waits_in_the_queue_and_moves_up_as_sessions_end(client_for, member, org, kit):
    assert cap(client_for(org.users.admin), org.a, 1) == {"projectId": org.a.pk, "maxSessions": 1,
                                                          "runningSessions": 0, "queuedSessions": 0}
    first, second, third = launch(member), launch(member), launch(member)
    assert first["status"]["condition"] == "starting" and first["workloadId"] == first["id"]
    assert (second["status"]["condition"], second["queuePosition"], second["workloadId"]) == ("queued", 1, None)
    assert third["queuePosition"] == 2 and "number 2 in the queue" in third["status"]["message"]
    waiting = member.get(f"/streaming/stream/{second['id']}")
    assert waiting.status_code == 202 and waiting.json()["status"]["condition"] == "queued"
    assert Workload.objects.filter(kind="stream").count() == 1
    assert member.get(f"/api/v1/kit/projects/{org.a.pk}/stream-limit").json()["queuedSessions"] == 2

    assert member.delete("/streaming/stream", {"id": first["id"]}, format="json").status_code == 204
    moved = member.get(f"/streaming/stream/{second['id']}").json()
    assert moved["status"]["condition"] == "starting" and moved["workloadId"] is not None
    assert Workload.objects.get(pk=moved["workloadId"]).created_by == org.users.member
    assert member.get(f"/streaming/stream/{third['id']}").json()["queuePosition"] == 1
    listed = {s["id"]: s for s in member.get("/streaming/stream").json()["items"]}
    assert set(listed) == {second["id"], third["id"]} and listed[third["id"]]["queuePosition"] == 1


def test_a_queued_request_can_be_withdrawn(client_for, member, org, kit):
    cap(client_for(org.users.admin), org.a, 1)
    launch(member)
    queued = launch(member)
    assert member.delete(f"/streaming/stream/{queued['id']}").status_code == 204
    assert StreamSession.objects.get(pk=queued["id"]).state == "ended"
    error(member.get(f"/streaming/stream/{queued['id']}"), 404, errors.SESSION_NOT_FOUND)


def test_a_profile_that_refuses_answers_429_with_the_reason(client_for, member, org, kit):
    ApplicationProfile.objects.filter(slug="default").update(over_capacity="refuse")
    cap(client_for(org.users.admin), org.a, 1)
    launch(member)
    refused = member.post("/streaming/stream", {"id": "usd-viewer", "profile": "default"}, format="json")
    assert refused.status_code == 429
    assert refused.json()["detail"] == ("Project alpha already runs 1 of its 1 concurrent streams; profile default "
                                        "refuses requests over the cap. End a session or try again later.")
    assert StreamSession.objects.count() == 1


def test_raising_the_cap_launches_those_waiting(client_for, member, org, kit):
    admin = client_for(org.users.admin)
    cap(admin, org.a, 1)
    launch(member)
    queued = launch(member)
    assert cap(admin, org.a, 2)["runningSessions"] == 2
    assert StreamSession.objects.get(pk=queued["id"]).state == "launched"
    assert cap(admin, org.a, None)["maxSessions"] is None


def test_only_project_admins_set_the_cap(client_for, member, org, kit):
    assert member.get(f"/api/v1/kit/projects/{org.a.pk}/stream-limit").status_code == 200
    assert member.put(f"/api/v1/kit/projects/{org.a.pk}/stream-limit", {"maxSessions": 1},
                      format="json").status_code == 403
    assert client_for(org.users.other).get(f"/api/v1/kit/projects/{org.a.pk}/stream-limit").status_code == 404
    bad = client_for(org.users.admin).put(f"/api/v1/kit/projects/{org.a.pk}/stream-limit", {"maxSessions": 0},
                                          format="json")
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "maxSessions"
    assert cap(client_for(org.users.platform_admin), org.a, 3)["maxSessions"] == 3


def test_a_queued_request_whose_maker_left_the_project_fails_with_the_reason(client_for, member, org, kit):
    admin = client_for(org.users.admin)
    cap(admin, org.a, 1)
    first = launch(member)
    queued = launch(member)
    AccessRule.objects.filter(user=org.users.member, project=org.a).delete()
    assert admin.delete(f"/streaming/stream/{first['id']}").status_code == 204
    failed = admin.get(f"/streaming/stream/{queued['id']}")
    assert failed.status_code == 200  # it never will be ready
    assert failed.json()["status"] == {"condition": "failed", "status": False,
                                       "message": f"Not started: {errors.LAUNCH_FORBIDDEN}"}


def running(session_id, since) -> Workload:
    Workload.objects.filter(pk=session_id).update(actual_phase="Running", phase_updated_at=since)
    StreamSession.objects.filter(pk=session_id).update(last_activity_at=since)
    return Workload.objects.get(pk=session_id)


def test_a_stream_idle_past_its_profiles_idle_time_ends(member, org, kit):
    ApplicationProfile.objects.filter(slug="default").update(idle_timeout_seconds=600)
    now = timezone.now()
    idle = launch(member)
    polled = launch(member)
    busy = launch(member)
    assert idle["idleTimeoutSeconds"] == 600
    for session in (idle, polled, busy):
        running(session["id"], now - timedelta(minutes=11))
    member.get(f"/streaming/stream/{polled['id']}")  # a client that asks keeps its session
    MetricSample.objects.create(workload_id=busy["id"], type="GPU_UTILIZATION", value=40.0,
                                timestamp=now - timedelta(minutes=2))
    done = sessions_govern(now + timedelta(seconds=1))
    assert done["ended_idle"] == [idle["id"]]
    workload = Workload.objects.get(pk=idle["id"])
    assert workload.desired_phase == "Deleted"
    event = workload.events.get(reason=IDLE_REASON)
    assert event.message == ("Ended after 11 min 1 s without a client or GPU activity; the profile ends streams idle "
                             "for 10 min.")
    assert StreamSession.objects.get(pk=idle["id"]).message == event.message
    error(member.get(f"/streaming/stream/{idle['id']}"), 404, errors.SESSION_NOT_FOUND)
    assert {s["id"] for s in member.get("/streaming/stream").json()["items"]} == {polled["id"], busy["id"]}
    # Its page says why it ended, without a Stop button; its poll is told to stop (htmx's 286)
    from django.test import Client

    browser = Client()
    browser.force_login(org.users.member)
    html = browser.get(reverse("kit-session", args=[idle["id"]])).content.decode()
    assert event.message in html and 'data-condition="terminated"' in html and "kit-session-stop" not in html
    assert reverse("kit-session-stop", args=[idle["id"]]) not in html
    assert browser.get(reverse("kit-session", args=[idle["id"]]), HTTP_HX_REQUEST="true").status_code == 286


def test_a_stream_without_an_idle_time_or_not_yet_running_is_never_idle(member, org, kit):
    old = timezone.now() - timedelta(days=1)
    forever = launch(member)
    running(forever["id"], old)
    ApplicationProfile.objects.filter(slug="default").update(idle_timeout_seconds=60)
    waiting = launch(member)
    Workload.objects.filter(pk=waiting["id"]).update(actual_phase="Pending", phase_updated_at=old)
    StreamSession.objects.filter(pk=waiting["id"]).update(last_activity_at=old)
    assert sessions_govern()["ended_idle"] == []


def test_an_idle_end_lets_the_queue_move_on_in_the_same_round(client_for, member, org, kit):
    ApplicationProfile.objects.filter(slug="default").update(idle_timeout_seconds=60)
    cap(client_for(org.users.admin), org.a, 1)
    first = launch(member)
    queued = launch(member)
    running(first["id"], timezone.now() - timedelta(minutes=5))
    done = tasks.streams_govern.apply().get()  # the beat's task
    assert done["ended_idle"] == [first["id"]] and done["admitted"] == 1
    assert StreamSession.objects.get(pk=queued["id"]).state == "launched"


def test_the_stream_page_shows_the_session_its_routes_how_to_connect_and_stop(client_for, member, org, kit):
    from django.test import Client

    session = launch(member)
    Workload.objects.filter(pk=session["id"]).update(actual_phase="Running", endpoints={
        "serviceAddress": "25.124.78.14", "serviceType": "LoadBalancer",
        "ports": [{"name": "port-49100", "port": 49100}, {"name": "port-47998-udp", "port": 47998,
                                                          "protocol": "UDP"}]})
    browser = Client()
    browser.force_login(org.users.member)
    html = browser.get(reverse("kit-session", args=[session["id"]])).content.decode()
    for text in ("Session is active", "<code>25.124.78.14</code>",
                 '<td data-label="Port in the pod">47998</td><td data-label="Protocol">UDP</td>', "How to connect",
                 '"source": "stream"', "App Server", "Stream Server", "signalingPort: 49100 (TCP)",
                 "mediaPort: 47998 (UDP)", f'action="{reverse("kit-session-stop", args=[session["id"]])}"'):
        assert text in html, text
    listing = browser.get(reverse("kit-sessions")).content.decode()
    assert "0 waiting" in listing and "Client URLs" in listing


@pytest.mark.django_db(transaction=True)
def test_requests_at_once_never_take_more_slots_than_the_cap(client_for, org, kit):
    """Six requests at the same moment under a cap of two: two launch, four wait, each in its own place. Admission
    runs under the project's row lock (SQLite's IMMEDIATE transactions serialise the writers the same way)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection

    cap(client_for(org.users.admin), org.a, 2)
    clients = [client_for(org.users.member) for _ in range(6)]
    barrier = threading.Barrier(len(clients))

    def run(api):
        try:
            barrier.wait(timeout=30)
            return api.post("/streaming/stream", {"id": "usd-viewer", "profile": "default"}, format="json")
        finally:
            connection.close()

    with ThreadPoolExecutor(len(clients)) as pool:
        answers = list(pool.map(run, clients))
    assert [a.status_code for a in answers] == [202] * 6, [a.content[:200] for a in answers]
    conditions = sorted(a.json()["status"]["condition"] for a in answers)
    assert conditions == ["queued"] * 4 + ["starting"] * 2
    assert Workload.objects.filter(kind="stream", deleted_at__isnull=True).count() == 2
    places = sorted(s["queuePosition"] for s in clients[0].get("/streaming/stream").json()["items"]
                    if s["queuePosition"])
    assert places == [1, 2, 3, 4]
