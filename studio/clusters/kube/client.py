"""The client side of the one Kubernetes module (studio.clusters.kube): connections, the rate limit, the
sorting of failures into transient and permanent errors, and the kinds we know.

`connect(cluster)` builds a client from a Cluster row (kubeconfig, or API server URL + bearer token). Every
request goes through `Connection.request`: a client-side rate limit, a timeout, Prometheus counters and the
sorting of failures into transient (worth a retry) and permanent (the cluster refused for good). Bodies are
read with `_preload_content=False` and decoded by orjson (`perf.json_values.api_answer`): much faster than the
typed models for big lists.
"""

import hashlib
import json
import os
import socket
import tempfile
import threading
import time
from pathlib import Path

import urllib3
from django.conf import settings
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from prometheus_client import Counter

from perf.json_values import api_answer
from studio import outbound
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
    ("v1", "PersistentVolume"): ("persistentvolumes", False),
    ("storage.k8s.io/v1", "StorageClass"): ("storageclasses", False),
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
    # KAI Scheduler's queues (cluster-scoped) and the pod groups its pod-grouper makes (studio.clusters.scheduler).
    ("scheduling.run.ai/v2", "Queue"): ("queues", False),
    ("scheduling.run.ai/v2alpha2", "PodGroup"): ("podgroups", True),
    # KAI's scheduling shards (cluster-scoped): one per node pool, for KAI's operator to run a scheduler for.
    ("kai.scheduler/v1", "SchedulingShard"): ("schedulingshards", False),
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


def resource_label(api_version: str, kind: str) -> str:
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


def sorted_error(exc: ApiException) -> ClusterError:
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
            error = sorted_error(exc)
            API_ERRORS.labels(self.cluster_name, verb, resource, str(error.status)).inc()
            raise error from exc
        except urllib3.exceptions.HTTPError as exc:
            API_ERRORS.labels(self.cluster_name, verb, resource, "0").inc()
            raise TransientClusterError(f"The cluster API is unreachable: {unreachable_reason(exc)}") from exc
        except outbound.AddressRefused as exc:
            API_ERRORS.labels(self.cluster_name, verb, resource, "0").inc()
            raise PermanentClusterError(f"The cluster's address cannot be used: {exc}") from exc

    def request(self, method: str, path: str, *, verb: str, resource: str, query: dict | None = None,
                body=None, content_type: str = "application/json", stream: bool = False, timeout=None,
                accept: str = "application/json", kept=None):
        """One REST call; the JSON body as a dict (None when empty), or the raw response when `stream`. `kept`: a
        decoder that keeps only the fields the caller reads (`perf.kept_json`)."""
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
        return api_answer(data, kept) if data else None

    def close(self) -> None:
        self.api.close()


_connections: dict[tuple, Connection] = {}
_connections_lock = threading.Lock()


# Connections kept open per cluster (a watcher holds one per watch: a kind, or a kind in each namespace), and
# TCP keepalives, so that a peer gone without a word (a cut network) ends a quiet watch within about a minute.
POOL_SIZE = 64
KEEPALIVE = [(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)] + [
    (socket.IPPROTO_TCP, getattr(socket, name), value)
    for name, value in (("TCP_KEEPIDLE", 30), ("TCP_KEEPINTVL", 10), ("TCP_KEEPCNT", 3)) if hasattr(socket, name)]


def _api_client(cluster) -> client.ApiClient:
    api = _configured_client(cluster)
    api.rest_client.pool_manager.connection_pool_kw["socket_options"] = [
        *urllib3.connection.HTTPConnection.default_socket_options, *KEEPALIVE]
    # The address was checked when the client was built; each connection is checked again at the address it
    # reached, so that the name cannot lead elsewhere later (DNS rebinding) with the cluster's credentials.
    api.rest_client.pool_manager.pool_classes_by_scheme = outbound.POOL_CLASSES
    return api


def _configured_client(cluster) -> client.ApiClient:
    if cluster.kubeconfig:
        configuration = client.Configuration()
        try:
            # Inline credentials only: an exec plugin or a file reference must never run or be read here.
            kubeconfig = cluster_access.parse_kubeconfig(cluster.kubeconfig)
            config.load_kube_config_from_dict(kubeconfig, client_configuration=configuration)
        except (config.ConfigException, TypeError, ValueError) as exc:
            raise PermanentClusterError(f"The cluster's kubeconfig cannot be used: {exc}") from exc
        configuration.retries = False
        configuration.connection_pool_maxsize = POOL_SIZE
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
    configuration.connection_pool_maxsize = POOL_SIZE
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
