"""The WebSocket sessions of `/api/v1/workloads/{id}/exec|attach|portforward` as any client speaks them (the
`websockets` library, Kubernetes' channel framing) against config.asgi under uvicorn and kubesim: credentials
(a bearer token, or the portal's session cookie from the portal's own origin only), refusals as close codes with
a JSON reason, a terminal's size, attach's output."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest
from django.db import transaction
from django.test import Client
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from studio.audit import AuditEvent
from studio.iam.auth import issue_token
from studio.iam.models import Level
from tests.factories import MembershipFactory, UserFactory
from tests.workloads.cluster_support import make_workload, run_seconds, wait_for
from workloads.cluster import push, sync
from workloads.models import Workload

pytestmark = pytest.mark.django_db(transaction=True)
V5, V4 = "v5.channel.k8s.io", "v4.channel.k8s.io"


@pytest.fixture
def running(sim_org):
    workload = make_workload(sim_org.project, "shell", annotations=run_seconds(600))
    push.workload_push(workload.pk)
    wait_for(lambda: Workload.objects.get(pk=workload.pk).pods.filter(phase="Running").exists(),
             step=lambda: sync.cluster_sync(sim_org.cluster.pk), what="a running pod")
    return Workload.objects.get(pk=workload.pk)


def ws_url(server, workload_id, kind: str, query) -> str:
    query = query if isinstance(query, str) else urlencode(query)
    return server.url.replace("http://", "ws://") + f"/api/v1/workloads/{workload_id}/{kind}?{query}"


def token_of(user) -> str:
    return issue_token(user=user)["accessToken"]


def session(server, workload_id, kind, query, *, token=None, headers=None, protocols=(V5, V4)):
    extra = dict(headers or {})
    if token:
        extra["Authorization"] = f"Bearer {token}"
    return connect(ws_url(server, workload_id, kind, query), additional_headers=extra, subprotocols=list(protocols),
                   open_timeout=20)


def collect(connection) -> tuple[dict, int | None, str]:
    """Every channel's bytes until the server closes; with the close code and reason."""
    channels: dict = {}
    try:
        for message in connection:
            channels[message[0]] = channels.get(message[0], b"") + message[1:]
    except ConnectionClosed:
        pass
    return channels, connection.close_code, connection.close_reason


def refused(server, workload_id, kind="exec", query="command=ls", **options) -> tuple[int, dict]:
    with session(server, workload_id, kind, query, **options) as connection:
        _, code, reason = collect(connection)
    return code, json.loads(reason)


def test_a_member_execs_with_a_bearer_token_and_gets_the_exit_status(asgi_server, running, sim_org):
    with session(asgi_server, running.pk, "exec", "command=ls&command=/", token=token_of(sim_org.user)) as ws:
        assert ws.subprotocol == V5
        channels, code, _ = collect(ws)
    assert channels[1].split() == [b"etc", b"home", b"tmp", b"workspace"] and code == 1000
    assert json.loads(channels[3]) == {"metadata": {}, "status": "Success"}
    with session(asgi_server, running.pk, "exec", [("command", "sh"), ("command", "-c"), ("command", "exit 3")],
                 token=token_of(sim_org.user), protocols=(V4,)) as ws:
        assert ws.subprotocol == V4
        channels, _, _ = collect(ws)
    status = json.loads(channels[3])
    assert status["reason"] == "NonZeroExitCode" and status["details"]["causes"] == [
        {"reason": "ExitCode", "message": "3"}]


def test_a_terminal_takes_its_size_from_resize_frames_and_stdin_from_channel_0(asgi_server, running, sim_org):
    query = [("command", "sh"), ("command", "-c"), ("command", "read line; stty size; echo got $line"),
             ("stdin", "true"), ("tty", "true")]
    with session(asgi_server, running.pk, "exec", query, token=token_of(sim_org.user)) as ws:
        ws.send(bytes([4]) + json.dumps({"Width": 101, "Height": 33}).encode())
        ws.send(bytes([0]) + b"hello\n")
        channels, code, _ = collect(ws)
    output = channels[1].decode()
    assert "33 101" in output and "got hello" in output, output
    assert 2 not in channels  # a terminal has one output stream


def test_attach_follows_what_the_container_writes(asgi_server, running, sim_org):
    with session(asgi_server, running.pk, "attach", "stdout=true", token=token_of(sim_org.user)) as ws:
        first = ws.recv(timeout=20)
    assert first[0] == 1 and b"kubesim: container main started from image python:3.11" in first


def test_the_portal_session_is_accepted_from_the_portal_s_own_origin_only(asgi_server, running, sim_org):
    browser = Client()
    browser.force_login(sim_org.user)
    cookie = f"sessionid={browser.cookies['sessionid'].value}"
    host = asgi_server.url.split("://", 1)[1]
    same = {"Cookie": cookie, "Origin": f"http://{host}"}
    with session(asgi_server, running.pk, "exec", "command=cat&command=/etc/hostname", headers=same) as ws:
        channels, code, _ = collect(ws)
    assert channels[1].decode().startswith("shell-") and code == 1000
    for origin in ({"Origin": "http://evil.example"}, {}):
        code, reason = refused(asgi_server, running.pk, headers={"Cookie": cookie, **origin})
        assert (code, reason["code"]) == (4401, 401), reason


def test_refusals_are_close_codes_with_a_json_reason(asgi_server, running, sim_org):
    member = token_of(sim_org.user)
    assert refused(asgi_server, running.pk)[0] == 4401  # no credentials
    assert refused(asgi_server, running.pk, token="not-a-token")[0] == 4401
    viewer = UserFactory(username=f"viewer-{sim_org.project.name}")
    MembershipFactory(user=viewer, project=sim_org.project, role=Level.VIEWER)
    code, reason = refused(asgi_server, running.pk, token=token_of(viewer))
    assert (code, reason["code"]) == (4403, 403) and "Viewers may not" in reason["message"]
    stranger = UserFactory(username="stranger")
    assert refused(asgi_server, running.pk, token=token_of(stranger))[0] == 4404
    assert refused(asgi_server, "not-a-uuid", token=member)[0] == 4404
    assert refused(asgi_server, "7a0e8f2c-4b6d-4a55-9c1e-2f8a9e0b1c3d", token=member)[0] == 4404
    code, reason = refused(asgi_server, running.pk, query="stdin=maybe", token=member)
    assert code == 4400 and "command is required" in reason["message"] and "stdin must be" in reason["message"]
    assert refused(asgi_server, running.pk, kind="portforward", query="port=99999", token=member)[0] == 4400
    assert refused(asgi_server, running.pk, token=member, protocols=("base64.channel.k8s.io",))[0] == 4400
    assert refused(asgi_server, running.pk, query="command=ls&pod=nosuch", token=member)[0] == 4404
    assert refused(asgi_server, running.pk, query="command=ls&container=nosuch", token=member)[0] == 4409
    stopped = make_workload(sim_org.project, "queued")  # never pushed: no pod
    code, reason = refused(asgi_server, stopped.pk, token=member)
    assert code == 4409 and "no running pod" in reason["message"]


def test_a_session_ends_when_its_user_loses_the_right_to_open_it(asgi_server, running, sim_org, settings):
    """Rights are checked again while a session lasts: a member removed from the project is cut off with the
    refusal a stranger gets (the audit trail records the end), one lowered to viewer with a viewer's, a revoked
    token with an unauthenticated caller's."""
    settings.STREAM_SESSION_RECHECK_SECONDS = 0.3
    member = UserFactory(username=f"leaver-{sim_org.project.name}")
    membership = MembershipFactory(user=member, project=sim_org.project, role=Level.MEMBER)
    with session(asgi_server, running.pk, "attach", "stdout=true", token=token_of(member)) as ws:
        assert ws.recv(timeout=20)[0] == 1  # attached, following the container
        membership.delete()
        _, code, reason = collect(ws)
    assert (code, json.loads(reason)["code"]) == (4404, 404)
    ended = AuditEvent.objects.filter(object_type="workloads.attach", action=AuditEvent.Action.UPDATE)
    wait_for(ended.exists, what="the session's end in the audit trail")  # written once the relay returned
    assert ended.get().changes["closeCode"] == [None, 4404]

    lowered = UserFactory(username=f"lowered-{sim_org.project.name}")
    membership = MembershipFactory(user=lowered, project=sim_org.project, role=Level.MEMBER)
    with session(asgi_server, running.pk, "attach", "stdout=true", token=token_of(lowered)) as ws:
        assert ws.recv(timeout=20)[0] == 1
        with transaction.atomic():  # one change as the guard sees it: member, then viewer
            membership.delete()
            MembershipFactory(user=lowered, project=sim_org.project, role=Level.VIEWER)
        _, code, reason = collect(ws)
    assert (code, json.loads(reason)["code"]) == (4403, 403) and "Viewers may not" in json.loads(reason)["message"]

    token = token_of(sim_org.user)
    with session(asgi_server, running.pk, "attach", "stdout=true", token=token) as ws:
        assert ws.recv(timeout=20)[0] == 1
        assert Client().post("/api/v1/token/revoke", HTTP_AUTHORIZATION=f"Bearer {token}").status_code == 204
        _, code, reason = collect(ws)
    assert (code, json.loads(reason)["code"]) == (4401, 401)


def test_a_session_ends_at_its_longest_life(asgi_server, running, sim_org, settings):
    settings.STREAM_SESSION_MAX_SECONDS = 1.0
    with session(asgi_server, running.pk, "attach", "stdout=true", token=token_of(sim_org.user)) as ws:
        _, code, reason = collect(ws)
    assert (code, json.loads(reason)["code"]) == (4408, 408)
    assert "longest life (1 s)" in json.loads(reason)["message"]
