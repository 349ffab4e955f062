"""The only module that talks to Kubernetes, through the official client. Plain dicts in and out.

`connect(cluster)` builds a client from a Cluster row (kubeconfig, or API server URL + bearer token). Every
request goes through `Connection.request`: a client-side rate limit, a timeout, Prometheus counters and the
sorting of failures into transient (worth a retry) and permanent (the cluster refused for good). Bodies are
read with `_preload_content=False` and `json.loads`: much faster than the typed models for big lists.
"""

import base64
import hashlib
import json
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import urllib3
from django.conf import settings
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from prometheus_client import Counter

from studio.clusters import access as cluster_access

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
    ("v1", "Node"): ("nodes", False),
    ("batch/v1", "Job"): ("jobs", True),
    ("apps/v1", "Deployment"): ("deployments", True),
    ("networking.k8s.io/v1", "Ingress"): ("ingresses", True),
    ("autoscaling/v2", "HorizontalPodAutoscaler"): ("horizontalpodautoscalers", True),
    ("serving.knative.dev/v1", "Service"): ("services", True),
    ("metrics.k8s.io/v1beta1", "PodMetrics"): ("pods", True),
    # The Kubeflow Training Operator's jobs, and the PodGroups of gang schedulers (scheduler-plugins, Volcano).
    ("kubeflow.org/v1", "PyTorchJob"): ("pytorchjobs", True),
    ("kubeflow.org/v1", "TFJob"): ("tfjobs", True),
    ("kubeflow.org/v1", "MPIJob"): ("mpijobs", True),
    ("kubeflow.org/v1", "XGBoostJob"): ("xgboostjobs", True),
    ("kubeflow.org/v1", "JAXJob"): ("jaxjobs", True),
    ("scheduling.x-k8s.io/v1alpha1", "PodGroup"): ("podgroups", True),
    ("scheduling.volcano.sh/v1beta1", "PodGroup"): ("podgroups", True),
}
# Where a cluster does not serve an API version yet, the same object under the older version it does serve
# (Kubernetes < 1.23 has no autoscaling/v2; its v2beta2 HPA has the same fields).
OLDER_VERSIONS = {"autoscaling/v2": "autoscaling/v2beta2"}
RESOURCES[("autoscaling/v2beta2", "HorizontalPodAutoscaler")] = RESOURCES[("autoscaling/v2", "HorizontalPodAutoscaler")]
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
    """(message, reason) from the Status object a Kubernetes API server sends with an error. Any other body
    is never repeated (the URL may point at something that is not a cluster: its answer is not ours to show);
    then the message is the classified `HTTP <status> <reason>`."""
    body = exc.body.decode("utf-8", "replace") if isinstance(exc.body, bytes) else exc.body or ""
    classified = f"HTTP {exc.status} {exc.reason or ''}".strip()
    try:
        status = json.loads(body)
    except ValueError:
        return classified, str(exc.reason or "")
    if not isinstance(status, dict) or status.get("kind") != "Status":
        return classified, str(exc.reason or "")
    return str(status.get("message") or classified)[:2000], str(status.get("reason") or exc.reason or "")


def unreachable_reason(exc: Exception) -> str:
    """A short classified reason for a transport failure, without the remote side's words."""
    if isinstance(exc, urllib3.exceptions.MaxRetryError) and exc.reason is not None:
        exc = exc.reason
    if isinstance(exc, urllib3.exceptions.SSLError):
        return "TLS error"
    if isinstance(exc, urllib3.exceptions.NameResolutionError):
        return "host name not resolved"
    if isinstance(exc, urllib3.exceptions.NewConnectionError):  # a subclass of ConnectTimeoutError
        return "connection refused" if "refused" in str(exc).lower() else "cannot connect"
    if isinstance(exc, (urllib3.exceptions.ConnectTimeoutError, urllib3.exceptions.ReadTimeoutError)):
        return "timed out"
    if isinstance(exc, urllib3.exceptions.ProtocolError):
        return "connection broken"
    return "unreachable"


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
        self.served_versions: dict[str, str] = {}  # an API version -> the one this cluster serves for it
        self.namespaced_reads = False  # the account may not list across namespaces: list in each namespace
        self.namespaces_ensured: dict[str, float] = {}  # namespace -> when this process last ensured it

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
            raise TransientClusterError(f"The cluster API is unreachable: {unreachable_reason(exc)}") from exc

    def request(self, method: str, path: str, *, verb: str, resource: str, query: dict | None = None,
                body=None, content_type: str = "application/json", stream: bool = False, timeout=None,
                accept: str = "application/json"):
        """One REST call; the JSON body as a dict (None when empty), or the raw response when `stream`."""
        params = [(k, v) for k, v in (query or {}).items() if v not in (None, "")]
        headers = {"Accept": accept, "Content-Type": content_type}
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
            # Inline credentials only: an exec plugin or a file reference must never run or be read here.
            kubeconfig = cluster_access.parse_kubeconfig(cluster.kubeconfig)
            config.load_kube_config_from_dict(kubeconfig, client_configuration=configuration)
        except (config.ConfigException, TypeError, ValueError) as exc:
            raise PermanentClusterError(f"The cluster's kubeconfig cannot be used: {exc}") from exc
        configuration.retries = False
        return client.ApiClient(configuration)
    try:
        cluster_access.check_url("apiServerUrl", cluster.api_server_url)
    except cluster_access.AccessRefused as exc:
        raise PermanentClusterError(f"The cluster's address cannot be used: {exc}") from exc
    configuration = client.Configuration(host=cluster.api_server_url.rstrip("/"))
    if cluster.token:
        configuration.api_key = {"authorization": f"Bearer {cluster.token}"}
    configuration.verify_ssl = cluster.verify_tls
    if cluster.ca_cert:
        configuration.ssl_ca_cert = ca_file(cluster.ca_cert)
    configuration.retries = False  # retries are Celery's, with backoff; a hidden retry loop would hide outages
    return client.ApiClient(configuration)


def ca_file(pem: str) -> str:
    """The client reads a CA bundle from a file: one file per distinct bundle (named by its digest, written
    once, owner-only), not one left behind per connection."""
    folder = Path(settings.VAR_DIR) / "cluster-ca"
    folder.mkdir(mode=0o700, exist_ok=True)
    path = folder / (hashlib.sha256(pem.encode()).hexdigest()[:32] + ".crt")
    if not path.exists():
        with tempfile.NamedTemporaryFile("w", dir=folder, suffix=".tmp", delete=False) as handle:
            handle.write(pem)
        os.replace(handle.name, path)  # atomic: a concurrent reader never sees half a bundle
    return str(path)


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
    return group in api_groups(conn)


def api_groups(conn: Connection) -> set[str]:
    """The API groups the server serves, from one discovery request."""
    groups = conn.request("GET", "/apis", verb="get", resource="discovery") or {}
    return {g.get("name") for g in groups.get("groups") or []}


def served_version(conn: Connection, api_version: str) -> str:
    """`api_version`, or the older one the cluster serves instead (OLDER_VERSIONS); asked once per connection."""
    older = OLDER_VERSIONS.get(api_version)
    if older is None:
        return api_version
    if api_version not in conn.served_versions:
        group, _, version = api_version.partition("/")
        try:
            served = conn.request("GET", f"/apis/{group}", verb="get", resource="discovery") or {}
        except NotFound:
            served = {}
        versions = {v.get("version") for v in served.get("versions") or []}
        conn.served_versions[api_version] = api_version if version in versions or not versions else older
    return conn.served_versions[api_version]


# --- objects -------------------------------------------------------------------------------------------

def get(conn: Connection, api_version: str, kind: str, namespace: str | None, name: str) -> dict:
    api_version = served_version(conn, api_version)
    path = resource_path(api_version, kind, namespace=namespace, name=name)
    return conn.request("GET", path, verb="get", resource=_label(api_version, kind))


def create(conn: Connection, obj: dict) -> dict:
    namespace = obj["metadata"].get("namespace")
    obj = {**obj, "apiVersion": served_version(conn, obj["apiVersion"])}
    path = resource_path(obj["apiVersion"], obj["kind"], namespace=namespace)
    return conn.request("POST", path, verb="create", resource=_label(obj["apiVersion"], obj["kind"]), body=obj)


def dry_run_create(conn: Connection, obj: dict) -> dict:
    """The server's own verdict on creating `obj` (`dryRun=All`: admission, validation and defaulting, nothing
    stored): `{"allowed", "code", "reason", "message"}`. `allowed` is None when the cluster gave no verdict
    (unreachable, overloaded): the message is then our classification, never the remote body."""
    namespace = obj["metadata"].get("namespace")
    try:
        obj = {**obj, "apiVersion": served_version(conn, obj["apiVersion"])}
        path = resource_path(obj["apiVersion"], obj["kind"], namespace=namespace)
        conn.request("POST", path, verb="create", resource=_label(obj["apiVersion"], obj["kind"]), body=obj,
                     query={"dryRun": "All"})
    except TransientClusterError as exc:
        return {"allowed": None, "code": exc.status, "reason": "ClusterUnavailable", "message": exc.message}
    except PermanentClusterError as exc:
        return {"allowed": False, "code": exc.status, "reason": exc.reason, "message": exc.message}
    return {"allowed": True, "code": 201, "reason": "", "message": "The cluster would accept it."}


def dry_run_patch(conn: Connection, obj: dict, body: dict) -> dict:
    """`dry_run_create`'s verdict for a JSON merge patch of the existing `obj` (an upgrade's preview)."""
    meta = obj["metadata"]
    try:
        api_version = served_version(conn, obj["apiVersion"])
        path = resource_path(api_version, obj["kind"], namespace=meta.get("namespace"), name=meta["name"])
        conn.request("PATCH", path, verb="patch", resource=_label(api_version, obj["kind"]), body=body,
                     content_type="application/merge-patch+json", query={"dryRun": "All"})
    except TransientClusterError as exc:
        return {"allowed": None, "code": exc.status, "reason": "ClusterUnavailable", "message": exc.message}
    except PermanentClusterError as exc:
        return {"allowed": False, "code": exc.status, "reason": exc.reason, "message": exc.message}
    return {"allowed": True, "code": 200, "reason": "", "message": "The cluster would accept the change."}


def exists(conn: Connection, api_version: str, kind: str, namespace: str | None, name: str) -> bool:
    try:
        get(conn, api_version, kind, namespace, name)
    except NotFound:
        return False
    return True


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
    api_version = served_version(conn, api_version)
    path = resource_path(api_version, kind, namespace=namespace, name=name)
    return conn.request("PATCH", path, verb="patch", resource=_label(api_version, kind), body=body,
                        content_type="application/merge-patch+json")


def delete(conn: Connection, api_version: str, kind: str, namespace: str | None, name: str, *,
           propagation: str = "Background") -> bool:
    """Delete with dependents (pods of a Job, ReplicaSets of a Deployment); False when already gone."""
    api_version = served_version(conn, api_version)
    path = resource_path(api_version, kind, namespace=namespace, name=name)
    try:
        conn.request("DELETE", path, verb="delete", resource=_label(api_version, kind),
                     body={"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation})
    except NotFound:
        return False
    return True


NAMESPACE_ROLE = "paas-studio-namespace"  # deploy/rbac.yaml: what the product may do inside a project namespace


NAMESPACE_ENSURED_SECONDS = 60.0


def namespace_ensure(conn: Connection, name: str, *, labels: dict | None = None) -> bool:
    """Create the namespace unless it exists, and give this account its rights there; True when created."""
    created = _namespace_create(conn, name, labels=labels)
    namespace_access_ensure(conn, name)
    conn.namespaces_ensured[name] = time.monotonic()
    return created


def namespace_recently_ensured(conn: Connection, name: str) -> bool:
    """Whether this process ensured the namespace in the last minute: a burst of pushes to one project then
    makes one request each (the object) instead of three (namespace, RoleBinding, object). A namespace deleted
    meanwhile answers the object's create 404: `namespace_forget`, and the caller ensures it again."""
    ensured = conn.namespaces_ensured.get(name)
    return ensured is not None and time.monotonic() - ensured < NAMESPACE_ENSURED_SECONDS


def namespace_forget(conn: Connection, name: str) -> None:
    conn.namespaces_ensured.pop(name, None)


def _token_subject(conn: Connection) -> dict | None:
    """The RBAC subject of the connection's token when it is a service account's (a JWT whose `sub` is
    system:serviceaccount:<namespace>:<name>); None for any other credential. Read, not verified: it only
    names whom to bind, and the server checks the token on every request."""
    token = (conn.api.configuration.api_key or {}).get("authorization", "").removeprefix("Bearer ").strip()
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, TypeError):
        return None
    subject = str(claims.get("sub") or "").split(":") if isinstance(claims, dict) else []
    if len(subject) != 4 or subject[:2] != ["system", "serviceaccount"]:
        return None
    return {"kind": "ServiceAccount", "namespace": subject[2], "name": subject[3]}


def namespace_access_ensure(conn: Connection, namespace: str, *, wait_seconds: float = 10.0) -> bool:
    """Bind the ClusterRole `paas-studio-namespace` to this service account in `namespace` (a RoleBinding), as
    deploy/rbac.yaml lets it do for exactly that role; True when the binding was made now. Skipped for other
    credentials (an admin kubeconfig, kubesim's token), and where the cluster's operator made the binding
    (409) or keeps RBAC to themselves (403: the creates that follow say what is missing)."""
    subject = _token_subject(conn)
    if subject is None:
        return False
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "paas-studio", "namespace": namespace,
                            "labels": {"app.kubernetes.io/managed-by": "paas-studio"}},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NAMESPACE_ROLE},
               "subjects": [subject]}
    path = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings"
    try:
        conn.request("POST", path, verb="create", resource="rolebindings.rbac.authorization.k8s.io", body=binding)
    except AlreadyExists:
        return False
    except PermanentClusterError as exc:
        if exc.status == 403:
            return False
        raise
    # The authorizer reads bindings from a cache: wait until the new rights are in force before using them.
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            conn.request("GET", f"/apis/batch/v1/namespaces/{namespace}/jobs", verb="list", resource="jobs.batch",
                         query={"limit": 1})
            return True
        except PermanentClusterError as exc:
            if exc.status != 403 or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _namespace_create(conn: Connection, name: str, *, labels: dict | None = None) -> bool:
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
    served = served_version(conn, api_version)
    path = resource_path(served, kind, namespace=namespace)
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


def list_managed(conn: Connection, api_version: str, kind: str, *, label_selector: str = MANAGED_BY_SELECTOR,
                 field_selector: str = "") -> list[dict]:
    """Every object of a kind in the namespaces this product manages: one list across all namespaces where
    the account may, else (deploy/rbac.yaml: rights only inside project namespaces) one list in each namespace
    labelled managed-by=paas-studio. Which one is learned from the first 403 and kept for the connection."""
    if not conn.namespaced_reads:
        try:
            return list_objects(conn, api_version, kind, label_selector=label_selector,
                                field_selector=field_selector)
        except PermanentClusterError as exc:
            if exc.status != 403:
                raise
            conn.namespaced_reads = True
    items: list[dict] = []
    for namespace in list_objects(conn, "v1", "Namespace", label_selector=MANAGED_BY_SELECTOR):
        try:
            items.extend(list_objects(conn, api_version, kind, namespace=namespace["metadata"]["name"],
                                      label_selector=label_selector, field_selector=field_selector))
        except PermanentClusterError as exc:
            # A namespace without our RoleBinding: being deleted (its bindings go first), or one the operator
            # has not bound yet. Nothing of ours can be read or repaired there; the others still sync.
            if exc.status != 403:
                raise
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


# --- pod logs ------------------------------------------------------------------------------------------

LOG_LIMIT_BYTES = 10 * 1024 * 1024  # never hold more than this of one log in memory


def pod_log(conn: Connection, namespace: str, name: str, *, container: str = "", tail_lines: int | None = None,
            since_seconds: int | None = None, limit_bytes: int = LOG_LIMIT_BYTES) -> str:
    """A container's log so far (the kubelet's, through the API server's pods/log). A pod that has no
    running kubelet behind it is answered by the server with an error, raised as a ClusterError."""
    response = _log_request(conn, namespace, name, container=container, tail_lines=tail_lines,
                            since_seconds=since_seconds, limit_bytes=limit_bytes, follow=False)
    try:
        return response.data.decode("utf-8", "replace")
    finally:
        response.release_conn()


def pod_log_follow(conn: Connection, namespace: str, name: str, *, container: str = "",
                   tail_lines: int | None = None, since_seconds: int | None = None,
                   max_seconds: float = 300.0) -> Iterator[bytes]:
    """The log, then what the container writes next, as byte chunks, until the container ends, the server
    closes the stream or `max_seconds` pass. The first request is made before the first chunk is asked for,
    so that a refusal (no kubelet, no such container) raises here, while the caller can still answer it."""
    response = _log_request(conn, namespace, name, container=container, tail_lines=tail_lines,
                            since_seconds=since_seconds, limit_bytes=None, follow=True, read_timeout=max_seconds)

    def chunks() -> Iterator[bytes]:
        deadline = time.monotonic() + max_seconds
        try:
            for chunk in response.stream(4096, decode_content=True):
                yield chunk
                if time.monotonic() > deadline:
                    return
        except (urllib3.exceptions.HTTPError, OSError):
            return  # the stream ended under us (read timeout, server gone): the follow is over
        finally:
            response.release_conn()

    return chunks()


def _log_request(conn: Connection, namespace: str, name: str, *, container: str, tail_lines, since_seconds,
                 limit_bytes, follow: bool, read_timeout: float | None = None):
    query = {"container": container, "tailLines": tail_lines, "sinceSeconds": since_seconds,
             "limitBytes": limit_bytes, "follow": "true" if follow else None}
    path = resource_path(*POD, namespace=namespace, name=name) + "/log"
    timeout = (conn.timeout, read_timeout) if read_timeout else None
    return conn.request("GET", path, verb="get", resource="pods/log", query=query, stream=True, timeout=timeout,
                        accept="text/plain, application/json")


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
        try:
            cluster_access.check_url("prometheusUrl", prometheus_url)
        except cluster_access.AccessRefused as exc:
            raise PermanentClusterError(f"Prometheus cannot be used: {exc}") from exc
        body = _plain_get(conn, url, {"query": promql})
    if (body or {}).get("status") != "success":
        # Prometheus's errorType (bad_data, timeout, ...) classifies the failure; its free text is not repeated.
        error_type = "".join(c for c in str((body or {}).get("errorType") or "no answer")[:40] if c.isalnum() or c in "_ ")
        raise TransientClusterError(f"Prometheus query failed: {error_type}")
    return (body.get("data") or {}).get("result") or []


_plain_pool = urllib3.PoolManager(num_pools=4)


def _plain_get(conn: Connection, url: str, fields: dict) -> dict:
    conn.limiter.acquire()
    API_CALLS.labels(conn.cluster_name, "query", "prometheus").inc()
    try:
        response = _plain_pool.request("GET", url, fields=fields, timeout=conn.timeout, retries=False)
    except urllib3.exceptions.HTTPError as exc:
        API_ERRORS.labels(conn.cluster_name, "query", "prometheus", "0").inc()
        raise TransientClusterError(f"Prometheus is unreachable: {unreachable_reason(exc)}") from exc
    if response.status >= 400:
        API_ERRORS.labels(conn.cluster_name, "query", "prometheus", str(response.status)).inc()
        raise TransientClusterError(f"Prometheus answered HTTP {response.status}")
    try:
        return json.loads(response.data)
    except ValueError:
        raise TransientClusterError("Prometheus answered something that is not JSON") from None
