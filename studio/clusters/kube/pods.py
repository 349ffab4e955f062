"""Reads of what runs: pod logs (bounded, or followed), pod metrics (metrics.k8s.io) and Prometheus queries
through the API server's service proxy."""


import json
import time
from collections.abc import Iterator

import urllib3

from studio import outbound
from studio.clusters import access as cluster_access
from studio.clusters.kube.client import (
    API_CALLS,
    API_ERRORS,
    POD,
    POD_METRICS,
    Connection,
    PermanentClusterError,
    TransientClusterError,
    resource_path,
    unreachable_reason,
)
from studio.clusters.kube.objects import list_objects

# --- pod logs ------------------------------------------------------------------------------------------

LOG_LIMIT_BYTES = 10 * 1024 * 1024  # never hold more than this of one log in memory


def pod_log(conn: Connection, namespace: str, name: str, *, container: str = "", tail_lines: int | None = None,
            since_seconds: int | None = None, limit_bytes: int = LOG_LIMIT_BYTES, timestamps: bool = False,
            previous: bool = False) -> str:
    """A container's log so far (the kubelet's, through the API server's pods/log). A pod that has no
    running kubelet behind it is answered by the server with an error, raised as a ClusterError."""
    response = _log_request(conn, namespace, name, container=container, tail_lines=tail_lines,
                            since_seconds=since_seconds, limit_bytes=limit_bytes, follow=False,
                            timestamps=timestamps, previous=previous)
    try:
        return response.data.decode("utf-8", "replace")
    finally:
        response.release_conn()


def pod_log_follow(conn: Connection, namespace: str, name: str, *, container: str = "",
                   tail_lines: int | None = None, since_seconds: int | None = None,
                   max_seconds: float = 300.0, timestamps: bool = False, previous: bool = False) -> Iterator[bytes]:
    """The log, then what the container writes next, as byte chunks, until the container ends, the server
    closes the stream or `max_seconds` pass. The first request is made before the first chunk is asked for,
    so that a refusal (no kubelet, no such container) raises here, while the caller can still answer it."""
    response = _log_request(conn, namespace, name, container=container, tail_lines=tail_lines,
                            since_seconds=since_seconds, limit_bytes=None, follow=True, read_timeout=max_seconds,
                            timestamps=timestamps, previous=previous)

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
                 limit_bytes, follow: bool, read_timeout: float | None = None, timestamps: bool = False,
                 previous: bool = False):
    query = {"container": container, "tailLines": tail_lines, "sinceSeconds": since_seconds,
             "limitBytes": limit_bytes, "follow": "true" if follow else None,
             "timestamps": "true" if timestamps else None, "previous": "true" if previous else None}
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


_plain_pool = outbound.pool_manager(num_pools=4)  # each connection checked at the address it reached


def _plain_get(conn: Connection, url: str, fields: dict) -> dict:
    conn.limiter.acquire()
    API_CALLS.labels(conn.cluster_name, "query", "prometheus").inc()
    try:
        response = _plain_pool.request("GET", url, fields=fields, timeout=conn.timeout, retries=False)
    except outbound.AddressRefused as exc:  # the name led elsewhere than where it was checked
        raise PermanentClusterError(f"Prometheus cannot be used: {exc}") from exc
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
