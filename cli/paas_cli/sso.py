"""`studio login --sso`: single sign-on through the browser, as OAuth's device authorization grant (RFC 8628).

The server gives a device code (kept here) and a user code (shown); the user opens the server's page, signs in there
as in the portal (password or the organisation's identity provider), checks the code and approves. Meanwhile this
polls `POST /api/v1/cli/device/token` every `interval` seconds (5 more after each `slow_down`) until a token, a
denial or the codes' expiry. `--sso` opens the page in a browser where there is one; `--device` only prints it (a
machine without a browser: open the page on another)."""

from __future__ import annotations

import os
import platform
import sys
import time
import webbrowser

import click

from paas_cli import __version__
from paas_cli.client import NOT_AUTHORISED, NOT_AVAILABLE, NOT_FOUND, Api, CliError

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
SLOW_DOWN_STEP = 5
REFUSALS = {
    "access_denied": "the sign-in was denied in the browser",
    "expired_token": "the code expired before it was approved: run `studio login --sso` again",
    "invalid_grant": "the server no longer knows this sign-in: run `studio login --sso` again",
}


def has_browser() -> bool:
    """Whether a browser can be opened here: a desktop (macOS, Windows, an X or Wayland display) or $BROWSER."""
    if os.environ.get("BROWSER"):
        return True
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _say(text: str) -> None:
    click.echo(text, err=True)  # stdout stays the command's result (-o json)


def device_login(api: Api, *, open_browser: bool) -> dict:
    """The token the user approved in the browser: {access_token, token_type, expires_in}."""
    try:
        started = api.post("/api/v1/cli/device", {"client_name": f"studio {__version__} on {platform.node()}"[:100]},
                           auth=False)
    except CliError as exc:
        if exc.code == NOT_FOUND:
            raise CliError(f"{api.url} offers no single sign-on for the command line: create an access key in the "
                           "portal (Access keys) and run `studio login --client-id …`", NOT_AVAILABLE) from None
        raise
    minutes = max(1, round(int(started["expires_in"]) / 60))
    _say(f"To sign in, open {started['verification_uri']} in a browser and enter the code "
         f"{started['user_code']}\n(or open {started['verification_uri_complete']}; the code expires in "
         f"{minutes} minute{'s' if minutes != 1 else ''}).")
    if open_browser and has_browser():
        try:
            opened = webbrowser.open(started["verification_uri_complete"])
        except webbrowser.Error:
            opened = False
        if opened:
            _say("The page is open in your browser.")
    _say("Waiting for the sign-in to be approved (Ctrl-C to stop)…")
    return _poll(api, started["device_code"], int(started.get("interval") or 5), int(started["expires_in"]))


def _poll(api: Api, device_code: str, interval: int, expires_in: int) -> dict:
    deadline = time.monotonic() + expires_in
    while True:
        time.sleep(interval)
        try:
            return api.post("/api/v1/cli/device/token", {"grant_type": DEVICE_GRANT, "device_code": device_code},
                            auth=False)
        except CliError as exc:
            error = (exc.body or {}).get("error")
            if error == "authorization_pending":
                pass
            elif error == "slow_down":
                interval += SLOW_DOWN_STEP
            elif error in REFUSALS:
                raise CliError(REFUSALS[error], NOT_AUTHORISED, exc.body) from None
            else:
                raise
        if time.monotonic() >= deadline:
            raise CliError(REFUSALS["expired_token"], NOT_AUTHORISED)
