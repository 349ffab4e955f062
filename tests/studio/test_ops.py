import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_healthz(client):
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json()["status"] == "ok"


@pytest.mark.django_db
def test_readyz_reports_database_broker_and_clusters(client):
    body = client.get("/readyz").json()
    assert body["database"]["ok"] is True
    assert body["broker"]["ok"] is True
    assert body["clusters"] == {"total": 0, "Unknown": 0, "Connected": 0, "Disconnected": 0}


@pytest.mark.django_db
def test_readyz_counts_clusters_by_their_last_sync_and_is_ready_while_one_is_unreachable(client, org):
    response = client.get("/readyz")  # org's cluster is at 127.0.0.1:1, never synced: Unknown, not contacted
    assert response.status_code == 200
    assert response.json()["clusters"] == {"total": 1, "Unknown": 1, "Connected": 0, "Disconnected": 0}


@pytest.mark.django_db
def test_metrics_are_prometheus_text(client):
    client.get("/healthz")
    response = client.get("/metrics")
    assert response.status_code == 200
    assert b"django_http_requests_total_by_method_total" in response.content


@pytest.mark.django_db
def test_requests_carry_a_request_id(client):
    response = client.get("/healthz", HTTP_X_REQUEST_ID="abc123")
    assert response["X-Request-ID"] == "abc123"
    assert len(client.get("/healthz")["X-Request-ID"]) == 32


@pytest.mark.django_db
def test_unknown_api_path_is_json_404(client):
    response = client.get("/api/v1/nothing-here")
    assert response.status_code == 404
    assert response.json() == {"code": 404, "message": "The specified resource was not found."}


@pytest.mark.parametrize("method, path", [("get", "/api/v2/policy/distributed"), ("post", "/api/v1/nothing-here"),
                                          ("get", "/cfg/nothing"), ("delete", "/streaming/nothing")])
def test_unknown_api_path_is_json_404_with_debug_on_too(client, settings, method, path):
    settings.DEBUG = True  # make run's setting, where Django would answer its HTML debug page
    response = getattr(client, method)(path)
    assert response.status_code == 404 and response["Content-Type"] == "application/json"
    assert response.json()["code"] == 404


@pytest.mark.django_db
def test_openapi_schema_and_offline_docs(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    assert "/api/v1/org-unit/projects" in schema["paths"] and "/api/v1/token" in schema["paths"]
    docs = client.get("/api/docs/").content.decode()
    assert "swagger-ui" in docs and "cdn" not in docs.lower() and "http://" not in docs and "https://" not in docs


def test_check_deploy_with_production_settings_reports_nothing():
    env = {
        **{k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"},
        "DEBUG": "false",
        "HTTPS": "true",
        "SECRET_KEY": "a9$Kq2#xL7!mP4&vR8*tZ1@wN6^bH3(jC5)fG0-dS2+eY9=uQ-7Hs3Lk0Zp",
        "FIELD_ENCRYPTION_KEY": "Yk1jA3qf3M7c2aWq0mB2x4Jb7S9o8u6t5r4e3w2q1p0=",
        "ALLOWED_HOSTS": "studio.example.com",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_logs_are_json_with_the_request_id(tmp_path):
    script = (
        "import django,os;django.setup();"
        "from django.test import Client;"
        "Client().get('/api/v1/me', HTTP_X_REQUEST_ID='req-42')"
    )
    # Request lines are DEBUG (a quiet log at INFO: tests/studio/test_quiet_log.py).
    env = {**os.environ, "LOG_FORMAT": "json", "LOG_LEVEL": "DEBUG", "DJANGO_SETTINGS_MODULE": "config.settings"}
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    lines = [json.loads(line) for line in result.stderr.splitlines() if line.startswith("{")]
    request_lines = [line for line in lines if line.get("event") == "request"]
    assert request_lines and request_lines[0]["request_id"] == "req-42" and request_lines[0]["status"] == 401


def test_metrics_include_counters_of_other_processes_in_multiprocess_mode(tmp_path):
    """A worker's cluster-call counter shows on the web's /metrics when both share PROMETHEUS_MULTIPROC_DIR."""
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "config.settings"}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    worker = "import django;django.setup();from studio.clusters import kube;kube.API_CALLS.labels('c1','list','jobs').inc(7)"
    subprocess.run([sys.executable, "-c", worker], cwd=ROOT, env=env, check=True, timeout=120)
    web = ("import django;django.setup();from django.test import Client;"
           "print(Client().get('/metrics').content.decode())")
    result = subprocess.run([sys.executable, "-c", web], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120, check=True)
    assert 'studio_cluster_api_calls_total{cluster="c1",resource="jobs",verb="list"} 7.0' in result.stdout
