"""Finding 9 of the security review: the smaller holes, each through the public surface."""

import contextlib
import json
import re
import tempfile
from pathlib import Path

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from studio.models import AuditEvent, Cluster
from workloads.cluster.sync import cluster_sync

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


def test_a_password_change_revokes_the_bearer_tokens_issued_before(org):
    user = org.users.member
    api = APIClient()
    token = api.post("/api/v1/token", {"grantType": "password", "username": user.username,
                                       "password": "pw-for-tests-1"}, format="json").json()["accessToken"]
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    assert api.get("/api/v1/me").status_code == 200
    user.set_password("a-new-password-2")
    user.save()
    assert api.get("/api/v1/me").status_code == 401


@pytest.mark.parametrize(("target", "landing"), [
    ("https://evil.example/phish", "/"),
    ("//evil.example/phish", "/"),
    ("javascript:alert(1)", "/"),
    ("/workloads", "/workloads"),
])
def test_switch_project_redirects_only_to_this_site(target, landing, client, org):
    client.force_login(org.users.member)
    response = client.post("/switch-project", {"project": org.a.pk, "next": target})
    assert response.status_code == 302 and response["Location"] == landing


def test_switch_project_with_a_malformed_project_is_a_404(client, org):
    client.force_login(org.users.member)
    assert client.post("/switch-project", {"project": "abc"}).status_code == 404


@pytest.mark.parametrize("given", ["evil\u2028line", "x" * 65, "<script>alert(1)</script>", "a b", "../../etc"])
def test_an_unsafe_request_id_is_replaced_and_never_stored(given, client_for, org):
    api = client_for(org.users.platform_admin)
    response = api.post("/api/v1/org-unit/departments", {"name": "dept-rid"}, format="json", HTTP_X_REQUEST_ID=given)
    assert response.status_code == 201
    assert re.fullmatch(r"[0-9a-f]{32}", response["X-Request-ID"])
    assert AuditEvent.objects.latest("id").request_id == response["X-Request-ID"]


def test_a_plain_request_id_is_kept(client_for, org):
    response = client_for(org.users.platform_admin).get("/api/v1/me", HTTP_X_REQUEST_ID="req-42.retry_1")
    assert response["X-Request-ID"] == "req-42.retry_1"


def test_audit_changes_mask_secret_values_in_kit_profile_environments(client_for, org):
    api = client_for(org.users.platform_admin)
    body = {"id": "env-test", "name": "Env test", "projectId": org.a.id,
            "supportedApplications": [{"name": "*", "versions": ["*"]}],
            "environmentVariables": [{"name": "NGC_API_TOKEN", "value": "s3cr3t-token-value"},
                                     {"name": "DB_PASSWORD", "value": "hunter2-value"},
                                     {"name": "OMNI_LOG_LEVEL", "value": "info"}]}
    assert api.post("/cfg/profiles", body, format="json").status_code == 201
    body["environmentVariables"][0]["value"] = "rotated-token-value"
    assert api.put("/cfg/profiles/env-test", body, format="json").status_code in (200, 201)
    trail = json.dumps(api.get("/api/v1/audit-events", {"limit": 500}).json())
    for secret in ("s3cr3t-token-value", "hunter2-value", "rotated-token-value"):
        assert secret not in trail
    assert "OMNI_LOG_LEVEL" in trail and '"info"' in trail  # the rest stays readable


def test_pages_send_a_content_security_policy_without_inline_scripts(client, org):
    client.force_login(org.users.platform_admin)
    for url in ("/", "/login", "/api/docs/", "/workloads"):
        response = client.get(url, follow=True)
        policy = response["Content-Security-Policy"]
        script_src = re.search(r"script-src ([^;]*)", policy)[1]
        assert script_src.split() == ["'self'"], policy
        assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy
        html = response.content.decode()
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), url  # no inline <script>
        assert not re.search(r"\son[a-z]+\s*=", html), url  # no inline event handler


def test_no_template_holds_an_inline_script_or_event_handler():
    for path in [*ROOT.glob("templates/**/*.html"), *ROOT.glob("*/templates/**/*.html")]:
        text = path.read_text()
        assert not re.search(r"\son(submit|click|change|input|load|error|key\w*|mouse\w*|focus|blur)\s*=", text), path
        assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text), path


def test_api_answers_are_not_stored_by_caches(client_for, org):
    api = client_for(org.users.member)
    for url in ("/api/v1/me", "/api/v1/org-unit/projects", "/cfg/apps", "/api/v1/nothing"):
        assert api.get(url)["Cache-Control"] == "no-store", url
    token = APIClient().post("/api/v1/token", {"grantType": "password", "username": "bob",
                                               "password": "pw-for-tests-1"}, format="json")
    assert token.status_code == 200 and token["Cache-Control"] == "no-store"


CA = """-----BEGIN CERTIFICATE-----
MIIBdzCCAR2gAwIBAgIUJ0nJ8Q8y3rQ2x9f3r4XlV0fN0xIwCgYIKoZIzj0EAwIw
-----END CERTIFICATE-----
"""


def crt_files_holding(pem: str) -> set[Path]:
    """The temporary folder's certificate files that hold this bundle (other test processes write theirs there)."""
    found = set()
    for path in Path(tempfile.gettempdir()).glob("*.crt"):
        with contextlib.suppress(OSError):
            if path.read_text(errors="replace").strip() == pem.strip():
                found.add(path)
    return found


def test_a_ca_certificate_is_one_file_per_bundle_not_one_per_connection(client_for, org, kubesim):
    api = client_for(org.users.platform_admin)
    created = api.post("/api/v1/clusters", {"name": "with-ca", "apiServerUrl": kubesim.url, "token": "kubesim-token",
                                            "caCert": CA, "verifyTls": False}, format="json").json()
    folder = Path(settings.VAR_DIR) / "cluster-ca"
    temporary = crt_files_holding(CA)
    for round_ in range(3):
        # A changed row makes a new connection each time.
        api.patch(f"/api/v1/clusters/{created['clusterId']}", {"name": f"with-ca-{round_}"}, format="json")
        cluster_sync(created["clusterId"])
    files = [p for p in folder.glob("*") if p.read_text().strip() == CA.strip()]
    assert len(files) == 1 and files[0].stat().st_mode & 0o077 == 0
    assert not list(folder.glob("*.tmp"))
    assert crt_files_holding(CA) <= temporary  # none left in the temporary folder
    assert Cluster.objects.get(pk=created["clusterId"]).status == "Connected"
