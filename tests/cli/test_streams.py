"""exec, attach and port-forward through PaaS Studio, end to end: the `studio` command (a separate process) talks to
the ASGI application served by uvicorn (config/asgi.py: Django for HTTP, the WebSocket relay for the sessions),
which relays to kubesim's pods/exec and pods/portforward (a local process, a local HTTP server standing in for the
workspace's port). A member's whole session is the transcript in docs/ (STUDIO_REFRESH_DOCS=1 writes
docs/cli-transcript.md); a viewer and a member of another project are refused; each session is audited without
its content."""

from __future__ import annotations

import http.server
import json
import signal
import socket
import subprocess
import threading

import pytest

from studio.audit import AuditEvent
from studio.iam.models import Level
from studio.models import AccessKey
from tests import docs_output
from tests.cli.support import Cli
from tests.factories import MembershipFactory, ProjectFactory, UserFactory
from tests.workloads.cluster_support import wait_for
from workloads import tasks

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

GREETING = b"hello from the workspace's port 8888\n"


@pytest.fixture
def container_port(sim_org):
    """A local HTTP server standing in for port 8888 of the project's pods (kubesim's port-forward target)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(GREETING)))
            self.end_headers()
            self.wfile.write(GREETING)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sim_org.sim.forward_port(8888, server.server_address[1], namespace=sim_org.namespace)
    yield server
    sim_org.sim.runtime.forwards.pop((sim_org.namespace, None, 8888), None)
    server.shutdown()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def login(server, tmp_path, user, cli: Cli | None = None) -> Cli:
    runner = cli or Cli(home=tmp_path / user.username)
    runner.home.mkdir(exist_ok=True)
    key, secret = AccessKey.issue(user=user, name="laptop")
    result = runner("login", "--url", server.url, "--client-id", key.client_id, env={"STUDIO_CLIENT_SECRET": secret},
                    shown=f"STUDIO_CLIENT_SECRET=… studio login --url {server.url} --client-id {key.client_id}")
    assert result.code == 0, result
    return runner


def test_a_member_execs_and_forwards_a_port_others_are_refused(asgi_server, worker, sim_org, container_port,
                                                               tmp_path):
    project = sim_org.project.name
    cli = login(asgi_server, tmp_path, sim_org.user)
    assert cli("config", "project", project).code == 0
    preview = cli("workspace", "submit", "lab", "-i", "jupyter/base-notebook", "--gpu-portion-request", "0.5",
                  "--dry-run")
    assert preview.code == 0 and "nothing was created" in preview.out, preview
    submitted = cli("workspace", "submit", "lab", "-i", "jupyter/base-notebook", "--gpu-portion-request", "0.5")
    assert submitted.code == 0, submitted

    def sync():
        tasks.cluster_sync.apply(args=[str(sim_org.cluster.pk)])

    def phase():
        return cli("workspace", "describe", "lab", "-o", "json", record=False).json()["phase"]

    wait_for(lambda: phase() == "Running", step=sync, timeout=60, what="the workspace running")
    wait_for(lambda: cli("workspace", "logs", "lab", record=False).out.count("\n") >= 2, what="a few lines of log")
    followed = cli("workspace", "logs", "lab", "-f", "--tail", "2")
    assert followed.code == 0 and len(followed.out.splitlines()) == 2, followed

    # exec: the command runs in the pod's stand-in (kubesim: a folder of its own), its output and exit code ours.
    listing = cli("workspace", "exec", "lab", "--", "ls", "/")
    assert listing.code == 0, listing
    assert listing.out.split() == ["etc", "home", "tmp", "workspace"], listing
    hostname = cli("workspace", "exec", "lab", "--", "cat", "/etc/hostname")
    pod = hostname.out.strip()
    assert hostname.code == 0 and pod.startswith("lab-"), hostname
    failed = cli("workspace", "exec", "lab", "--", "ls", "/nosuch")
    assert failed.code == 2 and "No such file" in failed.err, failed
    typed = cli("workspace", "exec", "lab", "-i", "--", "cat", record=False)
    assert typed.code == 0 and typed.out == "", typed  # stdin: our (empty) input, closed at its end

    # port-forward: a local listener; each connection is a session to the pod's port 8888 (here: a local server)
    local = free_port()
    forward = cli.popen("workspace", "port-forward", "lab", "--port", f"{local}:8888")
    try:
        first = forward.stdout.readline()
        assert first.strip() == f"Forwarding from 127.0.0.1:{local} -> 8888", (first, forward.stderr.read())
        cli.transcript += [f"$ studio workspace port-forward lab --port {local}:8888 &", first.rstrip()]
        for _ in range(2):  # the listener serves one connection after another
            curl = subprocess.run(["curl", "-sS", f"http://127.0.0.1:{local}/"], capture_output=True, timeout=30)
            assert curl.returncode == 0 and curl.stdout == GREETING, curl
        cli.transcript += [f"$ curl -sS http://127.0.0.1:{local}/", GREETING.decode().rstrip()]
    finally:
        forward.send_signal(signal.SIGINT)  # Ctrl-C ends it
        try:
            forward.wait(timeout=30)
        except subprocess.TimeoutExpired:  # seen once in a full run (passed alone): say where it waits
            forward.send_signal(signal.SIGABRT)
            forward.wait(timeout=10)
            stacks = forward.stderr.read()
            raise AssertionError(f"port-forward still running 30 s after Ctrl-C; its threads: {stacks}") from None
    cli.transcript += ["$ kill -INT %1"]
    assert forward.returncode == 0, forward.stderr.read()

    # Refused: a viewer of the project (a role that may not: 4), a member of another project (not found: 3).
    viewer = UserFactory(username=f"viewer-{project}")
    MembershipFactory(user=viewer, project=sim_org.project, role=Level.VIEWER)
    as_viewer = login(asgi_server, tmp_path, viewer, Cli(home=tmp_path / "viewer", transcript=cli.transcript))
    refused = as_viewer("workspace", "exec", "lab", "-p", project, "--", "ls", "/")
    assert refused.code == 4 and "Viewers may not exec" in refused.err, refused
    other_project = ProjectFactory(name=f"o{project[1:]}", cluster=sim_org.cluster)
    stranger = UserFactory(username=f"member-{other_project.name}")
    MembershipFactory(user=stranger, project=other_project, role=Level.MEMBER)
    as_stranger = login(asgi_server, tmp_path, stranger, Cli(home=tmp_path / "stranger", transcript=cli.transcript))
    workload_id = cli("workspace", "describe", "lab", "-o", "json", record=False).json()["id"]
    hidden = as_stranger("workspace", "exec", workload_id, "-p", other_project.name, "--", "ls", "/",
                         shown="studio workspace exec <lab's id> -- ls /")
    assert hidden.code == 3, hidden
    direct = as_stranger("workspace", "exec", "lab", "-p", project, "--", "ls", "/", record=False)
    assert direct.code == 3, direct

    # Every session in the audit trail: who, which workload, pod, command or port, start and end, bytes.
    opened = AuditEvent.objects.filter(object_type="workloads.exec", action="create").order_by("at", "id")
    assert [e.changes["command"][1] for e in opened] == [["ls", "/"], ["cat", "/etc/hostname"], ["ls", "/nosuch"],
                                                        ["cat"]]
    assert {e.actor_name for e in opened} == {sim_org.user.username}
    assert all(e.changes["pod"][1] == pod and e.changes["workload"][1] == "lab" for e in opened)
    closed = AuditEvent.objects.filter(object_type="workloads.exec", action="update").order_by("at", "id")
    assert [e.object_id for e in closed] == [e.object_id for e in opened]
    assert closed[0].changes["bytesOut"][1] > len("etc home tmp workspace")
    forwards = AuditEvent.objects.filter(object_type="workloads.portforward")
    assert forwards.filter(action="create").count() == 2 and forwards.filter(action="update").count() == 2
    assert all(e.changes["ports"][1] == [8888] for e in forwards.filter(action="create"))
    assert all(e.changes["bytesOut"][1] >= len(GREETING) for e in forwards.filter(action="update"))
    for event in AuditEvent.objects.filter(object_type__in=["workloads.exec", "workloads.portforward"]):
        text = json.dumps(event.changes)
        assert "hello from" not in text and "home" not in text, text  # what flowed through: never

    assert cli("workspace", "suspend", "lab").code == 0
    wait_for(lambda: phase() == "Stopped", step=sync, timeout=60, what="the workspace stopped")
    stopped = cli("workspace", "exec", "lab", "--", "ls", "/")
    assert stopped.code == 1 and "no running pod" in stopped.err, stopped
    assert cli("workspace", "delete", "lab").code == 0

    text = "\n".join(cli.transcript) + "\n"
    assert "STUDIO_CLIENT_SECRET=…" in text
    (docs_output.folder() / "cli-transcript.md").write_text(
        "# A researcher's terminal session\n\nRecorded by `tests/cli/test_streams.py` against a live server "
        "(uvicorn, config/asgi.py), a Celery worker and kubesim (`STUDIO_REFRESH_DOCS=1` rewrites it).\n\n"
        "```text\n" + text + "```\n")


def test_a_missing_workload_and_bad_flags_are_answered_with_their_exit_codes(asgi_server, sim_org, tmp_path):
    cli = login(asgi_server, tmp_path, sim_org.user)
    missing = cli("workspace", "exec", "nosuch", "-p", sim_org.project.name, "--", "ls")
    assert missing.code == 3 and "not found" in missing.err, missing
    for flags in (["--port", "a:b"], ["--port", "8888:0"], []):
        usage = cli("workspace", "port-forward", "nosuch", "-p", sim_org.project.name, *flags)
        assert usage.code == 2, usage
    assert cli("workspace", "exec", "nosuch", "-p", sim_org.project.name).code == 2  # no command
    logged_out = Cli(home=tmp_path / "nobody")
    assert logged_out("workspace", "exec", "lab", "-p", "x", "--", "ls").code == 4
