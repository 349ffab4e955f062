"""Run:ai's `Registry` assets: a container registry's URL and login, whose repositories and tags are read by asking
the registry itself (the Docker Registry HTTP API v2 that every OCI registry speaks: `/v2/_catalog` and
`/v2/<name>/tags/list`), through the guarded outbound fetch (studio.outbound: the cluster URLs' network rules).

Authentication follows the registry's challenge: a request is sent without credentials first; a 401 naming
`Basic` is sent again with the asset's user and password, one naming `Bearer realm=...,service=...,scope=...` gets a
token from the realm (with the user and password) and is sent again with it (the token flow of Docker Hub, GHCR,
Harbor...). The password never leaves this module but in those requests; it is in no answer, log or error.

Errors are the caller's to act on: a registry that refuses the login is a 400 naming it (`spec.user` /
`spec.password`), an unknown repository a 400 naming `repository`, a registry that cannot be reached or answers
nonsense a 503 saying which."""

import json
import re
from urllib.parse import quote, urlencode, urljoin, urlsplit

import requests
from rest_framework.exceptions import ValidationError

from studio.errors import ServiceUnavailable
from studio.outbound import OutboundRefused, fetch

TIMEOUT = 10.0
MAX_PAGES = 20  # of `n` entries each: Run:ai's pickers list a registry's first repositories, not a whole mirror
PAGE_SIZE = 500
FIELD = "spec.url"
_CHALLENGE = re.compile(r'(\w+)="([^"]*)"')


class RegistryLogin:
    """Where a registry is and how to log in to it: the asset's url, user and password."""

    def __init__(self, url: str, user: str = "", password: str = ""):
        self.base = base_url(url)
        self.user, self.password = user or "", password or ""
        self._token: str | None = None

    def __repr__(self):  # never the password
        return f"RegistryLogin({self.base!r}, user={self.user!r})"


def base_url(url: str) -> str:
    """The registry's root from the asset's URL: `https://host[:port]` (a bare host means https; a path such as
    Docker Hub's web address `https://hub.docker.com/` is dropped, the API lives at the root)."""
    url = (url or "").strip()
    if "://" not in url:
        url = "https://" + url
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError({FIELD: ["Must be a registry's http(s) URL or host name."]})
    return f"{parts.scheme}://{parts.netloc}"


def _unreachable(login: RegistryLogin, why: str) -> ServiceUnavailable:
    return ServiceUnavailable(f"The registry at {login.base} could not be reached: {why}")


def _get(login: RegistryLogin, url: str, headers: dict | None = None, auth=None) -> requests.Response:
    try:
        return fetch("GET", url, field=FIELD, timeout=TIMEOUT, headers=headers, auth=auth)
    except OutboundRefused as exc:
        raise ValidationError({FIELD: [f"The registry's address may not be used: {exc.reason}"]}) from None
    except requests.Timeout:
        raise _unreachable(login, f"no answer within {TIMEOUT:g} seconds.") from None
    except requests.RequestException as exc:
        raise _unreachable(login, _reason(exc)) from None


def _reason(exc: Exception) -> str:
    text = str(exc)
    if "Connection refused" in text:
        return "the connection was refused."
    if "Name or service not known" in text or "nodename nor servname" in text or "Temporary failure" in text:
        return "its host name does not resolve."
    if "SSL" in text or "certificate" in text:
        return "its TLS certificate was not accepted."
    return "the connection failed."


def _refused_login(login: RegistryLogin) -> ValidationError:
    if not login.user and not login.password:
        return ValidationError({"spec.user": [f"The registry at {login.base} asks for a login; the asset has none."]})
    return ValidationError({"spec.password": [f"The registry at {login.base} refused the login of user "
                                              f"{login.user} (wrong user or password)."]})


def _token(login: RegistryLogin, challenge: dict) -> str:
    realm = challenge.get("realm")
    if not realm:
        raise _unreachable(login, "its Bearer challenge names no realm.")
    query = {k: challenge[k] for k in ("service", "scope") if challenge.get(k)}
    url = realm + ("&" if "?" in realm else "?") + urlencode(query) if query else realm
    auth = (login.user, login.password) if login.user or login.password else None
    response = _get(login, url, auth=auth)
    if response.status_code in (401, 403):
        raise _refused_login(login)
    if response.status_code != 200:
        raise _unreachable(login, f"its token service answered {response.status_code}.")
    try:
        found = response.json()
    except ValueError:
        raise _unreachable(login, "its token service did not answer JSON.") from None
    token = found.get("token") or found.get("access_token") if isinstance(found, dict) else None
    if not token:
        raise _unreachable(login, "its token service answered no token.")
    return token


def _parse_challenge(header: str) -> tuple[str, dict]:
    scheme, _, rest = (header or "").strip().partition(" ")
    return scheme.lower(), dict(_CHALLENGE.findall(rest))


def _ask(login: RegistryLogin, path: str) -> requests.Response:
    """GET a registry API path, logging in as the registry's challenge asks."""
    url = urljoin(login.base + "/", path.lstrip("/"))
    headers = {"Accept": "application/json"}
    if login._token:
        headers["Authorization"] = f"Bearer {login._token}"
    response = _get(login, url, headers=headers)
    if response.status_code != 401:
        return response
    scheme, challenge = _parse_challenge(response.headers.get("WWW-Authenticate", ""))
    if scheme == "basic":
        if not login.user and not login.password:
            raise _refused_login(login)
        response = _get(login, url, headers={"Accept": "application/json"}, auth=(login.user, login.password))
    elif scheme == "bearer":
        login._token = _token(login, challenge)
        response = _get(login, url, headers={"Accept": "application/json",
                                             "Authorization": f"Bearer {login._token}"})
    else:
        raise _unreachable(login, "it asks for a login this server does not speak.")
    if response.status_code == 401:
        raise _refused_login(login)
    return response


def _json(login: RegistryLogin, response: requests.Response) -> dict:
    try:
        found = response.json()
    except ValueError:
        found = None
    if not isinstance(found, dict):
        raise _unreachable(login, f"it did not answer the registry API's JSON (HTTP {response.status_code}).")
    return found


def _next_page(response: requests.Response) -> str | None:
    """The path of the next page from the registry's `Link: <...>; rel="next"` header."""
    link = response.headers.get("Link") or ""
    found = re.match(r'\s*<([^>]+)>\s*;\s*rel="?next"?', link)
    return found.group(1) if found else None


def _filtered(names, search: str | None) -> list[str]:
    names = [n for n in names if isinstance(n, str)]
    return sorted(n for n in names if not search or search.lower() in n.lower())


def repositories(login: RegistryLogin, *, search: str | None = None) -> list[str]:
    """The registry's repositories (its catalog, page by page), those containing `search` when given."""
    found: list[str] = []
    path: str | None = f"/v2/_catalog?n={PAGE_SIZE}"
    for _ in range(MAX_PAGES):
        response = _ask(login, path)
        if response.status_code == 403:
            raise ValidationError({"spec.user": [f"The registry at {login.base} does not let user "
                                                 f"{login.user or '(none)'} list its repositories."]})
        if response.status_code == 404:
            raise _unreachable(login, "it does not serve the registry API's catalog (/v2/_catalog).")
        if response.status_code != 200:
            raise _unreachable(login, f"it answered {response.status_code}.")
        found += _json(login, response).get("repositories") or []
        path = _next_page(response)
        if not path:
            break
    return _filtered(found, search)


def tags(login: RegistryLogin, repository: str, *, search: str | None = None) -> list[str]:
    """The tags of one repository, those containing `search` when given; an unknown repository is a 400."""
    found: list[str] = []
    path: str | None = f"/v2/{quote(repository, safe='/')}/tags/list?n={PAGE_SIZE}"
    for _ in range(MAX_PAGES):
        response = _ask(login, path)
        if response.status_code == 404:
            raise ValidationError({"repository": [f"The registry at {login.base} has no repository {repository}."]})
        if response.status_code == 403:
            raise ValidationError({"spec.user": [f"The registry at {login.base} does not let user "
                                                 f"{login.user or '(none)'} read repository {repository}."]})
        if response.status_code != 200:
            raise _unreachable(login, f"it answered {response.status_code}.")
        found += _json(login, response).get("tags") or []
        path = _next_page(response)
        if not path:
            break
    return _filtered(found, search)


def login_of(asset) -> RegistryLogin:
    """The login of a registry asset (its password decrypted from `Asset.secret`)."""
    secret = json.loads(asset.secret) if asset.secret else {}
    return RegistryLogin(asset.spec.get("url", ""), asset.spec.get("user", ""), secret.get("password", ""))
