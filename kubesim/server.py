"""HTTP front of the simulated API server: routing of the Kubernetes REST paths, discovery, bearer-token auth,
faults (outage, latency), Status bodies, chunked watch streams, and the `/_sim` admin and Prometheus endpoints.

A ThreadingHTTPServer speaking HTTP/1.1 with keep-alive: one thread per connection, each request answered with
a single write (headers and body together) and TCP_NODELAY, so small responses do not wait on delayed ACKs.
"""

import json
import logging
import select
import socket
import ssl
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import orjson
import yaml

from . import errors, eventsv1, managed, openapi, streams, subresources, tables
from .errors import ApiError, bad_request
from .options import check_dry_run, check_list_options
from .resources import KUBE_VERSION, METRICS_GROUP
from .selectors import match_fields, match_labels, parse_fields, parse_labels

log = logging.getLogger("kubesim")
DEFAULT_WATCH_SECONDS = 1800.0
BOOKMARK_BEFORE_DEADLINE = 2.0  # the real server sends a watcher its bookmark 2 s before the watch times out,
BOOKMARK_EVERY = 1.0            # then again at each tick of its watch cache's 1 s timer until the end
PUBLIC_PATHS = ("/healthz", "/livez", "/readyz", "/version")
OPTIONS_KIND = {"create": "CreateOptions", "update": "UpdateOptions", "patch": "PatchOptions",
                "delete": "DeleteOptions", "deletecollection": "DeleteOptions"}


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256

    def __init__(self, address, sim, tls: ssl.SSLContext | None = None):
        self.sim, self.tls = sim, tls
        super().__init__(address, Handler)

    def handle_error(self, request, client_address):
        # Failed handshakes and dropped connections; request errors are answered (and logged) in Handler._handle.
        log.debug("kubesim: connection from %s failed", client_address, exc_info=True)

    def get_request(self):
        sock, address = self.socket.accept()
        if self.tls is not None:
            # The handshake happens in the connection's own thread (Handler.setup), never in the accept loop.
            sock = self.tls.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
        return sock, address


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    timeout = 120  # idle keep-alive connections are closed, so their threads do not pile up
    server_version = "kubesim"
    sys_version = ""

    def setup(self):
        super().setup()
        if isinstance(self.connection, ssl.SSLSocket):
            self.connection.settimeout(10)
            self.connection.do_handshake()
            self.connection.settimeout(self.timeout)

    def log_message(self, format, *args):  # noqa: A002 - requests are logged once, in _handle
        pass

    def do_GET(self):
        self._handle()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_GET

    # --- plumbing --------------------------------------------------------------------------------------------

    def _handle(self):
        started, self._code = time.perf_counter(), 0
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            self._route(self.server.sim, url.path.rstrip("/") or "/", query, raw)
        except ApiError as exc:
            self._send_json(exc.code, exc.status())
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as exc:  # a bug in the simulator must still answer like a server, and be visible
            log.exception("kubesim: %s %s failed", self.command, self.path)
            self._send_json(500, ApiError(500, "InternalError", f"Internal error occurred: {exc}").status())
        log.info("%s %s %d %.1fms", self.command, self.path, self._code, (time.perf_counter() - started) * 1000)

    def _send(self, code: int, body: bytes, content_type: str, headers: list[tuple[str, str]] = ()):
        self._code = code
        lines = [f"HTTP/1.1 {code} {HTTPStatus(code).phrase}", f"Content-Type: {content_type}",
                 f"Content-Length: {len(body)}", "Cache-Control: no-cache, private"]
        lines += [f"{k}: {v}" for k, v in headers]
        if self.close_connection:
            lines.append("Connection: close")
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode() + (body if self.command != "HEAD" else b""))

    def _send_json(self, code: int, obj, headers=()):
        self._send(code, dumps(obj), "application/json", headers)

    def _json_body(self, raw: bytes):
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if raw and content_type == "application/vnd.kubernetes.protobuf":
            # kubectl's typed commands (create namespace, ...) send protobuf; kubesim reads JSON and YAML only,
            # and says so as a real server does for kinds without protobuf (custom resources).
            raise errors.unsupported_media_type(content_type, ["application/json", "application/yaml"])
        try:
            if raw and content_type == "application/yaml":
                return yaml.safe_load(raw)
            return json.loads(raw) if raw else None
        except (ValueError, yaml.YAMLError) as exc:
            raise bad_request(f"error decoding request body: {exc}") from None

    # --- routing ---------------------------------------------------------------------------------------------

    def _route(self, sim, path, query, raw):
        # Health and version are public, as the real server's system:public-info-viewer role makes them.
        if (sim.token is not None and self.headers.get("Authorization", "") != f"Bearer {sim.token}"
                and path not in PUBLIC_PATHS):
            raise errors.UNAUTHORIZED
        if path.startswith("/_sim/"):
            return self._admin(sim, path, raw)
        faults = sim.faults_snapshot()
        if faults["latencyMs"]:
            time.sleep(faults["latencyMs"] / 1000.0)
        if faults["outage"]:
            raise errors.UNAVAILABLE
        parts = [p for p in path.split("/") if p]
        if path.startswith("/prometheus/api/v1/query"):
            return self._prometheus(sim, query, raw)
        if path in ("/healthz", "/livez", "/readyz"):
            return self._send(200, b"ok", "text/plain; charset=utf-8")
        if path == "/version":
            sim.count("get", "version")
            return self._send_json(200, KUBE_VERSION)
        if path == "/openapi/v2":
            return self._openapi(sim)
        if parts[:1] == ["api"] and len(parts) <= 2 or parts[:1] == ["apis"] and len(parts) <= 3:
            sim.count("get", "discovery")
            return self._send_json(200, self._discovery(sim.registry, parts))
        if parts[:1] in (["api"], ["apis"]):
            return self._resource(sim, parts, query, raw)
        raise errors.path_not_found()

    def _prometheus(self, sim, query, raw):
        sim.count("query", "prometheus")
        form = parse_qs(raw.decode()) if self.command == "POST" else {}
        expr = query.get("query") or (form.get("query") or [""])[-1]
        code, body = sim.metrics.prometheus(expr)
        return self._send_json(code, body)

    def _openapi(self, sim):
        sim.count("get", "openapi")
        if openapi.wants_protobuf(self.headers.get("Accept", "")):
            return self._send(200, openapi.protobuf_bytes(sim.registry),
                              "application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
        return self._send(200, openapi.json_bytes(sim.registry), "application/json")

    def _discovery(self, reg, parts) -> dict:
        if parts == ["api"]:
            return reg.api_versions(self.headers.get("Host", ""))
        if parts == ["api", "v1"]:
            return reg.resource_list("", "v1")
        if parts == ["apis"]:
            return reg.group_list()
        if len(parts) == 2 and parts[1] in reg.groups:
            return reg.group_doc(parts[1])
        if len(parts) == 3 and parts[1] in reg.groups and reg.has_version(parts[1], parts[2]):
            return reg.resource_list(parts[1], parts[2])
        raise errors.path_not_found()

    def _resource(self, sim, parts, query, raw):
        reg = sim.registry
        res, namespace, name, sub, subs = _locate(reg, parts)
        verb = self._verb(name, query, sub)
        if verb not in (subs[sub][1] if sub else res.verbs) or (verb == "create" and res.namespaced
                                                                  and namespace is None):
            raise errors.method_not_allowed()
        stat = sim.registry.stat_name[res.key] + (f"/{sub}" if sub else "")
        sim.count(verb, stat)
        if res.key == "pods" and sub in ("exec", "attach", "portforward"):
            return self._pod_stream(sim, res, namespace, name, sub)
        as_events_v1 = res.key == eventsv1.GROUP_KEY
        if as_events_v1:  # one kind stored, two APIs: served from core/v1 Events, converted both ways
            res = reg.by_key["events"]
            raw = eventsv1.request_body(raw, self.headers.get("Content-Type", ""), verb)
        if res.group == METRICS_GROUP:
            return self._send_json(200, sim.metrics.resource(res, namespace, name, query))
        if verb in ("list", "watch"):
            check_list_options(query, watch=verb == "watch")
        if verb == "watch":
            return self._watch(sim, res, namespace, query, eventsv1.from_core if as_events_v1 else None)
        through_v1 = eventsv1.THROUGH_V1.set(as_events_v1)
        try:
            with sim.store.lock:
                result = self._apply(sim, verb, res, namespace, name, sub, query, raw)
        finally:
            eventsv1.THROUGH_V1.reset(through_v1)
        self._respond(result, res, verb, sub, query, as_events_v1)

    def _respond(self, result, res, verb, sub, query, as_events_v1):
        code, body, warnings = result if isinstance(result, tuple) else (200, result, [])
        if sub == "log":
            return self._send(code, body.encode(), "text/plain")
        if tables.wanted(self.headers.get("Accept", "")) and verb in ("get", "list") and not sub:
            body = tables.convert(res, body, query.get("includeObject") or "Metadata")
        elif as_events_v1:
            body = eventsv1.response_body(body)
        headers = [("Warning", f'299 - "{w}"') for w in warnings]
        self._send_json(code, body, headers)

    def _verb(self, name, query, sub=None) -> str:
        method = self.command
        if method in ("GET", "HEAD"):
            if name is not None:
                return "get"
            return "watch" if _parse_bool(query.get("watch")) else "list"
        verbs = {"POST": "create" if name is None or sub else "", "PUT": "update" if name else "",
                 "PATCH": "patch" if name else "", "DELETE": "delete" if name else "deletecollection"}
        return verbs.get(method, "")

    def _apply(self, sim, verb, res, namespace, name, sub, query, raw):
        api = sim.api
        dry_run = verb in OPTIONS_KIND and check_dry_run(query.get("dryRun"), OPTIONS_KIND[verb])
        if sub in ("exec", "attach", "portforward", "proxy"):
            raise subresources.streaming(sub, res, name)
        if res.key == "componentstatuses":
            return subresources.component_statuses(name)
        if res.key == "bindings" or sub in ("binding", "eviction", "token", "finalize"):
            return self._action(api, res, namespace, name, sub, raw)
        if verb == "get":
            return self._get(sim, res, namespace, name, sub, query)
        if verb == "list":
            return api.list(res, namespace, query)
        manager = query.get("fieldManager") or managed.manager_from_user_agent(self.headers.get("User-Agent", ""))
        if verb == "create":
            return 201, api.create(res, namespace, self._json_body(raw), dry_run=dry_run, manager=manager), []
        if verb == "update":
            body = self._json_body(raw)
            if sub == "scale":
                return subresources.update_scale(api, res, namespace, name, body, dry_run)
            return api.update(res, namespace, name, body, sub=sub, dry_run=dry_run, manager=manager)
        if verb == "patch":
            code, obj = api.patch(res, namespace, name, raw, self.headers.get("Content-Type", ""), sub=sub,
                                  query=query, manager=manager)
            return code, obj, []
        options = _delete_options(self._json_body(raw) or {}, query, dry_run)
        if verb == "delete":
            return api.delete(res, namespace, name, options)
        return api.delete_collection(res, namespace, query, options)

    def _pod_stream(self, sim, res, namespace, name, sub):
        """exec, attach or portforward over WebSocket (kubesim/streams.py), once the pod is found running."""
        with sim.store.lock:
            pod = sim.api.get(res, namespace, name)
        query = streams.stream_query(self.path)
        containers = [c["name"] for c in pod["spec"].get("containers") or []]
        phase = (pod.get("status") or {}).get("phase")
        if phase in ("Succeeded", "Failed"):
            raise bad_request(f"cannot {sub} into a container in a completed pod; current phase is {phase}")
        if not pod["spec"].get("nodeName") or phase != "Running":
            raise bad_request(f"pod {name} does not have a host assigned" if not pod["spec"].get("nodeName")
                              else f"unable to upgrade connection: pod {name} is not running ({phase})")
        container = (query.get("container") or [""])[-1]
        if sub != "portforward":
            if not container and len(containers) > 1:
                raise bad_request(f"a container name must be specified for pod {name}, choose one of: "
                                  f"[{' '.join(containers)}]")
            if container and container not in containers:
                raise bad_request(f"container {container} is not valid for pod {name}")
        if sub == "exec" and not query.get("command"):
            raise bad_request("you must specify at least 1 command")
        ports = []
        if sub == "portforward":
            try:
                ports = streams.ports_of(query)
            except ValueError:
                raise bad_request("unable to parse port") from None
            if not ports or any(not 0 < p < 65536 for p in ports):
                raise bad_request("at least 1 port must be specified (1-65535)")
        upgraded = streams.upgrade(self, streams.FORWARD_PROTOCOLS if sub == "portforward"
                                   else streams.EXEC_PROTOCOLS)
        if upgraded is None:
            raise bad_request("Upgrade request required")
        self._code = 101
        ws, protocol = upgraded
        runtime = sim.runtime
        if sub == "exec":
            streams.run_exec(ws, protocol, query, runtime.pod_root(namespace, name), name)
        elif sub == "portforward":
            streams.run_portforward(ws, ports, lambda port: runtime.forward_target(namespace, name, port), name)
        else:
            kubelet = sim.controller.kubelet
            wanted = {"container": container} if container else {}

            def log_text():
                with sim.store.lock:
                    current = sim.store.get("pods", namespace, name)
                    if current is None or current["metadata"]["uid"] != pod["metadata"]["uid"]:
                        return None
                    try:
                        return kubelet.logs(current, wanted)
                    except ApiError:
                        return ""

            streams.run_attach(ws, log_text, threading.Event(), tick=max(sim.tick, 0.2))

    def _action(self, api, res, namespace, name, sub, raw):
        """A binding, an eviction, a token request or a namespace's finalize: (code, body, warnings)."""
        body = self._json_body(raw) or {}
        if res.key == "bindings" or sub == "binding":
            pod = name or (body.get("metadata") or {}).get("name") or ""
            return (*subresources.bind(api, res, namespace, pod, body), [])
        if sub == "eviction":
            return (*subresources.evict(api, namespace, name, body), [])
        if sub == "token":
            return (*subresources.token(api, namespace, name, body), [])
        return (*subresources.finalize(api, name, body), [])

    @staticmethod
    def _get(sim, res, namespace, name, sub, query):
        api = sim.api
        api.wait_for(query.get("resourceVersion") or "")
        if sub == "scale":
            return subresources.get_scale(api, res, namespace, name)
        if sub == "log":
            return sim.controller.kubelet.logs(api.get(res, namespace, name), query)
        return api.get(res, namespace, name)

    # --- watch -----------------------------------------------------------------------------------------------

    def _watch(self, sim, res, namespace, query, convert=None):
        store = sim.store
        labels = parse_labels(query.get("labelSelector"))
        fields = parse_fields(query.get("fieldSelector"), res.key)

        def matches(obj):
            return ((not labels or match_labels(labels, obj["metadata"].get("labels")))
                    and (not fields or match_fields(fields, obj)))

        rv = query.get("resourceVersion")
        timeout = float(query.get("timeoutSeconds") or DEFAULT_WATCH_SECONDS)
        bookmark_at = None
        if _parse_bool(query.get("allowWatchBookmarks")) and timeout > BOOKMARK_BEFORE_DEADLINE:
            bookmark_at = time.monotonic() + timeout - BOOKMARK_BEFORE_DEADLINE
        too_old = None
        with store.lock:
            if rv in (None, "", "0"):  # "get state and start at most recent": existing objects arrive as ADDED
                initial, cursor = [o for o in store.iter(res.key, namespace) if matches(o)], store.rv
            else:
                try:
                    cursor, initial = int(rv), []
                except ValueError:
                    raise bad_request(f'invalid resource version: "{rv}"') from None
                if cursor < store.oldest_available():
                    too_old = store.oldest_available()
        self._code = 200
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                         b"Cache-Control: no-cache, private\r\n\r\n")
        try:
            if too_old is not None:
                return self._chunk(self._expired_line(cursor, too_old))
            if initial:
                self._chunk(b"".join(_line("ADDED", convert(o) if convert else o) for o in initial))
            self._stream(sim, res, namespace, matches, cursor, time.monotonic() + timeout, bookmark_at, convert)
        finally:
            self.wfile.write(b"0\r\n\r\n")

    def _stream(self, sim, res, namespace, matches, cursor, deadline, bookmark_at=None, convert=None):
        store, sent = sim.store, cursor  # sent: the newest resourceVersion this watcher has been given
        while not sim.stopping and not sim.faults_snapshot()["outage"]:
            now = time.monotonic()
            remaining = deadline - now
            if remaining <= 0:
                return
            bookmark_due = bookmark_at is not None and now >= bookmark_at
            with store.changed:
                events = store.events_since(cursor)
                if events == [] and not bookmark_due:
                    wait = min(remaining, 1.0) if bookmark_at is None else min(remaining, 1.0, bookmark_at - now)
                    store.changed.wait(max(wait, 0.0))
                    events = store.events_since(cursor)
                oldest = store.oldest_available()
            if events is None:  # this watcher fell behind the history window
                return self._chunk(self._expired_line(cursor, oldest))
            out, cursor, sent = _event_lines(events, res, namespace, matches, convert, cursor, sent)
            if bookmark_due and events == []:
                # Everything is delivered: a bookmark tells the client it may resume from the kind's latest write
                # (in any namespace). As in the real server's watch cache, none when this watcher has had it.
                latest = store.last_rv.get(res.key, 0)
                if latest > sent:
                    out.append(_bookmark(res, latest, convert))
                bookmark_at = now + BOOKMARK_EVERY  # the watch cache's ticker: again until the deadline
            if out:
                self._chunk(b"".join(out))
            elif not events and self._client_gone():
                return

    def _chunk(self, data: bytes):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    @staticmethod
    def _expired_line(rv, oldest) -> bytes:
        status = errors.expired(f"too old resource version: {rv} ({oldest})").status()
        return dumps({"type": "ERROR", "object": status}) + b"\n"

    def _client_gone(self) -> bool:
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            # Peek at the raw socket (TLS sockets refuse flags): end-of-stream means the client hung up.
            return bool(readable) and socket.socket.recv(self.connection, 1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    # --- admin -----------------------------------------------------------------------------------------------

    def _admin(self, sim, path, raw):
        if path == "/_sim/stats" and self.command == "GET":
            return self._send_json(200, sim.stats_document())
        if path == "/_sim/stats/reset" and self.command == "POST":
            sim.reset_stats()
            return self._send_json(200, sim.stats_document())
        if path == "/_sim/compact" and self.command == "POST":
            with sim.store.lock:
                return self._send_json(200, {"compactedResourceVersion": str(sim.store.compact())})
        if path == "/_sim/faults" and self.command in ("GET", "POST"):
            if self.command == "POST":
                body = self._json_body(raw) or {}
                names = {"outage": "outage", "latencyMs": "latency_ms", "pullFailImages": "pull_fail_images",
                         "crashImages": "crash_images"}
                unknown = set(body) - set(names)
                if unknown:
                    raise bad_request(f"unknown fault switches: {', '.join(sorted(unknown))}")
                sim.set_faults(**{names[k]: v for k, v in body.items()})
            return self._send_json(200, sim.faults_snapshot())
        raise errors.path_not_found()


def _parse_bool(value) -> bool:
    # Go's strconv.ParseBool, which the API server uses for query flags (the Python client sends "True").
    return value in ("1", "t", "T", "TRUE", "true", "True")


def _line(kind: str, obj: dict) -> bytes:
    return dumps({"type": kind, "object": obj}) + b"\n"


def _event_type(event, matches) -> str | None:
    """An object entering the selector is ADDED for this watcher, one leaving it DELETED, as the real server does."""
    now = matches(event.obj)
    if event.type != "MODIFIED":
        return event.type if now else None
    before = matches(event.old)
    if now and before:
        return "MODIFIED"
    return "ADDED" if now else ("DELETED" if before else None)


def _locate(reg, parts):
    """/api/v1/namespaces/ns/pods/name/sub -> (resource, namespace, name, subresource, its subresources)."""
    group, version, rest = ("", parts[1], parts[2:]) if parts[0] == "api" else (parts[1], parts[2], parts[3:])
    namespace = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        scoped = reg.lookup(group, version, rest[2])
        if scoped is not None and scoped.namespaced:
            namespace, rest = rest[1], rest[2:]
    res = reg.lookup(group, version, rest[0])
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    subs = reg.subresources(res) if res is not None else {}
    if (res is None or len(rest) > 3 or (res.namespaced and namespace is None and name is not None)
            or (sub is not None and sub not in subs)):
        raise errors.path_not_found()
    return res, namespace, name, sub, subs


def _delete_options(options: dict, query: dict, dry_run: bool) -> dict:
    for key in ("propagationPolicy", "gracePeriodSeconds", "orphanDependents"):
        if key in query:
            value = query[key]
            options[key] = int(value) if key == "gracePeriodSeconds" else (
                _parse_bool(value) if key == "orphanDependents" else value)
    options["dryRun"] = dry_run or bool(options.get("dryRun"))
    return options


def _event_lines(events, res, namespace, matches, convert, cursor, sent):
    """The watch lines of a watcher's events: (lines, the new cursor, the newest resourceVersion sent)."""
    out = []
    for event in events:
        cursor = event.rv
        if event.key != res.key:
            continue
        if namespace is not None and event.obj["metadata"].get("namespace") != namespace:
            continue
        kind = _event_type(event, matches)
        if kind:
            cached = (kind, convert)  # one serialized line per event type and API, shared by watchers
            line = event.lines.get(cached)
            if line is None:
                line = event.lines[cached] = _line(kind, convert(event.obj) if convert else event.obj)
            out.append(line)
            sent = event.rv
    return out, cursor, sent


def _bookmark(res, latest, convert) -> bytes:
    return _line("BOOKMARK", {"kind": res.kind, "apiVersion": eventsv1.API_VERSION if convert else res.api_version,
                              "metadata": {"resourceVersion": str(latest), "creationTimestamp": None}})


def dumps(obj) -> bytes:
    """Compact JSON, as the real server writes it: orjson (a LIST page of 500 pods: 0.4 ms, 9.8 with json: most of the
    simulator's share of a 100,000-pod LIST), json for what orjson refuses (an integer beyond 64 bits)."""
    try:
        return orjson.dumps(obj)
    except TypeError:
        return json.dumps(obj, separators=(",", ":")).encode()
