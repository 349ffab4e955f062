"""Run:ai's Reports (latest) over the hand-computed day of tests/usage/scenario.py: the CSV against the hand
computation, every operation's shape and codes, and Run:ai's own client."""

import csv
import io
from datetime import timedelta

import pytest

from tests.conftest import bearer_client
from tests.runai_spec import assert_matches_spec
from tests.usage.scenario import make_scenario
from usage import tasks
from usage.models import Report
from usage.rollup import usage_rollup

pytestmark = pytest.mark.django_db
REPORTS = "/api/v1/org-unit/reports"


@pytest.fixture
def day(org, settings):
    settings.USAGE_ROLLUP_MAX_HOURS = 24 * 5
    scenario = make_scenario(org)
    usage_rollup()
    return scenario


def _request(client, day, **fields):
    body = {"name": "march", "start": day.day.isoformat(), "end": (day.day + timedelta(days=1)).isoformat(),
            **fields}
    response = client.post(REPORTS, body, format="json")
    assert response.status_code == 202, response.content
    assert_matches_spec(response, "post", REPORTS)
    assert response.json()["status"] == "Pending"
    tasks.report_produce(response.json()["id"])  # what the worker does once the request is committed
    return response.json()["id"]


def _csv(client, report_id) -> list[dict]:
    response = client.get(f"{REPORTS}/{report_id}/file", HTTP_ACCEPT="text/csv")
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def test_the_csv_by_project_is_the_hand_computation(org, day):
    admin = bearer_client(org.users.platform_admin)
    lines = _csv(admin, _request(admin, day, groupBy="Project"))
    date = day.day.date().isoformat()
    assert lines == [
        {"date": date, "project_id": str(org.a.pk), "project": "alpha", "department": "research",
         "user": org.users.member.email, "gpu_allocation_hours": "7", "gpu_utilized_hours": "3",
         "gpu_idle_hours": "1", "gpu_unmeasured_hours": "3", "cpu_allocation_core_hours": "14",
         "cpu_utilized_core_hours": "0", "memory_allocation_gib_hours": "28", "memory_utilized_gib_hours": "0",
         "gpu_cost": "14", "gpu_idle_cost": "2", "cpu_cost": "1.4", "memory_cost": "0.28", "total_cost": "15.68"},
        {"date": date, "project_id": str(org.b.pk), "project": "beta", "department": "research",
         "user": org.users.other.email, "gpu_allocation_hours": "2.5", "gpu_utilized_hours": "0",
         "gpu_idle_hours": "0", "gpu_unmeasured_hours": "2.5", "cpu_allocation_core_hours": "2.5",
         "cpu_utilized_core_hours": "0", "memory_allocation_gib_hours": "5", "memory_utilized_gib_hours": "0",
         "gpu_cost": "10", "gpu_idle_cost": "0", "cpu_cost": "0", "memory_cost": "0", "total_cost": "10"},
    ]


def test_partial_days_read_the_hours_and_filters_narrow(org, day):
    admin = bearer_client(org.users.platform_admin)
    by_pool = _csv(admin, _request(admin, day, groupBy="Nodepool", start=(day.day + timedelta(hours=2)).isoformat(),
                                   end=(day.day + timedelta(hours=3, minutes=30)).isoformat()))
    # 02:00–04:00 (whole hours): train 2 + 2 GPU-hours, space 1 + 0.5
    assert {(line["nodepool"], line["gpu_allocation_hours"]) for line in by_pool} == {("default", "4"), ("a100", "1.5")}
    only_beta = _csv(admin, _request(admin, day, groupBy="Department", filterBy=["projectName==beta"]))
    assert [(line["department"], line["gpu_allocation_hours"], line["total_cost"]) for line in only_beta] == [
        ("research", "2.5", "10")]


def test_every_operation_answers_as_run_ai_says(org, day):
    admin = bearer_client(org.users.platform_admin)
    first = _request(admin, day, groupBy="Cluster", description="All of it.")
    second = _request(admin, day, name="second")
    listed = admin.get(REPORTS, {"sortBy": "name", "sortOrder": "desc"})
    assert_matches_spec(listed, "get", REPORTS)
    assert [r["name"] for r in listed.json()["reports"]] == ["second", "march"]
    assert admin.get(REPORTS, {"filterBy": "name==second"}).json()["reports"][0]["id"] == second
    count = admin.get(f"{REPORTS}/count", {"filterBy": "status==Ready"})
    assert_matches_spec(count, "get", f"{REPORTS}/count")
    assert count.json() == {"count": 2}
    got = admin.get(f"{REPORTS}/{first}")
    assert_matches_spec(got, "get", f"{REPORTS}/{{reportId}}")
    assert got.json()["status"] == "Ready" and got.json()["groupBy"] == "Cluster"
    available = admin.get(f"{REPORTS}/availability")
    assert_matches_spec(available, "get", f"{REPORTS}/availability")
    assert available.json() == {"isAvailable": True}
    assert bearer_client(org.users.member).get(f"{REPORTS}/availability").json() == {"isAvailable": False}
    by_cluster = _csv(admin, first)
    assert [(line["cluster"], line["gpu_allocation_hours"]) for line in by_cluster] == [
        ("main", "7"), ("main", "2.5")]  # one line per user
    assert admin.delete(f"{REPORTS}/{first}").status_code == 204
    assert admin.get(f"{REPORTS}/{first}").status_code == 404
    assert admin.get(f"{REPORTS}/{first}/file").status_code == 404


def test_bad_requests_name_each_problem(org):
    admin = bearer_client(org.users.platform_admin)
    response = admin.post(REPORTS, {"name": "", "start": "2026-02-01T00:00:00Z", "end": "2026-01-01T00:00:00Z",
                                    "groupBy": "User", "filterBy": ["userName==bob", "clusterId==nope"],
                                    "colour": "red"}, format="json")
    assert response.status_code == 400
    fields = {e["field"] for e in response.json()["errors"]}
    assert {"name", "groupBy", "filterBy[0]", "filterBy[1]", "colour"} <= fields, response.json()
    too_long = admin.post(REPORTS, {"name": "x", "start": "2020-01-01T00:00:00Z", "end": "2026-01-01T00:00:00Z"},
                          format="json")
    assert too_long.status_code == 400 and too_long.json()["errors"][0]["field"] == "end"
    assert admin.get(REPORTS, {"sortBy": "gpu"}).status_code == 400
    pending = Report.objects.create(name="p", start="2026-01-01T00:00:00Z", end="2026-01-02T00:00:00Z",
                                    created_by_name="root", status_updated_at="2026-01-01T00:00:00Z")
    not_ready = admin.get(f"{REPORTS}/{pending.pk}/file", HTTP_ACCEPT="text/csv")
    assert not_ready.status_code == 400 and "Pending" in not_ready.json()["details"]


def test_only_platform_admins_use_reports(org, day):
    admin = bearer_client(org.users.platform_admin)
    report = _request(admin, day)
    for user in (org.users.admin, org.users.member, org.users.viewer):
        client = bearer_client(user)
        assert client.get(REPORTS).status_code == 403
        assert client.get(f"{REPORTS}/{report}/file").status_code == 403
        assert client.post(REPORTS, {"name": "x", "start": day.day.isoformat(),
                                     "end": (day.day + timedelta(days=1)).isoformat()}, format="json").status_code == 403


def test_the_list_reads_a_fixed_number_of_queries(org, day, django_assert_max_num_queries):
    admin = bearer_client(org.users.platform_admin)
    for n in range(3):
        _request(admin, day, name=f"r{n}")
    with django_assert_max_num_queries(6):
        few = admin.get(REPORTS)
    for n in range(3, 20):
        _request(admin, day, name=f"r{n}")
    with django_assert_max_num_queries(6):
        many = admin.get(REPORTS)
    assert len(few.json()["reports"]) == 3 and len(many.json()["reports"]) == 20
