"""Pod logs through the workloads API: the API -> studio.clusters.kube -> the cluster's pods/log over HTTP (kubesim's
kubelet here; the real API server in tests/real). Who may read, the query, and every refusal as JSON."""

import pytest

from studio.models import Level
from tests.conftest import bearer_client
from tests.factories import MembershipFactory, UserFactory
from tests.workloads.cluster_support import run_seconds, training_body, wait_for
from workloads import tasks

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def running_pod(org, name: str, **spec) -> tuple[str, dict]:
    body = training_body(org.project, name, annotations=run_seconds(600), **spec)
    response = org.api.post("/api/v1/workloads/trainings", body, format="json")
    assert response.status_code == 200, response.json()
    workload_id = response.json()["workloadId"]

    def pod():
        tasks.cluster_sync.apply(args=[str(org.cluster.pk)])
        pods = org.api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]
        return pods[0] if pods and (pods[0]["phase"] == "Running" or spec) else None

    return workload_id, wait_for(pod, what="the training's pod")


def test_a_member_reads_the_log_its_tail_and_a_follow_stream(worker, sim_org):
    workload_id, pod = running_pod(sim_org, "logged")
    url = f"/api/v1/workloads/{workload_id}/pods/{pod['id']}/logs"
    wait_for(lambda: sim_org.api.get(url).content.count(b"\n") >= 3, what="a few lines of log")

    whole = sim_org.api.get(url)
    assert whole.status_code == 200 and whole["Content-Type"] == "text/plain; charset=utf-8"
    lines = whole.content.decode().splitlines()
    assert lines[0].startswith("kubesim: container ") and "started from image" in lines[0]

    tail = sim_org.api.get(url + "?tailLines=1")
    assert tail.status_code == 200 and len(tail.content.decode().splitlines()) == 1
    assert sim_org.api.get(url + "?tail=2").content.decode().count("\n") == 2  # kubectl's short name
    by_name = sim_org.api.get(f"/api/v1/workloads/{workload_id}/pods/{pod['name']}/logs?tailLines=1")
    assert by_name.status_code == 200

    followed = sim_org.api.get(url + "?follow=true&tailLines=2&sinceSeconds=3600")
    assert followed.status_code == 200 and followed.streaming
    assert b"".join(followed.streaming_content).decode().count("\n") >= 1


def test_every_role_of_the_project_reads_logs_another_projects_member_gets_404(worker, sim_org):
    """As on Run:ai: a role's View on the workload covers its logs (teammates and viewers read them); a user of
    another project does not see the workload at all."""
    from django.test import Client
    from django.urls import reverse

    from tests.factories import ProjectFactory

    workload_id, pod = running_pod(sim_org, "shared")
    url = f"/api/v1/workloads/{workload_id}/pods/{pod['id']}/logs"
    wait_for(lambda: sim_org.api.get(url).content.count(b"\n") >= 1, what="a line of log")
    users = {role: UserFactory(username=f"logs-{role}") for role in ("viewer", "member", "admin", "outsider")}
    for role in ("viewer", "member", "admin"):
        MembershipFactory(user=users[role], project=sim_org.project, role=getattr(Level, role.upper()))
    MembershipFactory(user=users["outsider"], project=ProjectFactory(name="elsewhere", cluster=sim_org.cluster),
                      role=Level.ADMIN)

    assert sim_org.api.get(url).status_code == 200  # the submitter
    for role in ("viewer", "member", "admin"):
        read = bearer_client(users[role]).get(url)
        assert read.status_code == 200 and b"kubesim: container " in read.content, role
    assert bearer_client(UserFactory(username="logs-root", platform_admin=True)).get(url).status_code == 200
    refused = bearer_client(users["outsider"]).get(url)
    assert refused.status_code == 404 and refused.json()["code"] == 404
    missing = sim_org.api.get(f"/api/v1/workloads/{workload_id}/pods/no-such-pod/logs")
    assert missing.status_code == 404 and missing.json()["code"] == 404

    page = reverse("workload-logs", args=[workload_id])
    portal = Client()
    for role in ("viewer", "member"):  # the portal's panel, as the API
        portal.force_login(users[role])
        read = portal.get(page, {"pod": pod["name"], "tailLines": "5"})
        assert read.status_code == 200 and "X-Log-Problem" not in read and b"kubesim: container " in read.content
    portal.force_login(users["outsider"])
    assert portal.get(page, {"pod": pod["name"]}).status_code == 404
    assert portal.get(reverse("workload-detail", args=[workload_id])).status_code == 404


def test_the_last_lines_are_kept_after_a_suspend_and_shown_once_the_pod_is_gone(worker, sim_org):
    import re

    from django.test import Client
    from django.urls import reverse

    from workloads.models import PodLogCapture

    workload_id, pod = running_pod(sim_org, "kept")
    url = f"/api/v1/workloads/{workload_id}/pods/{pod['id']}/logs"
    wait_for(lambda: sim_org.api.get(url).content.count(b"\n") >= 2, what="a few lines of log")
    live = sim_org.api.get(url).content.decode().splitlines()
    assert sim_org.api.post(f"/api/v1/workloads/trainings/{workload_id}/suspend").status_code == 202

    def gone():
        tasks.cluster_sync.apply(args=[str(sim_org.cluster.pk)])
        return not sim_org.api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]

    wait_for(gone, what="the suspended training's pods to be gone")
    capture = PodLogCapture.objects.get(workload_id=workload_id)
    assert (capture.pod_name, capture.reason) == (pod["name"], "Suspended")

    teammate = UserFactory(username="kept-teammate")
    MembershipFactory(user=teammate, project=sim_org.project, role=Level.MEMBER)
    portal = Client()
    portal.force_login(teammate)
    detail = portal.get(reverse("workload-detail", args=[workload_id])).content.decode()
    assert f'<option value="{pod["name"]}" data-phase="Captured">{pod["name"]} (gone: last lines kept)</option>' in detail
    page = reverse("workload-logs", args=[workload_id])
    kept = portal.get(page, {"pod": pod["name"], "tailLines": "500"})
    assert kept.status_code == 200 and "X-Log-Problem" not in kept
    assert kept["X-Log-Note"].startswith("The pod is gone: these are the last lines of its log, captured at ")
    assert kept["X-Log-Note"].endswith("when the workload was suspended.")
    assert kept["X-Log-Captured-At"] == capture.captured_at.isoformat()
    lines = kept.content.decode().splitlines()
    assert lines[: len(live)] == live  # the lines it had written, without their times unless asked
    stamped = portal.get(page, {"pod": pod["name"], "tailLines": "1", "timestamps": "true", "download": "true"})
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z kubesim: ", stamped.content.decode())
    assert stamped.content.decode().count("\n") == 1
    assert stamped["Content-Disposition"] == f'attachment; filename="{pod["name"]}.log"'
    previous = portal.get(page, {"pod": pod["name"], "previous": "true"})
    assert previous["X-Log-Problem"] == "1" and b"only the last lines of its last container" in previous.content
    never = portal.get(page, {"pod": "never-was"})
    assert never["X-Log-Problem"] == "1" and b"no lines of it were kept" in never.content

    outsider = UserFactory(username="kept-outsider")
    from tests.factories import ProjectFactory
    MembershipFactory(user=outsider, project=ProjectFactory(name="kept-other", cluster=sim_org.cluster),
                      role=Level.MEMBER)
    portal.force_login(outsider)
    assert portal.get(page, {"pod": pod["name"]}).status_code == 404

    assert sim_org.api.delete(f"/api/v1/workloads/trainings/{workload_id}").status_code == 204
    wait_for(lambda: not PodLogCapture.objects.filter(workload_id=workload_id).exists(),
             what="the kept lines to go with the deleted workload", timeout=30)


def test_bad_queries_are_400_naming_each_parameter(worker, sim_org):
    workload_id, pod = running_pod(sim_org, "queried")
    url = f"/api/v1/workloads/{workload_id}/pods/{pod['id']}/logs"
    response = sim_org.api.get(url + "?tailLines=-1&sinceSeconds=abc&container=Not_A_Name&follow=maybe&x=1")
    assert response.status_code == 400
    fields = {e["field"] for e in response.json()["errors"]}
    assert fields == {"x"}  # unknown parameters first: a typo must not be silently ignored
    response = sim_org.api.get(url + "?tailLines=-1&sinceSeconds=abc&container=Not_A_Name&follow=maybe")
    assert {e["field"] for e in response.json()["errors"]} == {"tailLines", "sinceSeconds", "container", "follow"}
    wrong = sim_org.api.get(url + "?container=sidecar")
    assert wrong.status_code == 400, wrong.content
    assert "sidecar" in wrong.json()["details"] and wrong["Content-Type"] == "application/json"


def test_a_pod_that_has_not_started_answers_409_saying_why(worker, sim_org):
    workload_id, pod = running_pod(sim_org, "waiting", compute={"gpuDevicesRequest": 16})
    response = sim_org.api.get(f"/api/v1/workloads/{workload_id}/pods/{pod['id']}/logs")
    assert response.status_code == 409, response.content
    assert response.json()["message"].startswith("No log available yet:")


def test_timestamps_previous_container_and_the_portals_download(worker, sim_org):
    import re

    from django.test import Client
    from django.urls import reverse

    workload_id, pod = running_pod(sim_org, "stamped")
    url = f"/api/v1/workloads/{workload_id}/pods/{pod['id']}/logs"
    wait_for(lambda: sim_org.api.get(url).content.count(b"\n") >= 2, what="a few lines of log")
    stamped = sim_org.api.get(url + "?timestamps=true&tailLines=2").content.decode().splitlines()
    assert len(stamped) == 2
    assert all(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z kubesim: ", line) for line in stamped), stamped
    # a container that never restarted has no previous log: a 409 (a state, not a bad request) in the kubelet's words
    previous = sim_org.api.get(url + "?previous=true")
    assert previous.status_code == 409 and "No log of a previous container" in previous.json()["message"]
    assert sim_org.api.get(url + "?timestamps=sometimes").json()["errors"][0]["field"] == "timestamps"

    portal = Client()
    portal.force_login(sim_org.user)
    page = reverse("workload-logs", args=[workload_id])
    downloaded = portal.get(page, {"pod": pod["name"], "tailLines": "2", "timestamps": "true", "download": "true"})
    assert downloaded["Content-Disposition"] == f'attachment; filename="{pod["name"]}.log"'
    assert downloaded.content.decode().count("\n") == 2 and downloaded.content[:2] == b"20"
    refused = portal.get(page, {"pod": pod["name"], "previous": "true"})
    assert refused["X-Log-Problem"] == "1" and b"previous terminated container" in refused.content


def test_a_finished_trainings_last_lines_are_kept(worker, sim_org):
    from workloads.models import PodLogCapture

    body = training_body(sim_org.project, "short", annotations=run_seconds(3))
    response = sim_org.api.post("/api/v1/workloads/trainings", body, format="json")
    workload_id = response.json()["workloadId"]

    def kept():
        tasks.cluster_sync.apply(args=[str(sim_org.cluster.pk)])  # the sync sees it complete, the worker reads
        return PodLogCapture.objects.filter(workload_id=workload_id).first()

    capture = wait_for(kept, what="the completed training's kept log")
    assert capture.reason == "Completed" and "kubesim: container " in capture.text
