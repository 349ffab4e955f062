"""NVIDIA's web-viewer-sample's request sequence (scripts/kit_client_sequence.js, written from its source), run in
Chromium from a page on an origin of its own — so the browser enforces CORS and sends its preflights — against the
live server, through a client URL made in the portal, with kubesim bringing the stream up (a real Celery worker
pushes it, sync rounds see it run): the catalogue, create (202), polling (202 until ready, then 200), the routes
(signaling over TCP, media over UDP), and the end (DELETE by body, 204) that removes the stream's objects."""

import re

import pytest
from kubernetes import client as k8s

from kit.models import StreamSession
from scripts.kit_client_check import client_origin, run_sequence, transcript_lines
from tests.factories import ApplicationFactory, ApplicationProfileFactory, ApplicationVersionFactory
from tests.workloads.cluster_support import wait_for
from workloads import manifests, tasks
from workloads.models import Workload

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def _objects(org, session_id):
    selector = f"{manifests.WORKLOAD_ID_LABEL}={session_id}"
    return (k8s.AppsV1Api(org.k8s).list_namespaced_deployment(org.namespace, label_selector=selector).items
            + k8s.CoreV1Api(org.k8s).list_namespaced_service(org.namespace, label_selector=selector).items)


def test_the_web_viewer_samples_sequence_streams_through_a_client_url(browser, open_session, settings, worker,
                                                                      sim_org, capsys):
    app = ApplicationFactory(id="usd-viewer", name="USD Viewer")
    ApplicationVersionFactory(application=app, version="1.0.0", container="nvcr.io/nvidia/omniverse/usd-viewer",
                              container_version="1.0.0")
    ApplicationProfileFactory(slug="l40s", name="L40S", owner_project=sim_org.project,
                              supported_applications=[{"name": "*", "versions": ["*"]}])
    portal = open_session(sim_org.user.username)
    portal.page.goto("/kit/sessions")
    portal.page.get_by_label("Name").fill("web viewer")
    portal.page.get_by_role("button", name="Make a client URL").click()
    base = portal.page.locator("[data-secret]").inner_text().strip()
    assert re.fullmatch(r"http://localhost:\d+/kit-client/kcu_[A-Za-z0-9_-]{43}", base), base

    def sync():
        tasks.cluster_sync.apply(args=[str(sim_org.cluster.pk)])

    with client_origin() as origin:
        settings.CORS_ALLOWED_ORIGINS = [origin]
        context = browser.new_context()  # no cookie of the portal: the client URL is the only credential
        page = context.new_page()

        def step():  # the cluster moves on once the client has polled a starting session (a 202) twice
            if page.evaluate("window.kitClient.transcript.filter(e => e.status === 202).length") >= 3:
                sync()

        try:
            result = run_sequence(page, origin, base, step=step, timeout=120)
        finally:
            context.close()
    lines = transcript_lines(result)
    with capsys.disabled():
        print("\nweb-viewer-sample sequence through a client URL:\n  " + "\n  ".join(lines))
    assert result["state"] == "ended", (result["error"], lines)

    calls = [(e["method"], re.sub(r".*/kit-client/kcu_\[redacted\]", "", e["url"]), e["status"])
             for e in result["transcript"]]
    session_id = result["stream"]["sessionId"]
    polls = [c for c in calls[6:] if c[:2] == ("GET", f"/streaming/stream/{session_id}")]
    assert calls[:6] == [
        ("GET", "/cfg/apps", 200), ("GET", "/streaming/stream", 200),  # the Server Information form's checks
        ("GET", "/cfg/apps", 200), ("GET", "/cfg/apps/usd-viewer/versions", 200),
        ("GET", "/cfg/apps/usd-viewer/versions/1.0.0/profiles", 200),
        ("POST", "/streaming/stream", 202),
    ]
    assert polls[0][2] == 202 and [c[2] for c in polls[:-1]].count(200) == 1  # 202 until ready, then 200
    assert calls[-1] == ("DELETE", "/streaming/stream", 204)
    created = result["transcript"][5]
    assert created["body"] == {"id": "usd-viewer", "version": "1.0.0", "profile": "l40s"}
    assert created["data"]["projectChosenBy"] == "clientUrl" and created["data"]["projectId"] == sim_org.project.pk

    stream = result["stream"]
    service = k8s.CoreV1Api(sim_org.k8s).list_namespaced_service(
        sim_org.namespace, label_selector=f"{manifests.WORKLOAD_ID_LABEL}={session_id}").items
    assert stream["signalingServer"] == stream["mediaServer"]
    assert (stream["signalingPort"], stream["mediaPort"], stream["mediaProtocol"]) == (49100, 47998, "UDP")
    assert StreamSession.objects.get(pk=session_id).client_url.name == "web viewer"
    assert Workload.objects.get(pk=session_id).desired_phase == "Deleted"
    wait_for(lambda: not _objects(sim_org, session_id), step=sync, timeout=60,
             what="the stream's Deployment and Service to be gone")
    assert not service or service[0].status.load_balancer.ingress[0].ip == stream["signalingServer"]
