"""The streaming subresources of a pod — exec, attach and portforward — as WebSocket connections to the cluster's
API server (Kubernetes' channel protocols: `v5.channel.k8s.io`, `v4.channel.k8s.io`).

`stream_endpoint(cluster)` is read from the Cluster row synchronously (its URL, token or kubeconfig, TLS settings),
and `open_stream` connects with it: the cluster-URL network rules are checked on the URL and again at the address
the socket reached, before the upgrade request (and its credentials) is sent, as the REST client's connections
are (studio.outbound). Frames are not looked into here: the caller relays them."""

from __future__ import annotations

import asyncio
import json
import socket
import ssl
from dataclasses import dataclass, field
from urllib.parse import urlencode, urlsplit

import websockets
from websockets.asyncio.client import ClientConnection, connect

from studio.addresses import address_problem
from studio.clusters import access as cluster_access
from studio.clusters.kube.client import POD, PermanentClusterError, _configured_client, resource_path

SUBRESOURCES = ("exec", "attach", "portforward")
OPEN_TIMEOUT = 15
MAX_FRAME = 4 * 1024 * 1024  # a terminal or a tunnel sends small frames; the cluster's limit is larger


@dataclass(frozen=True)
class StreamEndpoint:
    """What a WebSocket to one cluster needs, read from its row (no model, no client object)."""

    url: str  # https://host:port (no trailing slash)
    headers: dict = field(default_factory=dict)  # Authorization
    verify: bool = True
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    server_name: str | None = None

    def ssl_context(self) -> ssl.SSLContext | None:
        if urlsplit(self.url).scheme != "https":
            return None
        context = ssl.create_default_context(cafile=self.ca_file)
        if not self.verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if self.cert_file:
            context.load_cert_chain(self.cert_file, self.key_file)
        return context


class StreamRefused(PermanentClusterError):
    """The cluster answered the upgrade with an HTTP error (`status`: 403, 404, 400 …) or could not be reached
    (`status` 0)."""


def stream_endpoint(cluster) -> StreamEndpoint:
    """The cluster's API server and credentials, as the REST client is configured for the same row."""
    configuration = _configured_client(cluster).configuration
    headers = {}
    authorization = (configuration.api_key or {}).get("authorization") or (configuration.api_key or {}).get(
        "BearerToken")
    if authorization:
        prefix = (configuration.api_key_prefix or {}).get("authorization")
        headers["Authorization"] = f"{prefix} {authorization}" if prefix else authorization
    return StreamEndpoint(url=configuration.host.rstrip("/"), headers=headers,
                          verify=bool(configuration.verify_ssl), ca_file=configuration.ssl_ca_cert,
                          cert_file=configuration.cert_file, key_file=configuration.key_file,
                          server_name=getattr(configuration, "tls_server_name", None))


def stream_path(namespace: str, pod: str, subresource: str, query: list[tuple[str, str]]) -> str:
    if subresource not in SUBRESOURCES:
        raise ValueError(subresource)
    return f"{resource_path(*POD, namespace=namespace, name=pod)}/{subresource}?{urlencode(query)}"


def _checked_socket(host: str, port: int) -> socket.socket:
    """A connected socket to the API server, refused (closed) when the address it reached may not be used."""
    try:
        sock = socket.create_connection((host, port), timeout=OPEN_TIMEOUT)
    except OSError as exc:
        raise StreamRefused(f"The cluster API is unreachable: {exc.__class__.__name__}") from exc
    problem = address_problem(sock.getpeername()[0].split("%", 1)[0])
    if problem:
        sock.close()
        raise StreamRefused(f"The cluster's address cannot be used: {host} may not be used: {problem}.")
    sock.settimeout(None)
    return sock


async def open_stream(endpoint: StreamEndpoint, namespace: str, pod: str, subresource: str,
                      query: list[tuple[str, str]], subprotocols: list[str]) -> ClientConnection:
    """The upgraded connection to the pod's subresource, with the subprotocol the cluster chose
    (`connection.subprotocol`). StreamRefused when the cluster refuses, with its HTTP status."""
    try:
        cluster_access.check_url("apiServerUrl", endpoint.url)
    except cluster_access.AccessRefused as exc:
        raise StreamRefused(f"The cluster's address cannot be used: {exc}") from exc
    parts = urlsplit(endpoint.url)
    secure = parts.scheme == "https"
    port = parts.port or (443 if secure else 80)
    sock = await asyncio.to_thread(_checked_socket, parts.hostname, port)
    uri = ("wss" if secure else "ws") + f"://{parts.netloc}{parts.path}" + stream_path(namespace, pod, subresource,
                                                                                        query)
    options = {"ssl": endpoint.ssl_context(), "server_hostname": endpoint.server_name or parts.hostname} if secure \
        else {}
    try:
        return await connect(uri, sock=sock, subprotocols=subprotocols, additional_headers=endpoint.headers,
                             compression=None, open_timeout=OPEN_TIMEOUT, ping_interval=None, proxy=None,
                             max_size=MAX_FRAME, user_agent_header="paas-studio", **options)
    except websockets.InvalidStatus as exc:
        sock.close()
        status = exc.response.status_code
        raise StreamRefused(_refusal_message(exc.response.body, status), status=status) from exc
    except (OSError, TimeoutError, ssl.SSLError, websockets.InvalidHandshake) as exc:
        sock.close()
        raise StreamRefused(f"The cluster API did not open the stream: {exc.__class__.__name__}") from exc


def _refusal_message(body: bytes | None, status: int) -> str:
    """The message of the Status the API server answered with; never any other body (the URL may be no cluster)."""
    try:
        document = json.loads(body or b"")
    except ValueError:
        return f"HTTP {status}"
    if isinstance(document, dict) and document.get("kind") == "Status" and document.get("message"):
        return str(document["message"])[:500]
    return f"HTTP {status}"
