"""What a script can rely on when the `studio` command fails: the exit code (0 done, 1 refused by the server,
2 usage, 3 not found, 4 not authorised, 5 not available on this server) and the server's own message on stderr
(its JSON error body with `-o json`), against a live server."""

import json
import stat

import pytest
import requests

from studio.models import AccessKey
from tests import docs_output

pytestmark = pytest.mark.django_db(transaction=True)


def test_login_keeps_a_token_in_a_private_file_and_never_shows_the_secret(live_server, cli, org):
    key, secret = AccessKey.issue(user=org.users.member, name="laptop")
    result = cli("login", "--url", live_server.url, "--client-id", key.client_id, "-o", "json",
                 env={"STUDIO_CLIENT_SECRET": secret})
    assert result.code == 0, result
    assert result.json()["username"] == "bob" and result.json()["url"] == live_server.url
    assert stat.S_IMODE(cli.config_file.stat().st_mode) == 0o600
    saved = json.loads(cli.config_file.read_text())
    assert saved["token"] and saved["clientId"] == key.client_id and secret not in cli.config_file.read_text()
    shown = cli("config", "show", "-o", "json")
    assert shown.code == 0 and shown.json()["loggedIn"] is True and "token" not in shown.json()
    assert saved["token"] not in shown.out and secret not in result.out + result.err
    # The saved token works, the environment overrides the file, and logout revokes it.
    assert cli("training", "list", "-p", "alpha", "-o", "json").json() == []
    assert cli("training", "list", "-o", "json", env={"STUDIO_TOKEN": "forged"}).code == 4
    assert cli("logout").code == 0
    assert "token" not in json.loads(cli.config_file.read_text())
    assert requests.get(live_server.url + "/api/v1/me", headers={"Authorization": f"Bearer {saved['token']}"},
                        timeout=10).status_code == 401
    assert cli("training", "list").code == 4


def test_a_wrong_secret_is_exit_4_with_the_servers_message(live_server, cli, org):
    key, _ = AccessKey.issue(user=org.users.member, name="laptop")
    answer = requests.post(live_server.url + "/api/v1/token", json={
        "grantType": "client_credentials", "clientId": key.client_id, "clientSecret": "wrong"}, timeout=10)
    assert answer.status_code == 401
    result = cli("login", "--url", live_server.url, "--client-id", key.client_id, "--client-secret", "wrong")
    assert result.code == 4 and answer.json()["message"] in result.err, result
    assert not cli.config_file.exists()


def test_not_logged_in_and_no_server_say_so(cli, live_server):
    result = cli("training", "list")
    assert result.code == 4 and "no server" in result.err
    result = cli("training", "list", env={"STUDIO_URL": live_server.url})
    assert result.code == 4 and "not logged in" in result.err


def test_bad_input_unknown_names_and_refusals(logged_in, org):
    member = logged_in(org.users.member)
    # Usage: caught before any request.
    for args in (["training", "submit", "x", "-i", "python:3.11", "-g", "abc", "-p", "alpha"],
                 ["training", "submit", "x", "-p", "alpha"],
                 ["training", "submit", "x", "-i", "python:3.11", "-e", "NOEQUALS", "-p", "alpha"],
                 ["training", "list", "-o", "xml"],
                 ["training", "submit", "x", "-i", "python:3.11"]):
        result = member(*args)
        assert result.code == 2, result
    # Not found: a project or a workload that does not exist, or that the caller may not see.
    result = member("training", "submit", "x", "-i", "python:3.11", "-p", "nosuch")
    assert result.code == 3 and "project 'nosuch' not found" in result.err
    result = member("training", "submit", "x", "-i", "python:3.11", "-p", "beta")
    assert result.code == 3 and "project 'beta' not found" in result.err  # bob is no member of beta
    assert member("config", "project", "nosuch").code == 3
    for verb in ("describe", "logs", "suspend", "resume", "delete"):
        result = member("training", verb, "ghost", "-p", "alpha")
        assert result.code == 3 and "training 'ghost' not found in project 'alpha'" in result.err, result
    # Refused by the server: every problem of the body, as the server words it; JSON on stderr with -o json.
    bad = ["training", "submit", "x", "-i", "python:3.11", "-p", "alpha", "--gpu-portion-request", "1.5",
           "--cpu-memory-request", "1 Gi"]
    result = member(*bad)
    assert result.code == 1 and "spec.compute.gpuPortionRequest" in result.err
    assert "spec.compute.cpuMemoryRequest" in result.err
    body = json.loads(member(*bad, "-o", "json").err)
    assert body["code"] == 400 and {e["field"] for e in body["errors"]} == {
        "spec.compute.gpuPortionRequest", "spec.compute.cpuMemoryRequest"}
    assert body["message"] in result.err
    assert member("training", "submit", "x", "-i", "python:3.11", "-p", "alpha").code == 0
    result = member("training", "submit", "x", "-i", "python:3.11", "-p", "alpha")
    assert result.code == 1 and "x" in result.err  # the same name again: a conflict (409)
    # exec, attach and port-forward of a workload that does not exist: not found, before any session opens.
    for args in (["exec", "lab", "-it", "--", "bash"], ["attach", "lab"], ["port-forward", "lab", "--port", "8888"]):
        result = member("workspace", args[0], "-p", "alpha", *args[1:])
        assert result.code == 3 and "not found" in result.err, result


def test_a_viewers_submit_is_refused_with_exit_4(logged_in, org):
    viewer = logged_in(org.users.viewer)
    assert viewer("config", "project", "alpha").code == 0
    result = viewer("workspace", "submit", "lab", "-i", "python:3.11", "-o", "json")
    assert result.code == 4, result
    body = json.loads(result.err)
    assert body["code"] == 403 and body["message"]
    assert viewer("workspace", "submit", "lab", "-i", "python:3.11").err.startswith("studio: " + body["message"])
    assert viewer("workspace", "submit", "lab", "-i", "python:3.11", "--dry-run").code == 4
    assert viewer("workspace", "list", "-o", "json").json() == []  # a viewer reads
    (docs_output.folder() / "cli-transcript-viewer.txt").write_text("\n".join(viewer.transcript[2:]) + "\n")
