"""The only module that talks to Kubernetes, through the official client. Plain dicts in and out.

`connect(cluster)` builds a client from a Cluster row (kubeconfig, or API server URL + bearer token)."""

import tempfile
import threading
import time

import urllib3
import yaml
from django.conf import settings
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

# Errors worth a retry: the API server is unreachable, overloaded or briefly failing.
TRANSIENT_STATUS = {408, 425, 429, 500, 502, 503, 504}


class TransientClusterError(Exception):
    """The cluster did not answer usefully; the same call may work later."""


class PermanentClusterError(Exception):
    """The cluster refused the request for good (invalid object, forbidden): the workload fails with this."""


TRANSIENT_ERRORS = (TransientClusterError, urllib3.exceptions.HTTPError, ConnectionError, TimeoutError)


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


class Connection:
    """An ApiClient for one cluster with its rate limit and timeout."""

    def __init__(self, api_client: client.ApiClient, *, cluster_id: str = ""):
        self.api = api_client
        self.cluster_id = cluster_id
        self.timeout = settings.KUBE_REQUEST_TIMEOUT_SECONDS
        self.limiter = _RateLimiter(settings.KUBE_QPS, burst=max(1, int(settings.KUBE_QPS * 2)))

    def call(self, fn, *args, **kwargs):
        """Call an API method; sort its failures into transient and permanent errors."""
        self.limiter.acquire()
        kwargs.setdefault("_request_timeout", self.timeout)
        try:
            return fn(*args, **kwargs)
        except ApiException as exc:
            if exc.status in TRANSIENT_STATUS or exc.status == 0:
                raise TransientClusterError(f"{exc.status} {exc.reason}") from exc
            raise

    def close(self) -> None:
        self.api.close()


_connections: dict[tuple, Connection] = {}
_connections_lock = threading.Lock()


def _api_client(cluster) -> client.ApiClient:
    if cluster.kubeconfig:
        configuration = client.Configuration()
        config.load_kube_config_from_dict(yaml.safe_load(cluster.kubeconfig), client_configuration=configuration)
        return client.ApiClient(configuration)
    configuration = client.Configuration(host=cluster.api_server_url.rstrip("/"))
    if cluster.token:
        configuration.api_key = {"authorization": f"Bearer {cluster.token}"}
    configuration.verify_ssl = cluster.verify_tls
    if cluster.ca_cert:
        with tempfile.NamedTemporaryFile("w", suffix=".crt", delete=False) as handle:
            handle.write(cluster.ca_cert)
        configuration.ssl_ca_cert = handle.name
    configuration.retries = False
    return client.ApiClient(configuration)


def connect(cluster) -> Connection:
    """A cached connection per cluster and credentials version (a changed row makes a new client)."""
    key = (str(cluster.pk), cluster.updated_at.isoformat() if cluster.updated_at else "")
    with _connections_lock:
        connection = _connections.get(key)
        if connection is None:
            for old in [k for k in _connections if k[0] == key[0]]:
                _connections.pop(old).close()
            connection = _connections[key] = Connection(_api_client(cluster), cluster_id=str(cluster.pk))
        return connection


def version(conn: Connection) -> dict:
    info = conn.call(client.VersionApi(conn.api).get_code, _request_timeout=3)
    return {"gitVersion": info.git_version, "platform": info.platform}


def namespace_ensure(conn: Connection, name: str, *, labels: dict | None = None) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "paas-studio", **(labels or {})}},
    }
    try:
        conn.call(client.CoreV1Api(conn.api).create_namespace, body)
    except ApiException as exc:
        if exc.status != 409:  # AlreadyExists: done before
            raise PermanentClusterError(exc.body or str(exc)) from exc
