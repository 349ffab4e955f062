"""The only module that talks to Kubernetes, through the official client. Plain dicts in and out.

`connect(cluster)` builds a client from a Cluster row (kubeconfig, or API server URL + bearer token). Every
request goes through `Connection.request`: a client-side rate limit, a timeout, Prometheus counters and the
sorting of failures into transient (worth a retry) and permanent (the cluster refused for good). Bodies are
read with `_preload_content=False` and `json.loads`: much faster than the typed models for big lists.
"""

import json
import tempfile
import threading
import time
from collections.abc import Iterator

import urllib3
import yaml
from django.conf import settings
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from prometheus_client import Counter

MANAGED_BY_SELECTOR = "app.kubernetes.io/managed-by=paas-studio"
WORKLOAD_ID_LABEL = "paas-studio/workload-id"
# Errors worth a retry: the API server is unreachable, overloaded or briefly failing.
TRANSIENT_STATUS = {408, 425, 429, 500, 502, 503, 504}
LIST_PAGE_SIZE = 500

API_CALLS = Counter("studio_cluster_api_calls_total", "Requests to cluster APIs.", ["cluster", "verb", "resource"])
API_ERRORS = Counter("studio_cluster_api_errors_total", "Failed requests to cluster APIs, by HTTP status.",
                     ["cluster", "verb", "resource", "status"])


class ClusterError(Exception):
    def __init__(self, message: str, *, status: int = 0, reason: str = ""):
        super().__init__(message)
        self.message, self.status, self.reason = message, status, reason


class TransientClusterError(ClusterError):
    """The cluster did not answer usefully; the same call may work later."""


class PermanentClusterError(ClusterError):
    """The cluster refused the request for good (invalid object, forbidden): the workload fails with this."""


class NotFound(PermanentClusterError):
    pass


class AlreadyExists(PermanentClusterError):
    pass


class Expired(TransientClusterError):
    """410: a continue token or watch resourceVersion fell out of the server's history; list again."""


TRANSIENT_ERRORS = (TransientClusterError, urllib3.exceptions.HTTPError, ConnectionError, TimeoutError)

# (apiVersion, kind) -> (plural, namespaced): every kind this project reads or writes.
RESOURCES = {
    ("v1", "Namespace"): ("namespaces", False),
    ("v1", "Pod"): ("pods", True),
    ("v1", "Service"): ("services", True),
    ("v1", "PersistentVolumeClaim"): ("persistentvolumeclaims", True),
    ("v1", "ConfigMap"): ("configmaps", True),
    ("v1", "Secret"): ("secrets", True),
    ("v1", "Event"): ("events", True),
    ("batch/v1", "Job"): ("jobs", True),
    ("apps/v1", "Deployment"): ("deployments", True),
    ("networking.k8s.io/v1", "Ingress"): ("ingresses", True),
    ("autoscaling/v2", "HorizontalPodAutoscaler"): ("horizontalpodautoscalers", True),
    ("serving.knative.dev/v1", "Service"): ("services", True),
    ("metrics.k8s.io/v1beta1", "PodMetrics"): ("pods", True),
}
POD = ("v1", "Pod")
EVENT = ("v1", "Event")
POD_METRICS = ("metrics.k8s.io/v1beta1", "PodMetrics")


def resource_path(api_version: str, kind: str, *, namespace: str | None = None, name: str | None = None) -> str:
    plural, namespaced = RESOURCES[(api_version, kind)]
    path = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    if namespaced and namespace:
        path += f"/namespaces/{namespace}"
    path += f"/{plural}"
    return f"{path}/{name}" if name else path


def _label(api_version: str, kind: str) -> str:
    """The `resource` label of the counters: `jobs.batch`, `services.serving.knative.dev`, `pods`."""
    plural, _ = RESOURCES[(api_version, kind)]
    group = api_version.rpartition("/")[0]
    return f"{plural}.{group}" if group else plural


class _RateLimiter:
    """A token bucket shared by every call to one cluster (client-side QPS, as client-go does)."""

    def __init__(self, qps: float, burst: int):
        self.qps, self.capacity, self.tokens = qps, burst, float(burst)
        self.updated = time.monotonic()
        self.lock = threading.Lock()

    def acquire(self) -> None:
        with self.lock:
            now = time.monotonic()
            self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.qps)
            self.updated = now
            wait = 0.0 if self.tokens >= 1 else (1 - self.tokens) / self.qps
            self.tokens -= 1
        if wait:
            time.sleep(wait)


def _status_message(exc: ApiException) -> tuple[str, str]:
    """(message, reason) from the Status body the API server sends with an error."""
    body = exc.body.decode("utf-8", "replace") if isinstance(exc.body, bytes) else exc.body or ""
    try:
        status = json.loads(body)
    except ValueError:
        return (body.strip() or f"{exc.status} {exc.reason}")[:2000], str(exc.reason or "")
    if not isinstance(status, dict):
        return f"{exc.status} {exc.reason}", str(exc.reason or "")
    return str(status.get("message") or f"{exc.status} {exc.reason}"), str(status.get("reason") or exc.reason or "")


def _sorted_error(exc: ApiException) -> ClusterError:
    message, reason = _status_message(exc)
    if exc.status == 410:
        return Expired(message, status=410, reason=reason)
    if exc.status in TRANSIENT_STATUS or not exc.status:
        return TransientClusterError(message, status=exc.status or 0, reason=reason)
    if exc.status == 404:
        return NotFound(message, status=404, reason=reason)
    if exc.status == 409 and reason == "AlreadyExists":
        return AlreadyExists(message, status=409, reason=reason)
    return PermanentClusterError(message, status=exc.status, reason=reason)


class Connection:
    """An ApiClient for one cluster with its rate limit and timeout."""

    def __init__(self, api_client: client.ApiClient, *, cluster_id: str = "", cluster_name: str = ""):
        self.api = api_client
        self.cluster_id, self.cluster_name = cluster_id, cluster_name or cluster_id
        self.timeout = settings.KUBE_REQUEST_TIMEOUT_SECONDS
        self.limiter = _RateLimiter(settings.KUBE_QPS, burst=max(1, int(settings.KUBE_QPS * 2)))

    def call(self, fn, *args, verb: str = "call", resource: str = "", **kwargs):
        """Call an API method under the rate limit; sort its failures into transient and permanent errors.
        A float timeout only works as a (connect, read) pair: the client ignores a bare float."""
        self.limiter.acquire()
        API_CALLS.labels(self.cluster_name, verb, resource).inc()
        timeout = kwargs.pop("_request_timeout", self.timeout)
        kwargs["_request_timeout"] = timeout if isinstance(timeout, tuple) else (timeout, timeout)
        try:
            return fn(*args, **kwargs)
        except ApiException as exc:
            error = _sorted_error(exc)
            API_ERRORS.labels(self.cluster_name, verb, resource, str(error.status)).inc()
            raise error from exc
        except urllib3.exceptions.HTTPError as exc:
            API_ERRORS.labels(self.cluster_name, verb, resource, "0").inc()
            raise TransientClusterError(f"The cluster API is unreachable: {exc}") from exc

    def request(self, method: str, path: str, *, verb: str, resource: str, query: dict | None = None,
                body=None, content_type: str = "application/json", stream: bool = False, timeout=None):
        """One REST call; the JSON body as a dict (None when empty), or the raw response when `stream`."""
        params = [(k, v) for k, v in (query or {}).items() if v not in (None, "")]
        headers = {"Accept": "application/json", "Content-Type": content_type}
        response = self.call(
            self.api.call_api, path, method, query_params=params, header_params=headers, body=body,
            auth_settings=["BearerToken"], _preload_content=False, _return_http_data_only=True,
            _request_timeout=timeout or self.timeout, verb=verb, resource=resource,
        )
        if stream:
            return response
        try:
            data = response.data
        finally:
            response.release_conn()
        return json.loads(data) if data else None

    def close(self) -> None:
        self.api.close()


_connections: dict[tuple, Connection] = {}
_connections_lock = threading.Lock()


def _api_client(cluster) -> client.ApiClient:
    if cluster.kubeconfig:
        configuration = client.Configuration()
        try:
            config.load_kube_config_from_dict(yaml.safe_load(cluster.kubeconfig),
                                              client_configuration=configuration)
        except (config.ConfigException, yaml.YAMLError, TypeError, ValueError) as exc:
            raise PermanentClusterError(f"The cluster's kubeconfig cannot be used: {exc}") from exc
        configuration.retries = False
        return client.ApiClient(configuration)
    configuration = client.Configuration(host=cluster.api_server_url.rstrip("/"))
    if cluster.token:
        configuration.api_key = {"authorization": f"Bearer {cluster.token}"}
    configuration.verify_ssl = cluster.verify_tls
    if cluster.ca_cert:
        with tempfile.NamedTemporaryFile("w", suffix=".crt", delete=False) as handle:
            handle.write(cluster.ca_cert)
        configuration.ssl_ca_cert = handle.name
    configuration.retries = False  # retries are Celery's, with backoff; a hidden retry loop would hide outages
    return client.ApiClient(configuration)


def connect(cluster) -> Connection:
    """A cached connection per cluster and credentials version (a changed row makes a new client)."""
    key = (str(cluster.pk), cluster.updated_at.isoformat() if cluster.updated_at else "")
    with _connections_lock:
        connection = _connections.get(key)
        if connection is None:
            for old in [k for k in _connections if k[0] == key[0]]:
                _connections.pop(old).close()
            connection = _connections[key] = Connection(
                _api_client(cluster), cluster_id=str(cluster.pk), cluster_name=cluster.name
            )
        return connection


# --- discovery -----------------------------------------------------------------------------------------

def version(conn: Connection) -> dict:
    info = conn.request("GET", "/version", verb="get", resource="version", timeout=3)
    return {"gitVersion": info.get("gitVersion", ""), "platform": info.get("platform", "")}


def has_api_group(conn: Connection, group: str) -> bool:
    """Whether the server serves an API group (e.g. `serving.knative.dev` when Knative is installed)."""
    groups = conn.request("GET", "/apis", verb="get", resource="discovery") or {}
    return any(g.get("name") == group for g in groups.get("groups") or [])


# --- objects -------------------------------------------------------------------------------------------

def get(conn: Connection, api_version: str, kind: str, namespace: str | None, name: str) -> dict:
    path = resource_path(api_version, kind, namespace=namespace, name=name)
    return conn.request("GET", path, verb="get", resource=_label(api_version, kind))


def create(conn: Connection, obj: dict) -> dict:
    namespace = obj["metadata"].get("namespace")
    path = resource_path(obj["apiVersion"], obj["kind"], namespace=namespace)
    return conn.request("POST", path, verb="create", resource=_label(obj["apiVersion"], obj["kind"]), body=obj)


def create_or_adopt(conn: Connection, obj: dict, *, owner_label: str = WORKLOAD_ID_LABEL) -> tuple[dict, bool]:
    """(object, created). Names are deterministic, so 409 AlreadyExists usually means "done before": the
    existing object is adopted when it carries the same `owner_label` value, else it is a permanent conflict."""
    try:
        return create(conn, obj), True
    except AlreadyExists:
        meta = obj["metadata"]
        existing = get(conn, obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])
        ours = (meta.get("labels") or {}).get(owner_label)
        theirs = ((existing.get("metadata") or {}).get("labels") or {}).get(owner_label)
        if ours != theirs:
            raise PermanentClusterError(
                f'{obj["kind"]} "{meta["name"]}" already exists in namespace {meta.get("namespace")} and belongs '
                f"to {'another workload' if theirs else 'someone else'}.", status=409, reason="AlreadyExists",
            ) from None
        return existing, False


def patch(conn: Connection, api_version: str, kind: str, namespace: str | None, name: str, body: dict) -> dict:
    """A JSON merge patch (RFC 7386): works for custom resources too, unlike a strategic merge."""
    path = resource_path(api_version, kind, namespace=namespace, name=name)
    return conn.request("PATCH", path, verb="patch", resource=_label(api_version, kind), body=body,
                        content_type="application/merge-patch+json")


def delete(conn: Connection, api_version: str, kind: str, namespace: str | None, name: str, *,
           propagation: str = "Background") -> bool:
    """Delete with dependents (pods of a Job, ReplicaSets of a Deployment); False when already gone."""
    path = resource_path(api_version, kind, namespace=namespace, name=name)
    try:
        conn.request("DELETE", path, verb="delete", resource=_label(api_version, kind),
                     body={"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation})
    except NotFound:
        return False
    return True


def namespace_ensure(conn: Connection, name: str, *, labels: dict | None = None) -> bool:
    """Create the namespace unless it exists; True when created."""
    body = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "paas-studio", **(labels or {})}},
    }
    try:
        create(conn, body)
    except AlreadyExists:
        return False
    except PermanentClusterError as exc:
        # Least privilege: an account that may not create namespaces is answered 403 even when it exists.
        if exc.status != 403:
            raise
        try:
            get(conn, "v1", "Namespace", None, name)
        except PermanentClusterError:
            raise exc from None
        return False
    return True


def list_objects(conn: Connection, api_version: str, kind: str, *, namespace: str | None = None,
                 label_selector: str = "", field_selector: str = "", limit: int = LIST_PAGE_SIZE) -> list[dict]:
    """Every object of a kind matching the selectors, read `limit` at a time (`continue` tokens). A token that
    expired (410) starts the list over, as client-go's pager does."""
    path = resource_path(api_version, kind, namespace=namespace)
    resource = _label(api_version, kind)
    items: list[dict] = []
    token = ""
    while True:
        query = {"labelSelector": label_selector, "fieldSelector": field_selector, "limit": limit,
                 "continue": token}
        try:
            page = conn.request("GET", path, verb="list", resource=resource, query=query) or {}
        except Expired:
            if not token:
                raise
            items, token = [], ""
            continue
        items.extend(_with_kind(page.get("items") or [], api_version, kind))
        token = (page.get("metadata") or {}).get("continue") or ""
        if not token:
            return items


def _with_kind(items: list[dict], api_version: str, kind: str) -> list[dict]:
    """Items of a typed list carry no apiVersion/kind; put them back so each object stands alone."""
    for item in items:
        item.setdefault("apiVersion", api_version)
        item.setdefault("kind", kind)
    return items


def watch(conn: Connection, api_version: str, kind: str, *, namespace: str | None = None,
          label_selector: str = "", timeout_seconds: int = 60) -> Iterator[tuple[str, dict]]:
    """("SYNCED", {"items": [...]}) with the full list first, then ("ADDED"|"MODIFIED"|"DELETED", object)
    as they happen, for `timeout_seconds`. When the server says the resourceVersion is too old (410), it
    lists again and yields a fresh "SYNCED" before watching on, as client-go's reflector does."""
    path = resource_path(api_version, kind, namespace=namespace)
    resource = _label(api_version, kind)
    deadline = time.monotonic() + timeout_seconds
    version_seen = None
    while time.monotonic() < deadline:
        if version_seen is None:
            listed = conn.request("GET", path, verb="list", resource=resource,
                                  query={"labelSelector": label_selector}) or {}
            version_seen = (listed.get("metadata") or {}).get("resourceVersion") or ""
            yield "SYNCED", {"items": _with_kind(listed.get("items") or [], api_version, kind)}
        remaining = max(1, int(deadline - time.monotonic()))
        query = {"watch": "true", "labelSelector": label_selector, "resourceVersion": version_seen,
                 "timeoutSeconds": remaining, "allowWatchBookmarks": "true"}
        try:
            response = conn.request("GET", path, verb="watch", resource=resource, query=query, stream=True,
                                    timeout=(conn.timeout, remaining + conn.timeout))
        except Expired:
            version_seen = None
            continue
        try:
            for event in _watch_events(response):
                if event.get("type") == "ERROR":
                    if (event.get("object") or {}).get("code") == 410:
                        version_seen = None  # relist
                        break
                    raise TransientClusterError(str((event.get("object") or {}).get("message")))
                obj = event.get("object") or {}
                version_seen = (obj.get("metadata") or {}).get("resourceVersion") or version_seen
                if event.get("type") != "BOOKMARK":
                    yield event["type"], _with_kind([obj], api_version, kind)[0]
        finally:
            response.release_conn()


def _watch_events(response) -> Iterator[dict]:
    buffer = b""
    for chunk in response.stream(4096, decode_content=True):
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if line.strip():
                yield json.loads(line)
    if buffer.strip():
        yield json.loads(buffer)


# --- metrics -------------------------------------------------------------------------------------------

def pod_metrics(conn: Connection, *, namespace: str | None = None, label_selector: str = "") -> list[dict]:
    """metrics.k8s.io PodMetrics (CPU and memory usage per container), one paged list."""
    return list_objects(conn, *POD_METRICS, namespace=namespace, label_selector=label_selector)


def prometheus_query(conn: Connection, prometheus_url: str, promql: str) -> list[dict]:
    """An instant query; the `result` vector ([{"metric": {...}, "value": [ts, "v"]}]). A Prometheus under
    the API server's URL (its service proxy) is reached with the cluster's client and credentials; any
    other URL directly, without credentials."""
    base = conn.api.configuration.host.rstrip("/")
    url = prometheus_url.rstrip("/") + "/api/v1/query"
    if url.startswith(base + "/"):
        body = conn.request("GET", url[len(base):], verb="query", resource="prometheus", query={"query": promql})
    else:
        body = _plain_get(conn, url, {"query": promql})
    if (body or {}).get("status") != "success":
        raise TransientClusterError(f"Prometheus query failed: {(body or {}).get('error', 'no answer')}")
    return (body.get("data") or {}).get("result") or []


_plain_pool = urllib3.PoolManager(num_pools=4)


def _plain_get(conn: Connection, url: str, fields: dict) -> dict:
    conn.limiter.acquire()
    API_CALLS.labels(conn.cluster_name, "query", "prometheus").inc()
    try:
        response = _plain_pool.request("GET", url, fields=fields, timeout=conn.timeout, retries=False)
    except urllib3.exceptions.HTTPError as exc:
        API_ERRORS.labels(conn.cluster_name, "query", "prometheus", "0").inc()
        raise TransientClusterError(f"Prometheus is unreachable: {exc}") from exc
    if response.status >= 400:
        API_ERRORS.labels(conn.cluster_name, "query", "prometheus", str(response.status)).inc()
        raise TransientClusterError(f"Prometheus answered {response.status}")
    return json.loads(response.data)
