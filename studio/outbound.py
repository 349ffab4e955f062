"""Requests the server makes to URLs it was given — an identity provider's discovery document and the endpoints
it names, a cluster's Prometheus, container registries (assets/registries.py); next the webhooks. Each passes
the network rules of cluster URLs (studio.addresses: never link-local or metadata addresses; loopback and
private ones only where CLUSTER_ALLOWED_NETWORKS lists them) every time it is used, not only when it was saved:
a document read again later may name other endpoints, and a name may resolve elsewhere tomorrow.

- `fetch` checks the URL, and every redirect it answers, before anything is sent to it. It follows redirects of
  GET and HEAD only (a POST carries credentials in its body), at most MAX_REDIRECTS, and drops `auth` and the
  Authorization header once a redirect leaves the first URL's origin.
- Its connections (and those of `pool_manager`, and of the cluster API client: POOL_CLASSES) are checked again
  once open, at the address actually reached, before a byte of the request is sent: a name that resolved to an
  allowed address for the check and to a refused one for the connection (DNS rebinding) reaches nothing. Through a proxy the operator set (HTTPS_PROXY,
  ...), the connection reaches the proxy: the URL's name is checked, the proxy is the operator's choice.
- `SMTP` (notification channels' mail) checks its connection the same way.

A refusal is an `OutboundRefused`: a requests ConnectionError, so code that handles a service it cannot reach
handles it too; `field` and `reason` say which rule refused what."""

import smtplib
from urllib.parse import urljoin, urlsplit

import requests
import urllib3
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict

from studio.addresses import AccessRefused, address_problem, check_url

MAX_REDIRECTS = 5
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
FOLLOWED_METHODS = ("GET", "HEAD")


class OutboundRefused(requests.ConnectionError):
    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field, self.reason = field, reason


class AddressRefused(Exception):
    """A connection of `pool_manager` (or of `fetch`) reached an address the rules refuse. Not an OSError, so
    that neither urllib3 nor requests retries or wraps it; `fetch` answers it as an OutboundRefused."""


class _PeerChecked:
    """A connection that refuses the address it reached before it is used."""

    def _new_conn(self):  # urllib3's one place where the socket is opened, for plain and TLS connections alike
        sock = super()._new_conn()
        if not self.proxy:
            problem = address_problem(sock.getpeername()[0].split("%", 1)[0])
            if problem:
                sock.close()
                raise AddressRefused(f"{self.host} may not be used: {problem}.")
        return sock


class _HTTPConnection(_PeerChecked, urllib3.connection.HTTPConnection):
    pass


class _HTTPSConnection(_PeerChecked, urllib3.connection.HTTPSConnection):
    pass


class _HTTPPool(urllib3.HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(urllib3.HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


POOL_CLASSES = {"http": _HTTPPool, "https": _HTTPSPool}


class SMTP(smtplib.SMTP):
    """smtplib's client, its connection checked at the address it reached before the server's greeting is read
    (a name checked when the channel was saved or used may resolve elsewhere for the connection)."""

    def _get_socket(self, host, port, timeout):
        sock = super()._get_socket(host, port, timeout)
        problem = address_problem(sock.getpeername()[0].split("%", 1)[0])
        if problem:
            sock.close()
            raise AddressRefused(f"{host} may not be used: {problem}.")
        return sock


def pool_manager(**kwargs) -> urllib3.PoolManager:
    """A urllib3 pool manager whose connections are checked once open (AddressRefused), for callers that speak
    urllib3. The caller still checks each URL with `check` and follows no redirect unchecked."""
    manager = urllib3.PoolManager(**kwargs)
    manager.pool_classes_by_scheme = POOL_CLASSES
    return manager


class _Adapter(HTTPAdapter):
    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = POOL_CLASSES


def check(field: str, url: str) -> None:
    """OutboundRefused unless the URL may be reached now (its name resolved and each address checked)."""
    try:
        check_url(field, url)
    except AccessRefused as exc:
        raise OutboundRefused(field, exc.message) from None


def _origin(url: str) -> tuple:
    parts = urlsplit(url)
    return parts.scheme, parts.hostname, parts.port


def fetch(method: str, url: str, *, field: str, timeout: float, headers: dict | None = None, auth=None,
          data=None, verify: bool = True) -> requests.Response:
    """requests' answer to one request (redirects followed as the module says); OutboundRefused where a URL or
    an address is refused, requests' own exceptions where the service cannot be reached."""
    method = method.upper()
    headers = CaseInsensitiveDict(headers or {})
    origin = _origin(url)
    with requests.Session() as session:
        session.mount("http://", _Adapter())
        session.mount("https://", _Adapter())
        for _hop in range(MAX_REDIRECTS + 1):
            check(field, url)
            try:
                response = session.request(method, url, headers=headers, auth=auth, data=data, timeout=timeout,
                                           verify=verify, allow_redirects=False)
            except AddressRefused as exc:
                raise OutboundRefused(field, str(exc)) from None
            location = response.headers.get("Location")
            if response.status_code not in REDIRECT_STATUSES or not location or method not in FOLLOWED_METHODS:
                return response
            response.close()
            url = urljoin(url, location)
            if _origin(url) != origin:  # credentials stay with the origin they were meant for
                headers.pop("Authorization", None)
                auth = None
    raise OutboundRefused(field, f"more than {MAX_REDIRECTS} redirects.")
