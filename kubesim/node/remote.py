"""kubesim's node side against any API server over HTTP, as KWOK does: it registers simulated Nodes, schedules
the server's pending pods onto them (pods/binding), plays each pod's lifecycle with the same Kubelet and
Scheduler kubesim uses on its own server (pods/status, Events), keeps the nodes' heartbeats, serves the
kubelet's log endpoint so that `kubectl logs` (the API server's pods/log) works, and gives LoadBalancer
Services an address (services/status), as a cloud would.

    python -m kubesim.node.remote --server https://127.0.0.1:6443 --token T --ca-file ca.crt

On a real control plane, kube-controller-manager runs Jobs, Deployments and garbage collection; this adds what a
cluster's nodes do, and, where the server serves their custom resources (kubesim/node/crds.py installs the CRDs;
discovery finds them every DISCOVERY_SECONDS), what their operators do, with kubesim's own reconcilers: Knative
Services (a revision's pods, then Ready with the URL and traffic), the Kubeflow Training Operator's jobs (a pod
per replica, phases, completion, suspend) and gang schedulers' PodGroups (all of a group's pods or none). Writes
the server does not take for a passing reason (5xx, 429, connection lost) are tried again, never dropped.
Not here: the metrics APIs (see docs/real-cluster.md).
"""

import argparse
import datetime
import ipaddress
import json
import logging
import shutil
import signal
import socket
import ssl
import tempfile
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import json_merge_patch

from ..controllers.controller import Controller
from ..errors import ApiError, Unavailable
from ..resources import GROUPS, METRICS_GROUP, Registry
from ..store import now_rfc3339
from .metrics import Metrics

log = logging.getLogger("kubesim.remote")
PULL_FAIL_MARK, CRASH_MARK = "does-not-exist", "crashloop"
HEARTBEAT_SECONDS = 10.0
DISCOVERY_SECONDS = 2.0  # how often the node side looks for custom resources it plays (their CRDs come and go)
PATHS = {"pods": "/api/v1/pods", "namespaces": "/api/v1/namespaces", "services": "/api/v1/services"}
# Custom resources the node side plays where the server serves them, as kubesim's own server does: Knative Services
# (ready, URL, traffic), the Training Operator's jobs (pods per replica, phases, completion), and gang schedulers'
# PodGroups (read by the scheduler). Store key -> Resource.
CUSTOM = {r.key: r for group in ("serving.knative.dev", "kubeflow.org", "scheduling.x-k8s.io", "scheduling.volcano.sh")
          for r in GROUPS[group]}


def object_path(key: str, namespace: str | None, name: str | None = None) -> str:
    """The REST path of a pod, an event or a custom resource (a collection when `name` is None)."""
    res = CUSTOM.get(key)
    base = f"/apis/{res.group}/{res.version}" if res else "/api/v1"
    plural = res.plural if res else key
    path = f"{base}/namespaces/{namespace}/{plural}" if namespace else f"{base}/{plural}"
    return f"{path}/{name}" if name else path


class HttpError(Exception):
    def __init__(self, status: int, body: dict):
        super().__init__(f"{status} {body.get('message', '')}")
        self.status, self.body = status, body


class Http:
    """Bearer-token JSON requests to the API server (standard library only, as the rest of kubesim)."""

    def __init__(self, url: str, token: str, ca_file: str | None = None):
        self.url, self.token = url.rstrip("/"), token
        self.context = ssl.create_default_context(cafile=ca_file) if url.startswith("https") else None

    def _open(self, method: str, path: str, *, body=None, query: dict | None = None, timeout: float = 30,
              content_type: str = "application/json"):
        url = self.url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            return urllib.request.urlopen(request, context=self.context, timeout=timeout)
        except urllib.error.HTTPError as exc:
            try:
                detail = json.loads(exc.read() or b"{}")
            except ValueError:
                detail = {}
            raise HttpError(exc.code, detail if isinstance(detail, dict) else {}) from None

    def call(self, method: str, path: str, *, body=None, query=None,
             content_type: str = "application/json") -> dict:
        with self._open(method, path, body=body, query=query, content_type=content_type) as response:
            raw = response.read()
        return json.loads(raw) if raw else {}

    def watch(self, path: str, resource_version: str, timeout_seconds: int = 60):
        query = {"watch": "true", "resourceVersion": resource_version, "allowWatchBookmarks": "true",
                 "timeoutSeconds": timeout_seconds}
        with self._open("GET", path, query=query, timeout=timeout_seconds + 10) as response:
            for line in response:
                if line.strip():
                    yield json.loads(line)


def merge_patch(old, new) -> dict:
    """The JSON merge patch (RFC 7386) that turns `old` into `new` (by the json-merge-patch library): a key `new` no
    longer has is sent as null, or the server would keep it (a job's `replicaStatuses.Worker.active` after its
    workers finished)."""
    return json_merge_patch.create_patch(old if isinstance(old, dict) else {}, new if isinstance(new, dict) else {})


def _transient(exc: HttpError) -> bool:
    """An answer that says "not now" rather than "no": throttled, or the server (or its etcd) failing."""
    return exc.status == 429 or exc.status >= 500


def _newer(obj: dict, than: dict | None) -> bool:
    """Whether `obj` is a later version than `than` (etcd-backed resourceVersions grow; a watch can lag
    behind a write whose answer this side already holds)."""
    if than is None:
        return True
    try:
        return int(obj["metadata"]["resourceVersion"]) > int(than["metadata"]["resourceVersion"])
    except (KeyError, ValueError):
        return True


class Mirror:
    """What the node side reads — pods and namespaces as the server's watches show them, and the Events it
    wrote — with kubesim's store interface. Writes go to the server first; its answer is what is kept."""

    def __init__(self, http: Http, node_names: set[str], other_schedulers: frozenset[str] = frozenset()):
        self.http, self.node_names, self.other_schedulers = http, node_names, other_schedulers
        self.lock = threading.RLock()
        self.listeners = []
        self._objects = defaultdict(dict)  # key -> (namespace, name) -> obj
        self._uids = {}

    # reads (kubesim's Store interface)
    def get(self, key: str, namespace: str | None, name: str) -> dict | None:
        return self._objects[key].get((namespace or "", name))

    def get_uid(self, uid: str):
        where = self._uids.get(uid)
        return (where[0], self._objects[where[0]][where[1]]) if where else None

    def list(self, key: str, namespace: str | None = None) -> list[dict]:
        return [o for (ns, _), o in self._objects[key].items() if namespace is None or ns == namespace]

    def iter(self, key: str, namespace: str | None = None):
        return iter(self.list(key, namespace))

    def dependents_of(self, owner_uid: str) -> list:
        """What the operators read (a Knative Service's or a training job's pods); collecting them when the owner
        goes is the real controller manager's garbage collector's job, not the node side's."""
        with self.lock:
            return [(key, o) for key, objects in self._objects.items() if key != "events" for o in objects.values()
                    if any(r.get("uid") == owner_uid for r in o["metadata"].get("ownerReferences") or ())]

    def in_namespace(self, namespace: str) -> int:
        return sum(1 for objects in self._objects.values() for ns, _ in objects if ns == namespace)

    # the server's view coming in
    def apply(self, key: str, type_: str, obj: dict) -> None:
        meta = obj["metadata"]
        where = (meta.get("namespace", ""), meta["name"])
        if key == "pods" and obj["spec"].get("nodeName") and obj["spec"]["nodeName"] not in self.node_names:
            return  # a pod of some other (real) node: not ours to play
        if key == "pods" and not obj["spec"].get("nodeName") and \
                obj["spec"].get("schedulerName") in self.other_schedulers:
            return  # a pod another (real) scheduler binds, e.g. KAI's: ours only once bound to one of our nodes
        with self.lock:
            old = self._objects[key].get(where)
            if type_ == "DELETED":
                if old is not None:
                    self._forget(key, where, old)
                return
            if not _newer(obj, old):
                return
            self._objects[key][where] = obj
            self._uids[meta["uid"]] = (key, where)
            for listener in self.listeners:
                listener(key, "MODIFIED" if old else "ADDED", obj, old)

    def _forget(self, key, where, old) -> None:
        del self._objects[key][where]
        self._uids.pop(old["metadata"]["uid"], None)
        for listener in self.listeners:
            listener(key, "DELETED", old, old)

    # writes from the kubelet, scheduler and event recorder
    def update(self, key: str, obj: dict) -> dict:
        meta = obj["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        old = self.get(key, namespace, name) or {}
        try:
            stored = self._write(key, obj, old)
        except HttpError as exc:
            if exc.status == 404:
                with self.lock:
                    if (namespace, name) in self._objects[key]:
                        self._forget(key, (namespace, name), self._objects[key][(namespace, name)])
                return obj
            if _transient(exc) and key != "events":
                raise Unavailable(f"{key} {namespace}/{name}: {exc}") from None
            log.warning("kubesim node side: %s %s/%s refused: %s", key, namespace, name, exc)
            return old or obj
        except OSError as exc:  # refused, reset, timed out: the server is away; the caller tries again
            if key == "events":  # Events are best effort, as a kubelet's are
                log.info("kubesim node side: event %s/%s not written: %s", namespace, name, exc)
                return old or obj
            raise Unavailable(f"{key} {namespace}/{name}: {exc}") from None
        self.apply(key, "MODIFIED", {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), **stored})
        return self.get(key, namespace, name) or stored

    def _write(self, key: str, obj: dict, old: dict) -> dict:
        """The write to the server: a pod's binding (once) and status, a Service's or an operator's status, an
        Event whole."""
        meta = obj["metadata"]
        namespace, name = meta.get("namespace", ""), meta["name"]
        status_patch = {"status": merge_patch(old.get("status"), obj.get("status"))}
        if key == "pods":
            base = f"/api/v1/namespaces/{namespace}/pods/{name}"
            node = obj["spec"].get("nodeName")
            if node and not (old.get("spec") or {}).get("nodeName"):
                self._bind(base, name, meta["uid"], node)
            return self.http.call("PATCH", base + "/status", body=status_patch,
                                  content_type="application/merge-patch+json")
        if key == "services":  # a LoadBalancer's address, as the cloud's controller would set it
            return self.http.call("PATCH", f"/api/v1/namespaces/{namespace}/services/{name}/status",
                                  body=status_patch, content_type="application/merge-patch+json")
        if key == "events":
            return self.http.call("PUT", f"/api/v1/namespaces/{namespace}/events/{name}", body=obj)
        if key in CUSTOM:  # an operator's status: a Knative Service's URL and traffic, a job's conditions
            return self.http.call("PATCH", object_path(key, namespace, name) + "/status",
                                  body=status_patch, content_type="application/merge-patch+json")
        raise ValueError(f"the node side does not write {key}")

    def _bind(self, base: str, name: str, uid: str, node: str) -> None:
        try:
            self.http.call("POST", base + "/binding", body={
                "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name, "uid": uid},
                "target": {"apiVersion": "v1", "kind": "Node", "name": node}})
        except HttpError as exc:
            if exc.status != 409:  # 409: bound already, by a try whose answer was lost
                raise

    def create(self, key: str, obj: dict) -> dict:
        if key == "pods":
            return self._create_pod(obj)
        if key != "events":
            raise ValueError(f"the node side does not create {key}")
        namespace = obj["metadata"]["namespace"]
        try:
            stored = self.http.call("POST", f"/api/v1/namespaces/{namespace}/events", body=obj)
        except (HttpError, OSError) as exc:  # Events are best effort, as a kubelet's are
            log.info("kubesim node side: event in %s refused: %s", namespace, exc)
            return obj
        self.apply("events", "ADDED", stored)
        return stored

    def _create_pod(self, obj: dict) -> dict:
        """A pod an operator makes (a Knative revision's, a training job's replica), as its controller would."""
        namespace = obj["metadata"]["namespace"]
        try:
            stored = self.http.call("POST", object_path("pods", namespace), body={"apiVersion": "v1", "kind": "Pod",
                                                                                  **obj})
        except HttpError as exc:
            if _transient(exc):  # v1.20's 500 "retry after the token is created" in a new namespace, too
                raise Unavailable(f"create pod in {namespace}: {exc}") from None
            raise ApiError(exc.status, exc.body.get("reason", ""), exc.body.get("message", str(exc)),
                           exc.body.get("details")) from None
        except OSError as exc:
            raise Unavailable(f"create pod in {namespace}: {exc}") from None
        stored = {"apiVersion": "v1", "kind": "Pod", **stored}
        self.apply("pods", "ADDED", stored)
        return stored

    def delete(self, key: str, obj: dict, propagation: str = "Background") -> None:
        """An operator's delete (a suspended job's pods, a finished job past its TTL): the server's graceful
        deletion and garbage collection do the rest."""
        meta = obj["metadata"]
        try:
            self.http.call("DELETE", object_path(key, meta.get("namespace"), meta["name"]),
                           body={"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation,
                                 "preconditions": {"uid": meta["uid"]}})
        except HttpError as exc:
            if _transient(exc):
                raise Unavailable(f"delete {key} {meta.get('namespace')}/{meta['name']}: {exc}") from None
            if exc.status not in (404, 409):
                log.warning("kubesim node side: delete %s %s/%s refused: %s", key, meta.get("namespace"),
                            meta["name"], exc)
        except OSError as exc:
            raise Unavailable(f"delete {key} {meta.get('namespace')}/{meta['name']}: {exc}") from None

    def forget_all(self, key: str) -> None:
        """A resource no longer served (its CRD deleted): its objects are gone with it."""
        with self.lock:
            for where in list(self._objects[key]):
                self._forget(key, where, self._objects[key][where])

    def remove(self, key: str, namespace: str | None, name: str) -> dict | None:
        """The kubelet's last word on a pod: delete it now (its containers have stopped)."""
        old = self.get(key, namespace, name)
        plural = {"pods": "pods", "events": "events"}[key]
        try:
            self.http.call("DELETE", f"/api/v1/namespaces/{namespace}/{plural}/{name}",
                           body={"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0,
                                 **({"preconditions": {"uid": old["metadata"]["uid"]}} if old else {})})
        except HttpError as exc:
            if _transient(exc):
                raise Unavailable(f"delete {key} {namespace}/{name}: {exc}") from None
            if exc.status not in (404, 409):
                log.warning("kubesim node side: delete %s %s/%s refused: %s", key, namespace, name, exc)
                return old
        except OSError as exc:
            raise Unavailable(f"delete {key} {namespace}/{name}: {exc}") from None
        with self.lock:
            if old is not None and (namespace or "", name) in self._objects[key]:
                self._forget(key, (namespace or "", name), old)
        return old


class NodeController(Controller):
    """kubesim's control loop with only what a cluster's nodes and cloud do: pods (scheduler + kubelet), their
    Events, and LoadBalancer Services' addresses (as a cloud controller or MetalLB would)."""

    def __init__(self, sim, nodes):
        super().__init__(sim, nodes)
        self.handlers = {"pods": self.kubelet.sync, "events": self.recorder.expire, "services": self._sync_service,
                         # operators, for the custom resources the server serves (RemoteNodes watches them then)
                         "services.serving.knative.dev": self.workloads.sync_knative, **self.kubeflow.handlers()}

    # The real server's controllers do these: kubesim's reconcilers reach them through the same methods.
    def create(self, key: str, namespace: str, obj: dict) -> dict:
        return self.store.create(key, {**obj, "metadata": {**obj["metadata"], "namespace": namespace}})

    def delete_object(self, key: str, obj: dict, propagation: str = "Background") -> None:
        meta = obj["metadata"]
        if self.store.get(key, meta.get("namespace"), meta["name"]) is not None and not meta.get("deletionTimestamp"):
            self.store.delete(key, obj, propagation)

    def _collect(self, owner_uid: str) -> None:
        pass  # garbage collection is the real controller manager's

    def _finalize(self, key: str, obj: dict) -> None:
        pass  # so are the orphan and foregroundDeletion finalizers


class RemoteNodes:
    """The node side of a cluster whose API server is elsewhere. Same knobs as KubeSim's node side."""

    def __init__(self, server: str, token: str, *, ca_file: str | None = None, nodes: int = 4,
                 gpus_per_node: int = 8, cpu_per_node: str = "64", memory_per_node: str = "512Gi",
                 mig_per_node: dict | None = None, node_labels: dict | None = None, taints: list | None = None,
                 pull_seconds: float = 0.3, run_seconds: float = 1.0, schedule_seconds: float = 0.0,
                 tick: float = 0.05, serve_logs: bool = True, serve_metrics: bool = True,
                 other_schedulers: frozenset[str] = frozenset(), operators: tuple[str, ...] | None = None):
        from ..sim import node_object  # the same node objects as kubesim's own cluster

        self.pull_seconds, self.run_seconds, self.schedule_seconds, self.tick = (pull_seconds, run_seconds,
                                                                                 schedule_seconds, tick)
        self.http = Http(server, token, ca_file)
        self.serve_logs = serve_logs
        self.node_objects = []
        for i in range(nodes):
            obj = node_object(i, gpus_per_node, cpu_per_node, memory_per_node, mig_per_node or {})
            obj["metadata"]["labels"].update(node_labels or {})
            if taints:
                obj["spec"]["taints"] = taints
            # The API server reaches a node's kubelet at its address and port: ours, on loopback.
            obj["status"]["addresses"] = [{"type": "InternalIP", "address": "127.0.0.1"}]
            self.node_objects.append(obj)
        # Every kind the node side may meet as a pod's owner; which custom ones are served, discovery says.
        self.registry = Registry(knative=True, kubeflow=True)
        self.watching: set[str] = set()  # custom resources watched now
        # `other_schedulers`: pods naming one of these are bound by that (real) scheduler, not here; `operators`: the
        # API groups of CUSTOM it plays (None: all; leave out those a real operator runs, e.g. kubeflow.org).
        self.operators = operators
        self.store = Mirror(self.http, {o["metadata"]["name"] for o in self.node_objects}, frozenset(other_schedulers))
        self.store._objects["nodes"] = {("", o["metadata"]["name"]): o for o in self.node_objects}  # for metrics
        self.serve_metrics = serve_metrics
        self.metrics = Metrics(self)  # kubesim's: metrics.k8s.io and the Prometheus series, from the pods played here
        self.prometheus_url = None
        self._prometheus_server = None
        self.api = None
        self.controller = NodeController(self, [(o, gpus_per_node, mig_per_node or {}) for o in self.node_objects])
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._log_server = None

    # what the Kubelet asks of its cluster
    def pull_fails(self, image: str) -> bool:
        return PULL_FAIL_MARK in image

    def crashes(self, image: str) -> bool:
        return CRASH_MARK in image

    # --- lifecycle -------------------------------------------------------------------------------------------

    def start(self) -> "RemoteNodes":
        port = self._start_log_server() if self.serve_logs or self.serve_metrics else _closed_port()
        for obj in self.node_objects:
            obj["status"]["daemonEndpoints"] = {"kubeletEndpoint": {"Port": port}}
            self._register(obj)
        if self.serve_metrics:
            self._register_metrics_api(port)
            self._start_prometheus()
        for key in ("namespaces", "services", "pods"):
            self._spawn(f"kubesim-watch-{key}", self._watch_loop, key)
        self.discover()
        self._spawn("kubesim-heartbeat", self._heartbeat_loop)
        self._spawn("kubesim-discovery", self._discovery_loop)
        self.controller.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.controller.stop()
        for server in (self._log_server, self._prometheus_server):
            if server is not None:
                server.shutdown()
                server.server_close()

    # --- metrics -----------------------------------------------------------------------------------------------

    def _register_metrics_api(self, port: int) -> None:
        """Serve metrics.k8s.io through the API server's aggregation layer, as metrics-server does: an APIService
        for v1beta1 backed by a Service of type ExternalName that names this process on loopback (an Endpoints
        address may not be loopback; the aggregator resolves an ExternalName Service to its name and port)."""
        service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "kubesim-metrics",
                                                                      "namespace": "kube-system"},
                   "spec": {"type": "ExternalName", "externalName": "127.0.0.1",
                            "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}}
        api_service = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                       "metadata": {"name": f"v1beta1.{METRICS_GROUP}"},
                       "spec": {"group": METRICS_GROUP, "version": "v1beta1", "insecureSkipTLSVerify": True,
                                "groupPriorityMinimum": 100, "versionPriority": 100,
                                "service": {"name": "kubesim-metrics", "namespace": "kube-system", "port": port}}}
        for path, body in (("/api/v1/namespaces/kube-system/services", service),
                           ("/apis/apiregistration.k8s.io/v1/apiservices", api_service)):
            try:
                self.http.call("POST", path, body=body)
            except HttpError as exc:
                if exc.status == 404:  # no aggregation layer (kubesim's own server serves metrics.k8s.io itself)
                    log.info("kubesim node side: %s not served; metrics.k8s.io not registered", path)
                    return
                if exc.status != 409:
                    raise
                current = self.http.call("GET", f"{path}/{body['metadata']['name']}")
                body = {**body, "metadata": {**body["metadata"],
                                             "resourceVersion": current["metadata"]["resourceVersion"]}}
                if body["kind"] == "Service":
                    body["spec"] = {**current["spec"], **body["spec"]}
                self.http.call("PUT", f"{path}/{body['metadata']['name']}", body=body)

    def serve_metrics_api(self, handler, path: str, query: dict) -> None:
        """GET /apis/metrics.k8s.io/v1beta1[/namespaces/NS]/pods[/NAME] and …/nodes[/NAME], and its discovery."""
        parts = path.strip("/").split("/")[3:]  # after apis/metrics.k8s.io/v1beta1
        resources = {r.plural: r for r in GROUPS[METRICS_GROUP]}
        if not parts:
            return handler._send_json(200, {"kind": "APIResourceList", "apiVersion": "v1",
                                            "groupVersion": f"{METRICS_GROUP}/v1beta1", "resources": [
                                                {"name": r.plural, "singularName": "", "namespaced": r.namespaced,
                                                 "kind": r.kind, "verbs": ["get", "list"]}
                                                for r in resources.values()]})
        namespace = None
        if parts[0] == "namespaces" and len(parts) >= 3:
            namespace, parts = parts[1], parts[2:]
        res = resources.get(parts[0])
        if res is None or len(parts) > 2 or (namespace and not res.namespaced):
            return handler._send_json(404, ApiError(404, "NotFound", "the server could not find the requested "
                                                                     "resource").status())
        try:
            body = self.metrics.resource(res, namespace, parts[1] if len(parts) == 2 else None, query)
        except ApiError as exc:
            return handler._send_json(exc.code, exc.status())
        handler._send_json(200, body)

    def _start_prometheus(self) -> None:
        """kubesim's Prometheus subset (DCGM and Knative series of the pods played here) on plain HTTP, loopback:
        register the cluster with `prometheusUrl` = `.prometheus_url`."""
        nodes = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format, *args):  # noqa: A002
                pass

            def do_GET(self):  # noqa: N802
                url = urllib.parse.urlsplit(self.path)
                if url.path != "/prometheus/api/v1/query":
                    code, body = 404, {"status": "error", "errorType": "not_found", "error": "not found"}
                else:
                    code, body = nodes.metrics.prometheus(dict(urllib.parse.parse_qsl(url.query)).get("query", ""))
                reply(self, code, json.dumps(body).encode(), "application/json")

        self._prometheus_server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._prometheus_server.daemon_threads = True
        self.prometheus_url = f"http://127.0.0.1:{self._prometheus_server.server_address[1]}/prometheus"
        self._spawn("kubesim-prometheus", self._prometheus_server.serve_forever)

    def _spawn(self, name, target, *args) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _register(self, obj: dict) -> None:
        name = obj["metadata"]["name"]
        try:
            self.http.call("POST", "/api/v1/nodes", body=obj)
        except HttpError as exc:
            if exc.status != 409:
                raise
            self.http.call("PATCH", f"/api/v1/nodes/{name}", body={"metadata": {"labels": obj["metadata"]["labels"]},
                                                                   "spec": obj["spec"]},
                           content_type="application/merge-patch+json")
        # A create may drop the status (it is a subresource): set it as a kubelet's first status update does.
        self.http.call("PATCH", f"/api/v1/nodes/{name}/status", body={"status": obj["status"]},
                       content_type="application/merge-patch+json")

    def _heartbeat_loop(self) -> None:
        """The node lifecycle controller marks a silent node NotReady (40 s) and evicts its pods: keep talking."""
        while not self._stop.wait(HEARTBEAT_SECONDS):
            now = now_rfc3339()
            for obj in self.node_objects:
                conditions = [{**c, "lastHeartbeatTime": now} for c in obj["status"]["conditions"]]
                try:
                    self.http.call("PATCH", f"/api/v1/nodes/{obj['metadata']['name']}/status",
                                   body={"status": {"conditions": conditions}},
                                   content_type="application/merge-patch+json")
                except (HttpError, OSError) as exc:
                    log.warning("kubesim node side: heartbeat failed: %s", exc)

    def discover(self) -> None:
        """Watch the custom resources (CUSTOM) the server serves now; a watch whose resource went stops itself."""
        try:
            groups = {g["name"]: {v["groupVersion"] for v in g.get("versions") or []}
                      for g in self.http.call("GET", "/apis").get("groups") or []}
            served = set()
            for group_version in {f"{r.group}/{r.version}" for r in CUSTOM.values()
                                  if self.operators is None or r.group in self.operators}:
                if group_version in groups.get(group_version.split("/")[0], ()):
                    listed = self.http.call("GET", f"/apis/{group_version}")
                    plurals = {r["name"] for r in listed.get("resources") or []}
                    served |= {k for k, r in CUSTOM.items() if r.api_version == group_version and r.plural in plurals}
        except (HttpError, OSError, ValueError) as exc:
            log.info("kubesim node side: discovery failed: %s", exc)
            return
        for key in sorted(served - self.watching):
            self.watching.add(key)
            self._spawn(f"kubesim-watch-{key}", self._watch_loop, key)

    def _discovery_loop(self) -> None:
        while not self._stop.wait(DISCOVERY_SECONDS):
            self.discover()

    def _watch_loop(self, key: str) -> None:
        """List, then watch from the list's version; on 410 or a dropped stream, list again (a reflector). A
        custom resource that is no longer served (404) ends its watch; discovery starts it again if it comes back."""
        path = PATHS.get(key) or object_path(key, None)
        while not self._stop.is_set():
            try:
                try:
                    listed = self.http.call("GET", path)
                except HttpError as exc:
                    if exc.status == 404 and key in CUSTOM:
                        self.store.forget_all(key)
                        self.watching.discard(key)
                        return
                    raise
                self._replace(key, listed)
                self._watch(key, path, listed)
            except (HttpError, OSError, ValueError) as exc:
                if not self._stop.is_set():
                    log.info("kubesim node side: %s watch restarts: %s", key, exc)
                    self._stop.wait(0.5)

    def _replace(self, key: str, listed: dict) -> None:
        """The mirror of a kind becomes what a list says."""
        kind = listed.get("kind", "").removesuffix("List")
        api_version = listed.get("apiVersion") or "v1"
        seen = set()
        for item in listed.get("items") or []:
            self.store.apply(key, "ADDED", {"apiVersion": api_version, "kind": kind, **item})
            seen.add((item["metadata"].get("namespace", ""), item["metadata"]["name"]))
        with self.store.lock:
            for where in [w for w in self.store._objects[key] if w not in seen]:
                self.store._forget(key, where, self.store._objects[key][where])

    def _watch(self, key: str, path: str, listed: dict) -> None:
        """Watch from a list's version until stopped; an ERROR event or a dropped stream raises."""
        kind = listed.get("kind", "").removesuffix("List")
        api_version = listed.get("apiVersion") or "v1"
        version = listed["metadata"]["resourceVersion"]
        while not self._stop.is_set():
            for event in self.http.watch(path, version):
                obj = event.get("object") or {}
                if event.get("type") == "ERROR":
                    raise HttpError(obj.get("code", 500), obj)
                version = obj.get("metadata", {}).get("resourceVersion", version)
                if event.get("type") != "BOOKMARK":
                    self.store.apply(key, event["type"], {"apiVersion": api_version, "kind": kind, **obj})
                if self._stop.is_set():
                    return

    # --- the kubelet's log endpoint --------------------------------------------------------------------------

    def _start_log_server(self) -> int:
        nodes = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format, *args):  # noqa: A002
                pass

            def do_GET(self):  # noqa: N802 - the http.server convention
                url = urllib.parse.urlsplit(self.path)
                if url.path.startswith(f"/apis/{METRICS_GROUP}/v1beta1") and nodes.serve_metrics:
                    return nodes.serve_metrics_api(self, url.path, dict(urllib.parse.parse_qsl(url.query)))
                parts = url.path.strip("/").split("/")
                if len(parts) != 4 or parts[0] != "containerLogs" or not nodes.serve_logs:
                    return self._send(404, "not found")
                _, namespace, name, container = parts
                query = dict(urllib.parse.parse_qsl(url.query))
                query["container"] = container
                nodes.serve_log(self, namespace, name, query)

            def _send_json(self, code: int, body: dict) -> None:
                reply(self, code, json.dumps(body).encode(), "application/json")

            def _send(self, code: int, text: str) -> None:
                reply(self, code, text.encode(), "text/plain")

        self._log_server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._log_server.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        folder = _self_signed()
        context.load_cert_chain(folder / "tls.crt", folder / "tls.key")
        shutil.rmtree(folder)  # loaded: the key need not stay on disk
        self._log_server.socket = context.wrap_socket(self._log_server.socket, server_side=True)
        self._spawn("kubesim-kubelet-logs", self._log_server.serve_forever)
        return self._log_server.server_address[1]

    def serve_log(self, handler, namespace: str, name: str, query: dict) -> None:
        """The log so far; with follow=true, then each new line as the container writes it, until it ends."""
        kubelet = self.controller.kubelet
        with self.store.lock:
            pod = self.store.get("pods", namespace, name)
            try:
                text = kubelet.logs(pod, query) if pod else None
            except ApiError as exc:
                return handler._send(exc.code, exc.message)
        if text is None:
            return handler._send(404, f'pods "{name}" not found')
        handler.send_response(200)
        handler.send_header("Content-Type", "text/plain")
        handler.end_headers()
        handler.wfile.write(text.encode())
        if query.get("follow") != "true":
            return
        sent = text.count("\n")
        unbounded = {k: v for k, v in query.items() if k != "tailLines"}
        while not self._stop.wait(max(self.tick, 0.5)):
            with self.store.lock:
                pod = self.store.get("pods", namespace, name)
                state = kubelet.states.get(pod["metadata"]["uid"]) if pod else None
                lines = kubelet.logs(pod, unbounded).splitlines(keepends=True) if state else []
            total = len(lines)
            if query.get("tailLines"):
                total = max(total, sent)  # a tail shows the last lines; what follows it is new
            new = lines[len(lines) - (total - sent):] if total > sent else []
            try:
                handler.wfile.write("".join(new).encode())
                handler.wfile.flush()
            except OSError:
                return
            sent = total
            if state is None or state.stage in ("succeeded", "failed"):
                return


def reply(handler, code: int, body: bytes, content_type: str) -> None:
    """A whole answer of one of the node side's own HTTP endpoints (metrics, Prometheus, kubelet)."""
    handler.send_response(code)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _self_signed() -> Path:
    """A throwaway serving certificate for the kubelet endpoint (the API server does not verify kubelets
    unless started with --kubelet-certificate-authority)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubesim-kubelet")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    folder = Path(tempfile.mkdtemp(prefix="kubesim-kubelet-"))
    (folder / "tls.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (folder / "tls.key").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                       serialization.NoEncryption()))
    return folder


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kubesim.node.remote", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--server", required=True, help="the API server's URL")
    parser.add_argument("--token", required=True, help="a bearer token allowed to write nodes and pods/status")
    parser.add_argument("--ca-file", help="the API server's CA certificate (PEM)")
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--gpus-per-node", type=int, default=8)
    parser.add_argument("--pull-seconds", type=float, default=0.3)
    parser.add_argument("--run-seconds", type=float, default=1.0)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    nodes = RemoteNodes(args.server, args.token, ca_file=args.ca_file, nodes=args.nodes,
                        gpus_per_node=args.gpus_per_node, pull_seconds=args.pull_seconds,
                        run_seconds=args.run_seconds).start()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    log.warning("kubesim node side: %d nodes on %s", args.nodes, args.server)
    done.wait()
    nodes.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
