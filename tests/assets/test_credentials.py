"""Credentials are secrets: stored encrypted, never answered (create, read, the lists, usage), never in the audit
trail or the logs, and not changed by an update (Run:ai's update bodies carry no secret)."""

import json
import logging

import pytest
from django.db import connection

from assets.models import Asset
from studio.models import AuditEvent
from tests.assets.bodies import SECRETS, SPECS

pytestmark = pytest.mark.django_db
CREDENTIALS = [p for p in SPECS if p.startswith("credentials/")]


def test_no_answer_holds_a_secret_and_the_table_holds_only_ciphertext(make_asset, client_for, org, caplog):
    caplog.set_level(logging.DEBUG)
    api = client_for(org.users.admin)
    answers = [json.dumps(make_asset(path, path.split("/")[1])) for path in CREDENTIALS]
    for path in CREDENTIALS:
        listed = api.get(f"/api/v1/asset/{path}?usageInfo=true&statusInfo=true")
        answers.append(listed.content.decode())
        for entry in listed.json()["entries"]:
            answers.append(api.get(f"/api/v1/asset/{path}/{entry['meta']['id']}?usageInfo=true").content.decode())
    answers.append(api.get("/api/v1/asset/credentials?usageInfo=true").content.decode())
    shown = "\n".join(answers)
    assert '"keyId": 1' in shown and '"user": "git-bot"' in shown  # the fields that are not secret are there
    assert [s for s in SECRETS if s in shown] == []
    generic = next(json.loads(a) for a in answers if '"TOKEN"' in a and '"meta"' in a and '"entries"' not in a)
    assert generic["spec"]["keyValuePairs"] == [{"key": "TOKEN"}]

    with connection.cursor() as cursor:
        cursor.execute("SELECT spec, secret FROM assets_asset")
        stored = "\n".join(f"{spec} {secret}" for spec, secret in cursor.fetchall())
    assert [s for s in SECRETS if s in stored] == []
    assert json.loads(Asset.objects.get(kind="ngcApiKey").secret) == {"ngc_api_key": "s3cr3t-ngc-key"}

    trail = json.dumps(list(AuditEvent.objects.filter(object_type="assets.asset").values("changes", "object_repr")))
    assert AuditEvent.objects.filter(object_type="assets.asset").count() == len(CREDENTIALS)
    assert [s for s in SECRETS if s in trail] == []
    assert [s for s in SECRETS if s in caplog.text] == []


def test_an_update_keeps_the_secret_and_refuses_a_new_one(make_asset, client_for, org):
    api = client_for(org.users.admin)
    made = make_asset("credentials/docker-registry", "registry")
    url = f"/api/v1/asset/credentials/docker-registry/{made['meta']['id']}"
    # The answer echoed back, with a new description: accepted, the secret unchanged.
    echoed = api.put(url, {"meta": {**made["meta"], "description": "Pulls images."}, "spec": made["spec"]},
                     format="json")
    assert echoed.status_code == 202, echoed.json()
    assert json.loads(Asset.objects.get(pk=made["meta"]["id"]).secret) == {"password": "s3cr3t-registry"}
    refused = api.put(url, {"meta": {"name": "registry"}, "spec": {"password": "another"}}, format="json")
    assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "spec.password"
    assert "another" not in refused.content.decode()


def test_an_existing_secret_may_be_named_instead_of_values(client_for, org):
    response = client_for(org.users.admin).post("/api/v1/asset/credentials/access-key", {
        "meta": {"name": "from-secret", "scope": "project", "projectId": org.a.pk},
        "spec": {"existingSecretName": "s3-credentials"}}, format="json")
    assert response.status_code == 202
    assert response.json()["spec"] == {"existingSecretName": "s3-credentials", "keyId": 1}
    assert Asset.objects.get(name="from-secret").secret == ""
