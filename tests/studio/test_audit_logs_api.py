"""Run:ai's audit logs from the audit trail: latest's AuditLogs (list with filters, sort and paging; the file as
CSV or JSON) and 2.18's Audit, in Run:ai's shapes, for platform admins only, with no secret in any answer."""

import csv
import io
import json

import pytest

from tests.conftest import bearer_client
from tests.runai_spec import assert_matches_spec

SPAN = "start=2000-01-01T00:00:00Z&end=2100-01-01T00:00:00Z"
KUBE_TOKEN = "kube-token-secret-41d"


@pytest.fixture
def admin(org):
    client = bearer_client(org.users.platform_admin)
    for name in ("physics", "chemistry"):
        assert client.post("/api/v1/org-unit/departments", {"name": name}, format="json").status_code == 201
    created = client.post("/api/v1/clusters", {"name": "second", "apiServerUrl": "https://kube.example.com:6443",
                                               "token": KUBE_TOKEN}, format="json")
    assert created.status_code == 201, created.content
    return client


def test_the_latest_list_is_runais_shape_filtered_sorted_and_paged(admin):
    response = admin.get(f"/api/v1/audit/log?{SPAN}&numberOfSamples=500")
    assert response.status_code == 200
    assert_matches_spec(response, "get", "/api/v1/audit/log")
    body = response.json()
    assert body["logs"] == body["audit_logs"] and body["total"] == len(body["logs"]) and "next" not in body
    departments = admin.get(f"/api/v1/audit/log?{SPAN}&filterBy=entity_type==department,action==create"
                            "&sortBy=entity_name&sortOrder=desc").json()["audit_logs"]
    assert [(d["entity_name"], d["subject"], d["subject_type"], d["http_method"], d["result"])
            for d in departments] == [("physics", "root", "User", "POST", "Succeeded"),
                                      ("chemistry", "root", "User", "POST", "Succeeded")]
    first = admin.get(f"/api/v1/audit/log?{SPAN}&numberOfSamples=1").json()
    assert len(first["logs"]) == 1 and first["next"] == 1 and first["total"] == body["total"]
    second = admin.get(f"/api/v1/audit/log?{SPAN}&numberOfSamples=1&offset=1").json()
    assert second["logs"][0]["id"] != first["logs"][0]["id"]
    assert admin.get(f"/api/v1/audit/log?{SPAN}&filterBy=url=@x").json()["logs"] == []
    assert KUBE_TOKEN not in response.content.decode()


def test_bad_queries_are_400s_naming_them(admin, org):
    missing = admin.get("/api/v1/audit/log")
    assert missing.status_code == 400
    assert {e["field"] for e in missing.json()["errors"]} == {"start", "end"}
    for query, field in [("&filterBy=password==x", "filterBy"), ("&sortBy=colour", "sortBy"),
                         ("&numberOfSamples=1001", "numberOfSamples"), ("&sortOrder=up", "sortOrder")]:
        response = admin.get(f"/api/v1/audit/log?{SPAN}{query}")
        assert response.status_code == 400, query
        assert response.json()["errors"][0]["field"] == field
    backwards = admin.get("/api/v1/audit/log?start=2100-01-01T00:00:00Z&end=2000-01-01T00:00:00Z")
    assert backwards.status_code == 400 and backwards.json()["errors"][0]["field"] == "end"
    for path in ("/api/v1/audit/log", "/api/v1/audit/log/file", "/v1/k8s/audit"):
        assert bearer_client(org.users.admin).get(f"{path}?{SPAN}").status_code == 403


def test_the_file_is_a_csv_or_json_of_the_whole_range(admin):
    listed = admin.get(f"/api/v1/audit/log?{SPAN}&numberOfSamples=500").json()["logs"]
    response = admin.get(f"/api/v1/audit/log/file?{SPAN}")
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="audit-logs.csv"'
    text = b"".join(response.streaming_content).decode()
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["id"] for r in rows] == [log["id"] for log in listed]
    assert {r["entity_name"] for r in rows} >= {"physics", "chemistry", "second"}
    assert KUBE_TOKEN not in text
    as_json = admin.get(f"/api/v1/audit/log/file?{SPAN}&file_type=JSON&filterBy=entity_type==cluster")
    assert [log["entity_name"] for log in json.loads(as_json.content)] == ["second"]
    assert admin.get(f"/api/v1/audit/log/file?{SPAN}&file_type=XML").status_code == 400


def test_the_218_audit_is_runais_shape_with_the_changes_masked(admin):
    response = admin.get("/v1/k8s/audit?entity_type=Cluster&action=create")
    assert response.status_code == 200
    assert_matches_spec(response, "get", "/v1/k8s/audit")
    [record] = response.json()
    assert (record["action"], record["entityName"], record["sourceName"]) == ("Create", "second", "root")
    assert record["body"]["name"] == "second" and record["body"]["token"] == "***"
    assert KUBE_TOKEN not in response.content.decode()
    downloaded = admin.get("/v1/k8s/audit?download=true&limit=1&source_type=User")
    assert downloaded["Content-Disposition"] == 'attachment; filename="logs.json"' and len(downloaded.json()) == 1
    assert admin.get("/v1/k8s/audit?success=false").json() == []


def test_the_latest_list_reads_in_the_same_queries_for_3_and_60_rows(admin, django_assert_max_num_queries):
    url = f"/api/v1/audit/log?{SPAN}&numberOfSamples=1000"
    with django_assert_max_num_queries(8):
        few = admin.get(url).json()["total"]
    for i in range(57):
        admin.post("/api/v1/org-unit/departments", {"name": f"d{i}"}, format="json")
    with django_assert_max_num_queries(8):
        assert admin.get(url).json()["total"] == few + 57
