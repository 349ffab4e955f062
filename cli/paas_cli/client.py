"""The API over HTTP, and its answers as the CLI's exit codes.

Exit codes (docs/cli.md): 0 done · 1 the server refused the request (validation, conflict, a server error) or
could not be reached · 2 usage (a bad flag or value, caught before any request) · 3 not found (a workload or
project that does not exist or that the caller may not see) · 4 not authorised (not logged in, a bad or expired
token or secret, or a role that may not do this) · 5 not available on this server."""

from __future__ import annotations

import requests

from paas_cli import __version__

OK, API_ERROR, USAGE, NOT_FOUND, NOT_AUTHORISED, NOT_AVAILABLE = 0, 1, 2, 3, 4, 5
TIMEOUT = 30


class CliError(Exception):
    """A failure the CLI reports on stderr and exits with `code`; `body` is the server's JSON error, if any."""

    def __init__(self, message: str, code: int = API_ERROR, body: dict | None = None):
        super().__init__(message)
        self.message, self.code, self.body = message, code, body


def code_for(status: int) -> int:
    if status == 404:
        return NOT_FOUND
    if status in (401, 403):
        return NOT_AUTHORISED
    return API_ERROR


def error_from(response: requests.Response) -> CliError:
    """The server's `{"code", "message", "errors"?}` as one message: the sentence, then each field's problem."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("message"):
        lines = [str(body["message"])]
        for problem in body.get("errors") or []:
            if isinstance(problem, dict):
                lines.append(f"  {problem.get('field', '')}: {problem.get('message', '')}")
        message = "\n".join(lines)
    else:
        body = None
        message = f"the server answered {response.status_code} {response.reason}"
    if response.status_code == 401:
        message += "\n(log in again: studio login)"
    return CliError(message, code_for(response.status_code), body)


class Api:
    def __init__(self, url: str | None, token: str | None = None):
        if not url:
            raise CliError("no server: run `studio login --url URL …` or set STUDIO_URL", NOT_AUTHORISED)
        self.url, self.token = url.rstrip("/"), token
        self.session = requests.Session()
        self.session.headers["User-Agent"] = f"paas-studio-cli/{__version__}"

    def request(self, method: str, path: str, *, auth: bool = True, stream: bool = False, **kwargs):
        headers = kwargs.pop("headers", {})
        if auth:
            if not self.token:
                raise CliError("not logged in: run `studio login` (or set STUDIO_TOKEN)", NOT_AUTHORISED)
            headers["Authorization"] = f"Bearer {self.token}"
        try:
            response = self.session.request(method, self.url + path, headers=headers, stream=stream,
                                            timeout=(TIMEOUT, None) if stream else TIMEOUT, **kwargs)
        except requests.RequestException as exc:
            raise CliError(f"cannot reach {self.url}: {exc.__class__.__name__}") from exc
        if response.status_code >= 400:
            raise error_from(response)
        return response

    def json(self, method: str, path: str, **kwargs):
        response = self.request(method, path, **kwargs)
        if response.status_code == 204 or not response.content:
            return None
        try:
            return response.json()
        except ValueError as exc:
            raise CliError(f"{path} did not answer JSON: is {self.url} a PaaS Studio server?") from exc

    def get(self, path: str, **params):
        return self.json("GET", path, params=params or None)

    def post(self, path: str, body=None, **kwargs):
        return self.json("POST", path, json=body, **kwargs)
