"""Single sign-on for the CLI as OAuth's device authorization grant (RFC 8628): the codes over HTTP, the portal's
approval page (a signed-in user checks the code, approves or denies; the decision in the audit trail), the poll's
errors (authorization_pending, slow_down, access_denied, expired_token, invalid_grant once used), the throttles,
and `studio login --sso` / `--device` against a live server, approved through the page as a browser would."""

import json
import re
import time
from html import unescape
from urllib.parse import parse_qs, urlencode, urlparse

import pytest
import requests
from django.test import Client

from studio.models import AuditEvent, CliDeviceAuthorization

GRANT = "urn:ietf:params:oauth:grant-type:device_code"


@pytest.fixture
def quick_polls(settings):
    settings.CLI_DEVICE_POLL_SECONDS = 1


def start(anon, **body) -> dict:
    answer = anon.post("/api/v1/cli/device", body, format="json", HTTP_USER_AGENT="paas-studio-cli/0.1.0")
    assert answer.status_code == 200, answer.content
    return answer.json()


def poll(anon, device_code):
    return anon.post("/api/v1/cli/device/token", urlencode({"grant_type": GRANT, "device_code": device_code}),
                     content_type="application/x-www-form-urlencoded")  # RFC 8628's form


def page_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db
def test_approved_in_the_portal_the_poll_gets_one_token_of_that_user(anon, org, quick_polls):
    codes = start(anon, client_name="studio 0.1.0 on laptop")
    assert set(codes) == {"device_code", "user_code", "verification_uri", "verification_uri_complete",
                          "expires_in", "interval"}
    assert re.fullmatch(r"[B-DF-HJ-NP-TV-XZ]{4}-[B-DF-HJ-NP-TV-XZ]{4}", codes["user_code"])
    assert codes["verification_uri"] == "http://testserver/cli/device"
    assert parse_qs(urlparse(codes["verification_uri_complete"]).query) == {"user_code": [codes["user_code"]]}
    assert codes["expires_in"] == 600 and codes["interval"] == 1
    # Stored as digests only: neither code is in the row.
    row = CliDeviceAuthorization.objects.values().get()
    assert not {codes["device_code"], codes["user_code"], codes["user_code"].replace("-", "")} & {
        str(v) for v in row.values()}

    pending = poll(anon, codes["device_code"])
    assert pending.status_code == 400 and pending.json()["error"] == "authorization_pending"
    assert pending.json()["code"] == 400 and pending.json()["message"]
    too_fast = poll(anon, codes["device_code"])  # at once, where the interval is a second
    assert too_fast.status_code == 400 and too_fast.json()["error"] == "slow_down"
    assert "6 seconds" in too_fast.json()["error_description"]  # the interval grew by 5

    # The page needs a signed-in user; it shows the code and what asked, typed in any case, with or without dash.
    assert Client().get(codes["verification_uri_complete"]).status_code == 302
    member = page_client(org.users.member)
    shown = member.get("/cli/device", {"user_code": codes["user_code"].replace("-", " ").lower()})
    html = shown.content.decode()
    assert shown.status_code == 200 and codes["user_code"] in html and "studio 0.1.0 on laptop" in html
    assert "127.0.0.1" in html and "paas-studio-cli/0.1.0" in html and 'value="approve"' in html
    approved = member.post("/cli/device", {"user_code": codes["user_code"], "decision": "approve"})
    assert approved.status_code == 200 and "is signed in as bob" in approved.content.decode()

    time.sleep(6)  # the interval that slow_down set
    granted = poll(anon, codes["device_code"])
    assert granted.status_code == 200, granted.json()
    assert set(granted.json()) == {"access_token", "token_type", "expires_in"}
    assert granted.json()["token_type"] == "Bearer" and granted.json()["expires_in"] == 3600
    me = anon.get("/api/v1/me", HTTP_AUTHORIZATION="Bearer " + granted.json()["access_token"])
    assert me.status_code == 200 and me.json()["username"] == "bob"
    # Used once: the same device code gives nothing more, and the page no longer knows the user code.
    time.sleep(6)
    again = poll(anon, codes["device_code"])
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert "No sign-in waits" in member.get("/cli/device", {"user_code": codes["user_code"]}).content.decode()

    event = AuditEvent.objects.get(object_type="studio.clideviceauthorization")
    assert event.actor == org.users.member and event.action == "update"
    assert event.changes["status"] == ["pending", "approved"] and event.changes["user"] == [None, org.users.member.pk]
    assert codes["device_code"] not in str(event.changes) and "digest" not in str(event.changes)


@pytest.mark.django_db
def test_denied_expired_unknown_and_bad_requests_are_named(anon, org, settings, quick_polls):
    denied = start(anon)
    answer = page_client(org.users.viewer).post("/cli/device", {"user_code": denied["user_code"], "decision": "deny"})
    assert answer.status_code == 200 and "gets no access" in answer.content.decode()
    assert poll(anon, denied["device_code"]).json()["error"] == "access_denied"
    assert AuditEvent.objects.get(object_type="studio.clideviceauthorization").changes["status"] == [
        "pending", "denied"]
    # Decided: a second decision (another tab) changes nothing.
    late = page_client(org.users.member).post("/cli/device", {"user_code": denied["user_code"], "decision": "approve"})
    assert late.status_code == 400 and "No sign-in waits" in late.content.decode()
    assert poll(anon, denied["device_code"]).json()["error"] in ("access_denied", "slow_down")

    settings.CLI_DEVICE_CODE_SECONDS = 1
    expired = start(anon)
    assert expired["expires_in"] == 1
    time.sleep(1.2)
    assert poll(anon, expired["device_code"]).json()["error"] == "expired_token"
    shown = page_client(org.users.member).get("/cli/device", {"user_code": expired["user_code"]})
    assert "No sign-in waits" in shown.content.decode() and 'value="approve"' not in shown.content.decode()

    assert poll(anon, "not-a-code").json()["error"] == "invalid_grant"
    missing = anon.post("/api/v1/cli/device/token", {"grant_type": "password"}, format="json")
    body = missing.json()
    assert missing.status_code == 400 and body["error"] == "invalid_request"
    assert {e["field"] for e in body["errors"]} == {"device_code", "grant_type"}
    assert anon.post("/api/v1/cli/device", "{", content_type="application/json").json()["error"] == "invalid_request"
    long_name = anon.post("/api/v1/cli/device", {"client_name": "x" * 101}, format="json")
    assert long_name.status_code == 400 and long_name.json()["errors"][0]["field"] == "client_name"
    # A stale token in the header does not matter: the endpoints are public.
    assert anon.post("/api/v1/cli/device", {}, format="json", HTTP_AUTHORIZATION="Bearer stale").status_code == 200


@pytest.mark.django_db
def test_starting_and_trying_codes_are_throttled(anon, org):
    for _ in range(10):
        start(anon)
    over = anon.post("/api/v1/cli/device", {}, format="json")
    assert over.status_code == 429 and over.has_header("Retry-After") and over.json()["code"] == 429
    member = page_client(org.users.member)
    for _ in range(10):
        assert member.get("/cli/device", {"user_code": "BCDF-GHJK"}).status_code == 200
    throttled = member.get("/cli/device", {"user_code": "BCDF-GHJK"})
    assert throttled.status_code == 429 and "Too many codes tried" in throttled.content.decode()
    assert member.get("/cli/device").status_code == 200  # the empty form still opens


# --- `studio login --sso` against a live server ------------------------------------------------------------------

def portal_session(live_server, username: str) -> requests.Session:
    """A browser's session: the login form (its CSRF token), as a person fills it."""
    session = requests.Session()
    form = session.get(live_server.url + "/login", timeout=10).text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
    answer = session.post(live_server.url + "/login", data={
        "username": username, "password": "pw-for-tests-1", "csrfmiddlewaretoken": token},
        headers={"Referer": live_server.url + "/login"}, timeout=10)
    assert answer.status_code == 200 and "Log out" in answer.text
    return session


def decide(session: requests.Session, live_server, url: str, decision: str) -> str:
    page = session.get(url, timeout=10)
    assert page.status_code == 200 and 'value="approve"' in page.text, page.text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    code = unescape(re.search(r'name="user_code" value="([^"]+)"', page.text).group(1))
    answer = session.post(live_server.url + "/cli/device", data={
        "user_code": code, "decision": decision, "csrfmiddlewaretoken": token},
        headers={"Referer": url}, timeout=10)
    assert answer.status_code == 200
    return answer.text


def wait_for(predicate, what: str, timeout: float = 30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.mark.django_db(transaction=True)
def test_studio_login_sso_opens_the_page_and_logs_in_once_approved(live_server, cli, org, quick_polls, tmp_path):
    opened = tmp_path / "opened-url"
    browser = tmp_path / "browser.sh"  # $BROWSER: what `webbrowser` runs with the page's address
    browser.write_text(f'#!/bin/sh\necho "$1" > {opened}\n')
    browser.chmod(0o755)
    cli.env["BROWSER"] = str(browser)
    process = cli.popen("login", "--sso", "--url", live_server.url, "-o", "json")
    url = wait_for(lambda: opened.exists() and opened.read_text().strip(), "the CLI to open the browser")
    assert url.startswith(live_server.url + "/cli/device?user_code=")
    assert "is signed in as bob" in decide(portal_session(live_server, "bob"), live_server, url, "approve")
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    code = parse_qs(urlparse(url).query)["user_code"][0]
    assert f"enter the code {code}" in err and "The page is open in your browser." in err
    result = json.loads(out)
    assert result["username"] == "bob" and result["url"] == live_server.url and result["clientId"] is None
    shown = cli("config", "show", "-o", "json").json()
    assert shown["loggedIn"] is True and shown["clientId"] is None
    assert cli("training", "list", "-p", "alpha", "-o", "json").json() == []
    assert cli("logout").code == 0


@pytest.mark.django_db(transaction=True)
def test_studio_login_device_prints_the_code_and_a_denial_is_exit_4(live_server, cli, org, quick_polls, tmp_path):
    cli.env["BROWSER"] = str(tmp_path / "no-such-browser")  # --device never opens one
    process = cli.popen("login", "--device", "--url", live_server.url)
    first = process.stderr.readline()
    match = re.search(r"open (\S+) in a browser and enter the code ([A-Z]{4}-[A-Z]{4})", first)
    assert match and match.group(1) == live_server.url + "/cli/device", first
    session = portal_session(live_server, "carol")
    assert "gets no access" in decide(session, live_server, f"{match.group(1)}?user_code={match.group(2)}", "deny")
    out, err = process.communicate(timeout=60)
    assert process.returncode == 4 and "denied in the browser" in err and "page is open" not in err
    assert not cli.config_file.exists()
    assert cli("login", "--sso", "--client-id", "ak-x", "--url", live_server.url).code == 2
