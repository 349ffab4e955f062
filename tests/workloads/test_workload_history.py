"""`GET /api/v1/workloads/{workloadId}/history`: the recorded phase changes and events, oldest first, in Run:ai's
`HistoryRecords` shape (both documents), paged; a member sees only their projects' workloads."""

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.runai_spec import assert_matches_spec, spec_errors
from tests.runapy_support import runapy_client
from workloads.models import Workload, WorkloadEvent

URL = "/api/v1/workloads/{workloadId}/history"


@pytest.fixture
def workload(org):
    workload = Workload.objects.create(kind="training", name="t", requested_name="t", project=org.a,
                                       department=org.department, cluster=org.cluster, created_by_name="bob")
    now = timezone.now()
    for i, (reason, phase, message, source, type_) in enumerate([
        ("Submitted", "Creating", "Submitted by bob.", "studio", "Normal"),
        ("Pending", "Pending", "Waiting for a node.", "studio", "Normal"),
        ("FailedScheduling", "", "0/3 nodes are available.", "cluster", "Warning"),
        ("Running", "Running", "", "studio", "Normal"),
    ]):
        WorkloadEvent.objects.create(workload=workload, at=now + timedelta(seconds=i), reason=reason, phase=phase,
                                     message=message, source=source, type=type_)
    return workload


def records(response):
    assert response.status_code == 200, response.json()
    assert_matches_spec(response, "get", URL)
    return response.json()["records"]


@pytest.mark.django_db
def test_phase_changes_and_events_oldest_first(client_for, org, workload):
    got = records(client_for(org.users.member).get(URL.format(workloadId=workload.pk)))
    assert [r["meta"]["type"] for r in got] == ["Event", "PhaseUpdate", "Event", "PhaseUpdate"]
    assert got[1]["spec"] == {"phaseUpdate": {"phase": "Pending", "phaseMessage": "Waiting for a node."}}
    event = got[2]["spec"]["event"]
    assert (event["reason"], event["type"], event["source"], event["clusterId"]) == (
        "FailedScheduling", "Warning", "cluster", str(org.cluster.pk))
    assert got[0]["meta"]["creationTimestamp"] < got[3]["meta"]["creationTimestamp"]


@pytest.mark.django_db
def test_paged_and_authorized(client_for, org, workload):
    member = client_for(org.users.member)
    first = member.get(URL.format(workloadId=workload.pk) + "?limit=3").json()
    assert len(first["records"]) == 3 and first["next"] == 3
    last = member.get(URL.format(workloadId=workload.pk) + "?limit=3&offset=3").json()
    assert len(last["records"]) == 1 and "next" not in last
    assert client_for(org.users.other).get(URL.format(workloadId=workload.pk)).status_code == 404
    assert member.get(URL.format(workloadId=uuid.uuid4())).status_code == 404
    bad = member.get(URL.format(workloadId=workload.pk) + "?limit=0")
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "limit"


@pytest.mark.django_db(transaction=True)
def test_runapy_get_workload_history(live_server, org, workload):
    api = runapy_client(live_server.url, org.users.member).workloads.events
    answer = api.get_workload_history(str(workload.pk))
    assert not spec_errors(answer.data, "get", URL, 200)
    assert len(answer.data["records"]) == 4
