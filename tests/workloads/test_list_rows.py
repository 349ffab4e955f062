"""The workload list builds its rows from `values()` (workloads.api.list_rows) and formats dates itself: its JSON must
be the serializer's over model instances, field for field and byte for byte, and name every declared field."""

import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from profiles.models import ServiceProfile
from studio.models import Department, Project
from tests.factories import ServiceProfileFactory
from workloads.api.serializers import WorkloadSerializer
from workloads.models import Workload

pytestmark = pytest.mark.django_db

NOW = timezone.now().replace(microsecond=123456)


@pytest.fixture
def workloads(org):
    common = {"project": org.a, "department": org.department, "cluster": org.cluster, "created_by_name": "bob"}
    Workload.objects.create(kind="training", name="plain", requested_name="plain", **common)
    Workload.objects.create(  # every optional field set
        kind="inference", name="full", requested_name="full", actual_phase="Running", phase_message="ok",
        spec={"image": "nginx", "nodePools": ["a", "b"], "priorityClass": "inference",
              "autoscaling": {"minReplicas": 2, "maxReplicas": 5}, "category": "Build"},
        gpu_request=Decimal("1.5"), running_pods=2, requested_pods=2, endpoints={"url": "https://x.example"},
        phase_updated_at=NOW - timedelta(minutes=3), started_at=NOW.replace(microsecond=0) - timedelta(minutes=2),
        completed_at=NOW - timedelta(minutes=1), source="catalog", profile_id=7, profile_name="jupyter",
        profile_revision=3, **common)
    Workload.objects.create(kind="workspace", name="waiting", requested_name="waiting", actual_phase="Pending",
                            pending_reason={"reason": "quota", "message": "no GPUs"}, queue_position=2,
                            spec={"image": "python:3.11", "preemptibility": "non-preemptible"}, **common)
    Workload.objects.create(kind="distributed", name="dist", requested_name="dist", actual_phase="Pending",
                            spec={"image": "x", "distributedFramework": "PyTorch", "minReplicas": 1,
                                  "maxReplicas": 3}, **common)
    gone = Workload.objects.create(kind="training", name="gone", requested_name="gone", **common)
    Workload.objects.filter(pk=gone.pk).update(deleted_at=NOW)


def _one_clock(monkeypatch):
    # The page and the serializer read the clock apart: pending and running seconds move with it.
    stopped = timezone.now()
    monkeypatch.setattr(timezone, "now", lambda: stopped)


@pytest.mark.parametrize("query", ["", "deleted=true", "sortBy=name&sortOrder=asc", "sortBy=priority"])
def test_the_list_answers_what_the_serializer_answers_for_each_workload(client_for, org, workloads, query,
                                                                        monkeypatch):
    _one_clock(monkeypatch)
    response = client_for(org.users.member).get(f"/api/v1/workloads?{query}")
    assert response.status_code == 200, response.content
    listed = response.json()["workloads"]
    assert listed
    for row in listed:
        expected = WorkloadSerializer(Workload.objects.select_related("project", "department").get(pk=row["id"])).data
        assert json.dumps(row) == json.dumps(expected)  # same keys in the same order, same values and types


def test_a_rows_json_reads_as_the_orm_reads_it_integers_beyond_64_bits_too(client_for, org, workloads):
    reason = {"reason": "quota", "message": "no GPUs", "used": 2**70, "over": 0.1, "requested": 1e-30,
              "queue": "é\u2028日本"}
    Workload.objects.filter(name="waiting").update(pending_reason=reason)
    row = _row(client_for(org.users.member), "waiting")
    expected = WorkloadSerializer(Workload.objects.select_related("project", "department").get(name="waiting")).data
    assert json.dumps(row) == json.dumps(expected) and row["pendingReason"]["used"] == 2**70


def test_every_row_names_the_serializers_declared_fields(client_for, org, workloads):
    declared = set(WorkloadSerializer().fields)
    for row in client_for(org.users.member).get("/api/v1/workloads").json()["workloads"]:
        only_distributed = set() if row["type"] == "distributed" else {"distributedFramework"}
        assert set(row) == declared - only_distributed, row["name"]


def test_dates_are_drfs_iso_8601_with_z(client_for, org, workloads):
    row = next(r for r in client_for(org.users.member).get("/api/v1/workloads").json()["workloads"]
               if r["name"] == "full")
    assert row["completedAt"] == (NOW - timedelta(minutes=1)).isoformat().replace("+00:00", "Z")
    started = NOW.replace(microsecond=0) - timedelta(minutes=2)
    assert row["startedAt"] == started.isoformat().replace("+00:00", "Z")  # no fraction when there is none


# On PostgreSQL a process keeps the rows it rendered (workloads.api.list_rows.RenderedRows), keyed by each row's
# version: a page read again must be the same bytes, and must follow every change, however it was made. (On SQLite
# nothing is kept, and the same answers are rendered each time.)

FROZEN = NOW + timedelta(hours=1)


def _page(client, **query):
    response = client.get("/api/v1/workloads", {"sortBy": "name", "sortOrder": "asc", **query})
    assert response.status_code == 200, response.content
    return response


def _row(client, name):
    return next(r for r in _page(client).json()["workloads"] if r["name"] == name)


def test_a_page_read_again_is_the_same_bytes(client_for, org, workloads, monkeypatch):
    Workload.objects.filter(name="waiting").update(phase_message="line\u2028break </script> é日本")
    monkeypatch.setattr(timezone, "now", lambda: FROZEN)
    client = client_for(org.users.member)
    first = _page(client).content
    assert _page(client).content == first and _page(client, deleted="true").content != first
    assert b"line\\u2028break" in first  # escaped as DRF escapes it, kept rows too


def test_a_kept_row_follows_changes_made_outside_the_orm_even_twice_in_one_transaction(client_for, org, workloads):
    client = client_for(org.users.member)
    assert _row(client, "plain")["phaseMessage"] == ""
    table = Workload._meta.db_table
    with connection.cursor() as cursor:  # no updated_at: the row's version alone tells
        cursor.execute(f"UPDATE {table} SET phase_message = 'first' WHERE name = 'plain'")
    assert _row(client, "plain")["phaseMessage"] == "first"
    with connection.cursor() as cursor:  # the same transaction (this test's): same xmin, a new tuple
        cursor.execute(f"UPDATE {table} SET phase_message = 'second' WHERE name = 'plain'")
    assert _row(client, "plain")["phaseMessage"] == "second"


def test_a_kept_row_follows_its_project_department_and_profile(client_for, org, workloads):
    profile = ServiceProfileFactory(owner_project=org.a)
    Workload.objects.filter(name="plain").update(profile_id=profile.pk, profile_name=profile.name,
                                                 profile_revision=profile.revision)
    client = client_for(org.users.member)
    row = _row(client, "plain")
    assert (row["projectName"], row["departmentName"], row["profile"]["outdated"]) == ("alpha", "research", False)
    # one at a time: each alone must reach the row
    Project.objects.filter(pk=org.a.pk).update(name="alpha-2")
    assert _row(client, "plain")["projectName"] == "alpha-2"
    Project.objects.filter(pk=org.a.pk).update(namespace="runai-alpha-2")
    assert _row(client, "plain")["namespace"] == "runai-alpha-2"
    Department.objects.filter(pk=org.department.pk).update(name="research-2")
    assert _row(client, "plain")["departmentName"] == "research-2"
    ServiceProfile.objects.filter(pk=profile.pk).update(revision=profile.revision + 1)
    assert _row(client, "plain")["profile"] == {"id": profile.pk, "name": profile.name, "revision": profile.revision,
                                                "currentRevision": profile.revision + 1, "outdated": True}


def test_a_kept_row_counts_the_clock(client_for, org, workloads, monkeypatch):
    client = client_for(org.users.member)
    monkeypatch.setattr(timezone, "now", lambda: FROZEN)
    before = {r["name"]: r for r in _page(client).json()["workloads"]}
    monkeypatch.setattr(timezone, "now", lambda: FROZEN + timedelta(hours=2))
    after = {r["name"]: r for r in _page(client).json()["workloads"]}
    plain, full = Workload.objects.get(name="plain"), Workload.objects.get(name="full")
    assert before["plain"]["totalPendingTimeSeconds"] == int((FROZEN - plain.created_at).total_seconds())
    assert after["plain"]["totalPendingTimeSeconds"] == before["plain"]["totalPendingTimeSeconds"] + 7200
    assert before["plain"]["totalRunningTimeSeconds"] is after["plain"]["totalRunningTimeSeconds"] is None
    finished = int((full.completed_at - full.started_at).total_seconds())
    assert before["full"]["totalRunningTimeSeconds"] == after["full"]["totalRunningTimeSeconds"] == finished


def test_a_suspended_workloads_running_time_stops_at_its_stop(client_for, org, workloads, monkeypatch):
    """Ran an hour, stopped (suspended) since: its running time stays an hour, in the list (kept rows or not), the
    detail, the portal's table and the sort."""
    Workload.objects.filter(name="plain").update(actual_phase="Stopped", started_at=NOW - timedelta(hours=3),
                                                 phase_updated_at=NOW - timedelta(hours=2))
    Workload.objects.filter(name="waiting").update(actual_phase="Running", started_at=NOW - timedelta(hours=2))
    client = client_for(org.users.member)
    plain = Workload.objects.get(name="plain")
    for later in (timedelta(0), timedelta(hours=5)):
        monkeypatch.setattr(timezone, "now", lambda later=later: NOW + later)
        assert _row(client, "plain")["totalRunningTimeSeconds"] == 3600
        assert client.get(f"/api/v1/workloads/{plain.pk}").json()["totalRunningTimeSeconds"] == 3600
    ordered = client.get("/api/v1/workloads?sortBy=totalRunningTimeSeconds&filterBy=totalRunningTimeSeconds>=1")
    assert [r["name"] for r in ordered.json()["workloads"]] == ["full", "plain", "waiting"]  # 1 min, 1 h, 7 h
    from django.test import Client

    portal = Client()
    portal.force_login(org.users.member)
    page = portal.get("/workloads", {"search": "plain"}).content.decode()
    assert "1h 00m" in page and "6h 00m" not in page


def test_a_page_is_one_query_and_a_page_read_again_renders_no_row(client_for, org, workloads, monkeypatch):
    rendered = []
    represent = WorkloadSerializer.represent  # what to_representation and the list render with
    monkeypatch.setattr(WorkloadSerializer, "represent",
                        lambda self, w, **kw: rendered.append(w.name) or represent(self, w, **kw))
    client = client_for(org.users.member)
    with CaptureQueriesContext(connection) as queries:
        _page(client)
    assert len([q for q in queries if "phase_message" in q["sql"]]) == 1, [q["sql"] for q in queries]
    assert sorted(rendered) == ["dist", "full", "plain", "waiting"]
    rendered.clear()
    _page(client)
    # PostgreSQL: every row kept, none rendered again; elsewhere each is rendered each time
    assert sorted(rendered) == ([] if connection.vendor == "postgresql" else ["dist", "full", "plain", "waiting"])


def test_rows_read_from_their_json_answer_what_the_serializer_answers(client_for, org, workloads, monkeypatch):
    # On PostgreSQL a row not kept is read from one JSON text (list_rows.full_row): digits, fractions of a second,
    # decimals and text that JSON could read otherwise must come out as the ORM reads them.
    _one_clock(monkeypatch)
    Workload.objects.filter(name="waiting").update(
        pending_reason={"used": 2**70, "over": 0.1, "tiny": 1e-30, "text": "é\u2028日本 12345678901234567890"},
        phase_message="0123456789012345678 digits", gpu_request=Decimal("0.125"), queue_position=7)
    Workload.objects.filter(name="plain").update(started_at=NOW.replace(microsecond=0), gpu_request=Decimal("2"),
                                                 phase_updated_at=NOW.replace(microsecond=120000))
    listed = _page(client_for(org.users.member)).json()["workloads"]
    assert len(listed) == 4
    for row in listed:
        expected = WorkloadSerializer(Workload.objects.select_related("project", "department").get(pk=row["id"])).data
        assert json.dumps(row) == json.dumps(expected), row["name"]
    plain = next(row for row in listed if row["name"] == "plain")
    assert plain["phaseUpdatedAt"].endswith(".120000Z") and plain["requestedGpus"] == 2.0


def test_rows_kept_for_one_caller_are_never_shown_to_another_who_may_not_see_them(client_for, org, workloads):
    common = {"department": org.department, "cluster": org.cluster, "created_by_name": "dave"}
    Workload.objects.create(kind="training", name="in-b", requested_name="in-b", project=org.b, **common)
    everything = {r["name"] for r in _page(client_for(org.users.platform_admin)).json()["workloads"]}
    assert {"plain", "full", "in-b"} <= everything  # every row kept now
    assert {r["name"] for r in _page(client_for(org.users.other)).json()["workloads"]} == {"in-b"}
    seen_in_a = {r["name"] for r in _page(client_for(org.users.viewer)).json()["workloads"]}
    assert "in-b" not in seen_in_a and {"plain", "full"} <= seen_in_a
    assert client_for(org.users.other).get("/api/v1/workloads", {"projectId": org.a.pk}).json()["workloads"] == []
