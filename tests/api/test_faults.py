"""The cheap faults, in CI (the heavy ones are scripts: scripts/faults, docs/faults.md).

* The database down: a web process whose database is a closed port answers 503 with the error body on
  every API route, whichever layer meets the failure first (authentication, a transaction opened before
  the view, the view), never a 500. Run in a subprocess, so that its database really is unreachable.
* The broker down when a submission commits: the API answers 200 and the workload exists; the lost push
  is the sync's to repair (tests/workloads/test_sync.py covers that repair)."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from kombu.exceptions import OperationalError as BrokerDown

from config.celery import app
from tests.workloads.cluster_support import training_body
from workloads.models import Workload

ROOT = Path(__file__).resolve().parents[2]

# Runs in a web process of its own; prints {"METHOD path": [status, body, Retry-After]}.
PROBE = """
import json
import django
django.setup()
from django.test import Client
from studio.iam.auth import StudioAccessToken

token = StudioAccessToken()  # signed here: checking it needs the database (the blacklist, the user)
token["user_id"] = "1"
bearer = Client(raise_request_exception=False, HTTP_AUTHORIZATION=f"Bearer {token}")
anonymous = Client(raise_request_exception=False)
calls = [
    (bearer, "GET", "/api/v1/workloads", None),
    (bearer, "POST", "/api/v1/workloads/trainings", {"name": "w", "projectId": 1, "clusterId": "x", "spec": {}}),
    (bearer, "PATCH", "/api/v1/org-unit/projects/1", {"resources": {"gpu": {"deserved": 1}}}),
    (bearer, "GET", "/cfg/apps", None),
    (bearer, "DELETE", "/streaming/stream/00000000-0000-0000-0000-000000000000", None),
    (anonymous, "POST", "/api/v1/token", {"grantType": "password", "username": "u", "password": "p"}),
    (anonymous, "GET", "/healthz", None),
]
out = {}
for client, method, path, body in calls:
    response = client.generic(method, path, json.dumps(body) if body else "", content_type="application/json")
    out[f"{method} {path}"] = [response.status_code, json.loads(response.content), response.get("Retry-After")]
print(json.dumps(out))
"""


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # free once closed: nothing listens there


def test_with_the_database_down_every_api_route_answers_503_with_the_error_body(tmp_path):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "STUDIO_VAR_DIR": str(tmp_path),
           "DATABASE_URL": f"postgres://postgres@127.0.0.1:{closed_port()}/studio", "LOG_LEVEL": "ERROR"}
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    answers = json.loads(result.stdout.strip().splitlines()[-1])

    healthz = answers.pop("GET /healthz")
    assert healthz[0] == 200  # the process is up: only readiness depends on the database
    for call, (status, body, _) in answers.items():
        assert status == 503, f"{call}: {status} {body}"
        assert body["code"] == 503 and body["message"], f"{call}: {body}"


@pytest.mark.django_db(transaction=True)  # so that on-commit callbacks run, as in production
def test_a_submission_whose_push_cannot_be_enqueued_is_accepted_and_kept(client_for, org, monkeypatch):
    def broker_down(*args, **kwargs):
        raise BrokerDown("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(app, "send_task", broker_down)
    response = client_for(org.users.member).post("/api/v1/workloads/trainings", training_body(org.a, "while-down"),
                                                 format="json")
    assert response.status_code == 200, response.content
    workload = Workload.objects.get(pk=response.json()["workloadId"])
    assert (workload.name, workload.desired_phase, workload.submitted_at) == ("while-down", "Running", None)
