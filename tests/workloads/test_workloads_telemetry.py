"""`GET /api/v1/workloads/telemetry`: counts, allocated GPUs and pending time of the workloads the caller sees,
grouped as Run:ai's spec shapes it, checked against both documents and driven through runapy."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.runai_spec import assert_matches_spec, spec_errors
from tests.runapy_support import runapy_client
from workloads.models import Workload

URL = "/api/v1/workloads/telemetry"


@pytest.fixture
def workloads(org):
    now = timezone.now()
    rows = [("t1", org.a, "training", "Running", 2, 0, ["pool-a"]), ("t2", org.a, "training", "Pending", 1, 2, []),
            ("i1", org.a, "inference", "Running", 1, 0, []), ("t3", org.b, "training", "Pending", 4, 10, []),
            ("t4", org.b, "training", "Completed", 3, 0, [])]
    for name, project, kind, phase, gpus, hours, pools in rows:
        Workload.objects.create(kind=kind, name=name, requested_name=name, project=project,
                                department=org.department, cluster=org.cluster, created_by_name="bob",
                                actual_phase=phase, gpu_request=gpus, phase_updated_at=now - timedelta(hours=hours),
                                spec={"image": "x", "nodePools": pools}, node_pool=pools[0] if pools else "")
    Workload.objects.create(kind="training", name="gone", requested_name="gone", project=org.a,
                            department=org.department, cluster=org.cluster, actual_phase="Running", gpu_request=8,
                            deleted_at=now)


def get(api, query):
    response = api.get(f"{URL}?{query}")
    assert response.status_code == 200, response.json()
    assert_matches_spec(response, "get", URL)
    return [(v["value"], [(g["key"], g["value"], g.get("name")) for g in v.get("groups", [])])
            for v in response.json()["values"]]


@pytest.mark.django_db
def test_counts_and_gpus_grouped_over_what_the_caller_sees(client_for, org, workloads):
    admin, member = client_for(org.users.platform_admin), client_for(org.users.member)
    assert get(admin, "telemetryType=WORKLOADS_COUNT") == [("5", [])]
    assert get(member, "telemetryType=WORKLOADS_COUNT") == [("3", [])]  # project A's only, the deleted one left out
    # GPUs held by workloads in an allocated phase (Running: t1, i1); pending and finished ones hold none.
    assert get(admin, "telemetryType=GPU_ALLOCATION") == [("3", [])]
    a, b = str(org.a.pk), str(org.b.pk)
    assert get(admin, "telemetryType=WORKLOADS_COUNT&groupBy=ProjectId,Phase") == [
        ("1", [("ProjectId", a, "alpha"), ("Phase", "Pending", None)]),
        ("2", [("ProjectId", a, "alpha"), ("Phase", "Running", None)]),
        ("1", [("ProjectId", b, "beta"), ("Phase", "Completed", None)]),
        ("1", [("ProjectId", b, "beta"), ("Phase", "Pending", None)])]
    assert get(admin, "telemetryType=GPU_ALLOCATION&groupBy=Type") == [
        ("1", [("Type", "inference", None)]), ("2", [("Type", "training", None)])]
    assert get(admin, "telemetryType=WORKLOADS_COUNT&groupBy=CurrentNodepools") == [
        ("4", [("CurrentNodepools", "default", None)]), ("1", [("CurrentNodepools", "pool-a", None)])]
    assert get(admin, f"telemetryType=WORKLOADS_COUNT&nodepoolName=pool-a&clusterId={org.cluster.pk}"
                      f"&departmentId={org.department.pk}") == [("1", [])]
    assert get(admin, "telemetryType=WORKLOADS_COUNT&filterByPhases=Running,Completed&groupBy=ClusterId") == [
        ("3", [("ClusterId", str(org.cluster.pk), "main")])]


@pytest.mark.django_db
def test_pending_time_distribution_in_four_buckets(client_for, org, workloads):
    admin = client_for(org.users.platform_admin)
    assert get(admin, "telemetryType=PENDING_TIME_DISTRIBUTION") == [
        ("0", [("PendingTime", "0-1h", None)]), ("1", [("PendingTime", "1h-8h", None)]),
        ("1", [("PendingTime", "8h-24h", None)]), ("0", [("PendingTime", "24h+", None)])]
    assert get(client_for(org.users.member), "telemetryType=PENDING_TIME_DISTRIBUTION&groupBy=ProjectId") == [
        ("1", [("PendingTime", "1h-8h", None), ("ProjectId", str(org.a.pk), "alpha")])]


@pytest.mark.django_db
@pytest.mark.parametrize("query,fields", [
    ("", ["telemetryType"]),
    ("telemetryType=LOUDNESS", ["telemetryType"]),
    ("telemetryType=WORKLOADS_COUNT&groupBy=Type,Phase,ProjectId", ["groupBy"]),
    ("telemetryType=WORKLOADS_COUNT&groupBy=Colour", ["groupBy"]),
    ("telemetryType=WORKLOADS_COUNT&filterByPhases=Running,Sleeping", ["filterByPhases"]),
    ("telemetryType=WORKLOADS_COUNT&clusterId=nope&departmentId=x", ["clusterId", "departmentId"]),
])
def test_bad_input_is_a_400_naming_each_problem(client_for, org, query, fields):
    response = client_for(org.users.member).get(f"{URL}?{query}")
    assert response.status_code == 400, response.content
    named = {e["field"].split("[")[0] for e in response.json()["errors"]}
    assert set(fields) <= named, response.json()


@pytest.mark.django_db
def test_anonymous_is_refused(client):
    assert client.get(f"{URL}?telemetryType=WORKLOADS_COUNT").status_code == 401


@pytest.mark.django_db(transaction=True)
def test_runapy_get_workloads_telemetry(live_server, org, workloads):
    api = runapy_client(live_server.url, org.users.member).workloads.workloads
    answer = api.get_workloads_telemetry("GPU_ALLOCATION", group_by=["Type"])
    assert not spec_errors(answer.data, "get", URL, 200)
    assert [(v["value"], v["groups"][0]["value"]) for v in answer.data["values"]] == [
        ("1", "inference"), ("2", "training")]
