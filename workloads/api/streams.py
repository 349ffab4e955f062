"""Sessions into a running workload's containers over WebSocket — exec, attach and port-forward — relayed to the
cluster's pods/exec, pods/attach and pods/portforward (the Kubernetes channel protocols, frames unchanged).

    GET /api/v1/workloads/{workloadId}/exec?command=ls&command=/&container=&pod=&stdin=&stdout=&stderr=&tty=
    GET /api/v1/workloads/{workloadId}/attach?container=&pod=&stdin=&stdout=&stderr=&tty=
    GET /api/v1/workloads/{workloadId}/portforward?port=8888&pod=

An ASGI application (config/asgi.py routes WebSocket requests here; HTTP goes to Django). Subprotocols: exec and
attach `v5.channel.k8s.io` or `v4.channel.k8s.io`; port-forward `v4.channel.k8s.io` (or `portforward.k8s.io`, the
same framing). Credentials: `Authorization: Bearer <token>` (the API's tokens), or the portal's session cookie
with a same-origin `Origin` (a browser cannot set headers; the Origin check keeps other sites from riding the
cookie). The session is accepted, then refused with a close code and a JSON reason when it may not go on:
4400 bad parameters, 4401 not authenticated, 4403 a role that may not (viewers), 4404 not visible, 4409 no running
pod (or the pod/container is not running), 4502 the cluster refused or could not be reached. Each session is in
the audit trail (record_open, record_close): who, what, when, bytes — never the content."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from dataclasses import dataclass
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, urlsplit

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from studio import audit
from studio.clusters import kube
from studio.iam.models import Level
from studio.iam.permissions import has_project_role
from workloads.models import Workload

PATH = re.compile(r"^/api/v1/workloads/(?P<workload>[^/]+)/(?P<kind>exec|attach|portforward)/?$")
CHANNEL_PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
FORWARD_PROTOCOLS = ("v4.channel.k8s.io", "portforward.k8s.io")
CONTAINER = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
TRUE, FALSE = ("true", "1", "yes"), ("false", "0", "no", "")
MAX_COMMAND_WORDS, MAX_COMMAND_CHARS, MAX_PORTS = 256, 16_384, 8
RUNNING_POD = "Running"


class Refused(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code, self.message = code, message

    def reason(self) -> str:
        """The close frame's reason: JSON `{"code", "message"}` within the 123 bytes a close frame allows."""
        http = self.code - 4000 if 4000 <= self.code < 4600 else 500
        message = self.message
        while True:
            text = json.dumps({"code": http, "message": message})
            if len(text.encode()) <= 123:
                return text
            message = message[: max(0, len(message) - max(4, len(text.encode()) - 123))].rstrip() + "…"


@dataclass
class Session:
    kind: str
    user: object
    workload: Workload
    pod: str
    container: str
    query: list[tuple[str, str]]
    command: list[str] | None
    ports: list[int] | None
    tty: bool
    endpoint: kube.StreamEndpoint
    namespace: str
    headers: dict  # the credentials it opened with, checked again while it lasts (`still_allowed`)
    scheme: str


# --- the request: parameters, credentials, authorization (synchronous: the database) -----------------------

def parse_query(kind: str, raw: str) -> dict:
    values = parse_qs(raw, keep_blank_values=True)
    problems = []
    allowed = {"exec": {"command", "container", "pod", "stdin", "stdout", "stderr", "tty"},
               "attach": {"container", "pod", "stdin", "stdout", "stderr", "tty"},
               "portforward": {"port", "ports", "pod"}}[kind]
    unknown = sorted(set(values) - allowed)
    if unknown:
        problems.append(f"unknown parameter {', '.join(unknown)}")

    def one(name: str) -> str:
        given = values.get(name) or [""]
        if len(given) > 1:
            problems.append(f"{name} given more than once")
        return given[0]

    parsed = {"pod": one("pod")}
    if kind == "portforward":
        ports = [p for v in values.get("port", []) + values.get("ports", []) for p in v.split(",") if p != ""]
        if not ports:
            problems.append("port is required")
        numbers = []
        for port in ports:
            if not port.isdigit() or not 1 <= int(port) <= 65535:
                problems.append(f"port {port[:10]!r} is not a port number (1-65535)")
            else:
                numbers.append(int(port))
        if len(numbers) > MAX_PORTS:
            problems.append(f"at most {MAX_PORTS} ports")
        parsed["ports"] = numbers
    else:
        container = one("container")
        if container and (len(container) > 63 or not CONTAINER.match(container)):
            problems.append("container must be a container name")
        parsed["container"] = container
        for flag, default in (("stdin", False), ("stdout", True), ("stderr", True), ("tty", False)):
            value = one(flag).lower()
            if flag not in values:
                parsed[flag] = default
            elif value in TRUE or value in FALSE:
                parsed[flag] = value in TRUE
            else:
                problems.append(f"{flag} must be true or false")
        if kind == "exec":
            command = values.get("command", [])
            if not command or not command[0]:
                problems.append("command is required")
            elif len(command) > MAX_COMMAND_WORDS or sum(len(c) for c in command) > MAX_COMMAND_CHARS:
                problems.append("command is too long")
            parsed["command"] = command
        if parsed.get("tty") and parsed.get("stderr"):
            parsed["stderr"] = False  # a terminal has one output stream (kubectl sends the same)
    if problems:
        raise Refused(4400, "; ".join(problems))
    return parsed


def _headers(scope) -> dict:
    headers = {}
    for name, value in scope.get("headers", []):
        headers.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
    return headers


def _same_origin(origin: str, host: str, scheme: str) -> bool:
    if origin in settings.CSRF_TRUSTED_ORIGINS:
        return True
    parts = urlsplit(origin)
    expected = "https" if scheme in ("wss", "https") else "http"
    return parts.scheme in ("http", "https") and parts.netloc == host and (
        parts.scheme == expected or settings.SECURE_PROXY_SSL_HEADER is not None)


def authenticate(headers: dict, scheme: str):
    """The user of the bearer token, or of the session cookie when the Origin is this site's; else Refused 4401."""
    from django.contrib.auth import get_user
    from django.http import HttpRequest

    from studio.iam.auth import BearerTokenAuthentication
    from studio.iam.passwords import SESSION_KEY as TEMPORARY

    authorization = headers.get("authorization", "")
    if authorization:
        request = HttpRequest()
        request.META["HTTP_AUTHORIZATION"] = authorization
        backend = BearerTokenAuthentication()
        try:
            found = backend.authenticate(request)
        except Exception as exc:  # DRF's AuthenticationFailed and the temporary password's refusal
            raise Refused(4401, f"Not authenticated: {getattr(exc, 'detail', 'the token was refused')}") from exc
        if found is None:
            raise Refused(4401, "Not authenticated: send Authorization: Bearer <token>.")
        return found[0]
    cookie = SimpleCookie()
    try:
        cookie.load(headers.get("cookie", ""))
    except Exception:  # a malformed Cookie header is no session
        cookie = SimpleCookie()
    morsel = cookie.get(settings.SESSION_COOKIE_NAME)
    if morsel is None:
        raise Refused(4401, "Not authenticated: send Authorization: Bearer <token>, or the portal's session.")
    if not _same_origin(headers.get("origin", ""), headers.get("host", ""), scheme):
        raise Refused(4401, "Not authenticated: the portal's session is accepted from the portal's own pages only.")
    from importlib import import_module

    request = HttpRequest()
    request.session = import_module(settings.SESSION_ENGINE).SessionStore(morsel.value)
    user = get_user(request)
    if not user.is_authenticated:
        raise Refused(4401, "Not authenticated: the session has ended; log in again.")
    if request.session.get(TEMPORARY):
        raise Refused(4403, "Change your temporary password first.")
    return user


def may_open_session(*, user, workload: Workload) -> bool:
    """Members and admins of the workload's project (and platform admins); viewers may not."""
    return has_project_role(user, workload.project, Level.MEMBER)


def session_for(*, kind: str, workload_id: str, query: str, headers: dict, scheme: str) -> Session:
    close_old_connections()
    try:
        parsed = parse_query(kind, query)
        user = authenticate(headers, scheme)
        try:
            uuid.UUID(workload_id)
        except ValueError:
            raise Refused(4404, "Workload not found.") from None
        workload = (Workload.objects.visible_to(user).live().select_related("project", "cluster")
                    .filter(pk=workload_id).first())
        if workload is None:
            raise Refused(4404, "Workload not found.")
        if not may_open_session(user=user, workload=workload):
            raise Refused(4403, f"Viewers may not exec, attach or port-forward in project {workload.project.name}.")
        pods = list(workload.pods.order_by("created_at", "name", "pk"))
        if parsed["pod"]:
            chosen = next((p for p in pods if parsed["pod"] in (p.name, p.uid)), None)
            if chosen is None:
                raise Refused(4404, f"Pod {parsed['pod'][:60]} not found in this workload.")
            if chosen.phase != RUNNING_POD:
                raise Refused(4409, f"Pod {chosen.name} is {chosen.phase or 'not running'}, not Running.")
        else:
            chosen = next((p for p in pods if p.phase == RUNNING_POD), None)
            if chosen is None:
                raise Refused(4409, f"The workload has no running pod (phase {workload.actual_phase}).")
        try:
            endpoint = kube.stream_endpoint(workload.cluster)
        except kube.ClusterError as exc:
            raise Refused(4502, exc.message) from exc
        if kind == "portforward":
            upstream = [("ports", str(p)) for p in parsed["ports"]]
        else:
            upstream = [("command", c) for c in parsed.get("command", [])]
            if parsed["container"]:
                upstream.append(("container", parsed["container"]))
            upstream += [(f, "true" if parsed[f] else "false") for f in ("stdin", "stdout", "stderr", "tty")]
        return Session(kind=kind, user=user, workload=workload, pod=chosen.name,
                       container=parsed.get("container", ""), query=upstream, command=parsed.get("command"),
                       ports=parsed.get("ports"), tty=bool(parsed.get("tty")), endpoint=endpoint,
                       namespace=workload.project.namespace, headers=headers, scheme=scheme)
    finally:
        close_old_connections()


def still_allowed(session: Session) -> Refused | None:
    """None while the session's credentials still name its user and that user may still open it; else why not
    (an expired token or ended portal session, a membership removed or lowered, the workload deleted)."""
    close_old_connections()
    try:
        user = authenticate(session.headers, session.scheme)
        if user.pk != session.user.pk:
            return Refused(4401, "Not authenticated: the credentials now name another user.")
        workload = (Workload.objects.visible_to(user).live().select_related("project")
                    .filter(pk=session.workload.pk).first())
        if workload is None:
            return Refused(4404, "Workload not found.")
        if not may_open_session(user=user, workload=workload):
            return Refused(4403, f"Viewers may not exec, attach or port-forward in project {workload.project.name}.")
        return None
    except Refused as refusal:
        return refusal
    finally:
        close_old_connections()


# Each session is two rows of the audit trail, one object id per session: "create" when it opens (who, what,
# where) and "update" when it ends (when, how, bytes each way: `bytesIn` from the caller, `bytesOut` to it).
# What flows through it never is.
AUDIT_TYPES = {"exec": "workloads.exec", "attach": "workloads.attach", "portforward": "workloads.portforward"}


def record_open(session: Session, session_id: str) -> None:
    close_old_connections()
    values = {"workloadId": str(session.workload.pk), "workload": session.workload.name,
              "project": session.workload.project.name, "pod": session.pod, "container": session.container,
              "startedAt": timezone.now().isoformat()}
    if session.command is not None:
        values.update(command=list(session.command), tty=session.tty)
    if session.ports is not None:
        values["ports"] = list(session.ports)
    audit.audit_values_record(actor=session.user, action=audit.AuditEvent.Action.CREATE,
                              object_type=AUDIT_TYPES[session.kind], object_id=session_id,
                              object_repr=f"{session.workload.name}/{session.pod}", values=values)
    close_old_connections()


def record_close(session: Session, session_id: str, *, bytes_in: int, bytes_out: int, close_code) -> None:
    close_old_connections()
    audit.audit_values_record(actor=session.user, action=audit.AuditEvent.Action.UPDATE,
                              object_type=AUDIT_TYPES[session.kind], object_id=session_id,
                              object_repr=f"{session.workload.name}/{session.pod}",
                              values={"endedAt": timezone.now().isoformat(), "bytesIn": bytes_in,
                                      "bytesOut": bytes_out, "closeCode": close_code})
    close_old_connections()


# --- the ASGI side ----------------------------------------------------------------------------------------

async def refuse(send, receive, refusal: Refused, subprotocol: str | None) -> None:
    """Accept, then close with the refusal's code: a browser sees a close code, never an HTTP status."""
    await send({"type": "websocket.accept", "subprotocol": subprotocol})
    await send({"type": "websocket.close", "code": refusal.code, "reason": refusal.reason()})


async def stream_session(scope, receive, send, kind: str, workload_id: str) -> None:
    message = await receive()
    if message["type"] != "websocket.connect":
        return
    offered = list(scope.get("subprotocols") or [])
    supported = FORWARD_PROTOCOLS if kind == "portforward" else CHANNEL_PROTOCOLS
    acceptable = [p for p in offered if p in supported]
    first = acceptable[0] if acceptable else None
    try:
        if not acceptable:
            raise Refused(4400, f"Offer the subprotocol {' or '.join(supported)}.")
        session = await sync_to_async(session_for)(
            kind=kind, workload_id=workload_id, query=scope.get("query_string", b"").decode("latin-1"),
            headers=_headers(scope), scheme=scope.get("scheme", "ws"))
        upstream_protocols = ["v4.channel.k8s.io"] if kind == "portforward" else acceptable
        try:
            upstream = await kube.open_stream(session.endpoint, session.namespace, session.pod, kind,
                                              session.query, upstream_protocols)
        except kube.StreamRefused as exc:
            code = {404: 4409, 403: 4502, 400: 4409}.get(exc.status, 4502)
            raise Refused(code, f"The cluster refused the {kind}: {exc.message}") from exc
    except Refused as refusal:
        await refuse(send, receive, refusal, first)
        return
    chosen = first if kind == "portforward" else (upstream.subprotocol or first)
    session_id = str(uuid.uuid4())
    await sync_to_async(record_open)(session, session_id)
    await send({"type": "websocket.accept", "subprotocol": chosen})
    counted = {"in": 0, "out": 0}
    close_code = None
    try:
        close_code = await relay(receive, send, upstream, counted, session)
    finally:  # the end is recorded however the session ended
        await sync_to_async(record_close)(session, session_id, bytes_in=counted["in"], bytes_out=counted["out"],
                                          close_code=close_code)


async def relay(receive, send, upstream, counted: dict, session: Session) -> int | None:
    """Frames both ways, unchanged, until either side closes or the session's rights end (`guard`); the close
    code the caller got (or sent)."""
    result = {"code": None}

    async def guard():
        loop = asyncio.get_running_loop()
        ends = loop.time() + settings.STREAM_SESSION_MAX_SECONDS
        while True:
            await asyncio.sleep(max(0.0, min(settings.STREAM_SESSION_RECHECK_SECONDS, ends - loop.time())))
            if loop.time() >= ends:
                refusal = Refused(4408, f"The session reached its longest life "
                                        f"({settings.STREAM_SESSION_MAX_SECONDS:.0f} s); open a new one.")
            else:
                refusal = await sync_to_async(still_allowed)(session)
            if refusal is not None:
                result["code"] = refusal.code
                await send({"type": "websocket.close", "code": refusal.code, "reason": refusal.reason()})
                return

    async def from_client():
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                result["code"] = message.get("code", 1000)
                await upstream.close()
                return
            data = message.get("bytes")
            if data is None and message.get("text") is not None:
                data = message["text"]
            if data is not None:
                counted["in"] += len(data)
                await upstream.send(data)

    async def from_cluster():
        try:
            async for data in upstream:
                counted["out"] += len(data)
                if isinstance(data, bytes):
                    await send({"type": "websocket.send", "bytes": data})
                else:
                    await send({"type": "websocket.send", "text": data})
        except Exception:  # the cluster's side broke off: the session ends as a closed one does
            pass
        close = upstream.protocol.close_rcvd
        code = close.code if close is not None else 1011
        code = code if code in (1000, 1001) or 3000 <= code < 5000 else 1000 if code == 1005 else 1011
        result["code"] = code
        await send({"type": "websocket.close", "code": code,
                    "reason": close.reason if close is not None and code == close.code else ""})

    tasks = [asyncio.ensure_future(from_client()), asyncio.ensure_future(from_cluster()), asyncio.ensure_future(guard())]
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        for task in done:
            task.exception()  # a send on a connection the caller already closed: the session is over either way
    finally:
        await upstream.close()
    return result["code"]


async def not_found(receive, send) -> None:
    message = await receive()
    if message["type"] == "websocket.connect":
        await refuse(send, receive, Refused(4404, "No WebSocket endpoint here."), None)


def route(path: str):
    """(kind, workload id) for a session path, or None."""
    match = PATH.match(path)
    return (match["kind"], match["workload"]) if match else None
