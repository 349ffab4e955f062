"""Run:ai's `filterBy`/`sortBy` over workloads: `explode: false` comma lists and every field its spec lists."""

import csv
import io
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from urllib.parse import parse_qsl, urlencode

import pytest
from django.test import Client
from django.utils import timezone

from tests.factories import DepartmentFactory, ProjectFactory
from workloads.models import Workload

pytestmark = pytest.mark.django_db

NOW = timezone.now()
# w3 was created long ago: a fixed time, so that the test ids are the same in every process that collects them.
LONG_AGO = datetime(2020, 1, 1, tzinfo=UTC)


@pytest.fixture
def api(client_for, org):
    """Five workloads that differ in every field Run:ai filters and sorts by."""
    other_department = DepartmentFactory(name="zeta")
    third = ProjectFactory(name="gamma", department=other_department, cluster=org.cluster)
    rows = [
        # name, kind, phase, project, spec, gpus, started (minutes ago), completed (minutes ago)
        ("w0", "training", "Running", org.a, {"nodePools": ["pool-a", "pool-b"]}, "2", 40, None),
        ("w1", "inference", "Pending", org.a, {"priorityClass": "high"}, "1", None, None),
        ("w2", "workspace", "Running", org.b, {"nodePools": ["pool-b"], "category": "Experiment"}, "0.5", 10, None),
        ("w3", "training", "Completed", third, {"preemptibility": "non-preemptible"}, "4", 50, 20),
        ("w4", "training", "Failed", org.a, {}, "0", 5, 1),
    ]
    now = timezone.now()  # not the module's NOW: running times count from here, however late the test runs
    for i, (name, kind, phase, project, spec, gpus, started, completed) in enumerate(rows):
        Workload.objects.create(
            kind=kind, name=name, requested_name=name, project=project, department=project.department,
            cluster=org.cluster, created_by_name=f"user{i % 2}", actual_phase=phase, spec=spec,
            gpu_request=Decimal(gpus),
            started_at=now - timedelta(minutes=started) if started else None,
            completed_at=now - timedelta(minutes=completed) if completed else None,
        )
    Workload.objects.filter(name="w3").update(created_at=LONG_AGO)
    return client_for(org.users.platform_admin)


def names(response):
    assert response.status_code == 200, response.json()
    return [w["name"] for w in response.json()["workloads"]]


@pytest.mark.parametrize(
    "query,expected",
    [
        # one filterBy holding a comma list: every filter applies
        ("filterBy=type==training,phase!=Running", ["w3", "w4"]),
        ("filterBy=name==w0,projectName==alpha", ["w0"]),
        ("filterBy=name==w0,projectName==beta", []),
        # repeated and comma-separated together
        ("filterBy=type==training,phase!=Running&filterBy=name=$4", ["w4"]),
        # a comma not followed by `<field><op>` belongs to the value
        ("filterBy=name=@w0,x", []),
        ("filterBy=submittedBy!@a,b,name=^w", ["w0", "w1", "w2", "w3", "w4"]),
        # the fields Run:ai's spec lists
        ("filterBy=allocatedGPU>=1", ["w0"]),
        ("filterBy=allocatedGPU>=0.5", ["w0", "w2"]),
        ("filterBy=nodepool==pool-b", ["w2"]),
        ("filterBy=nodepool==default", ["w1", "w3", "w4"]),
        ("filterBy=departmentName==zeta", ["w3"]),
        ("filterBy=departmentName!=zeta", ["w0", "w1", "w2", "w4"]),
        ("filterBy=category==Train", ["w0", "w3", "w4"]),
        ("filterBy=category==Experiment", ["w2"]),
        ("filterBy=priorityClassName==high", ["w1"]),
        ("filterBy=priorityClassName==build", ["w2", "w3"]),
        ("filterBy=priority>=100", ["w2", "w3"]),
        ("filterBy=totalRunningTimeSeconds>=1500", ["w0", "w3"]),
        ("filterBy=totalPendingTimeSeconds>=3600", ["w3"]),
        ("filterBy=distributedFramework==Pytorch", []),
        ("filterBy=createdAt<=2020-01-01T01:00:00Z", ["w3"]),
        ("filterBy=completedAt>=2000-01-01T00:00:00Z", ["w3", "w4"]),
        # sortBy, also as a comma list
        ("sortBy=allocatedGPU&sortOrder=desc&filterBy=allocatedGPU>=0.1", ["w0", "w2"]),
        ("sortBy=allocatedGPU&filterBy=type!=inference,allocatedGPU>=0.1", ["w2", "w0"]),
        ("sortBy=departmentName,name", ["w0", "w1", "w2", "w4", "w3"]),
        ("sortBy=nodepool,name", ["w1", "w3", "w4", "w0", "w2"]),
        ("sortBy=completedAt,name&filterBy=phase==Completed,phase==Completed", ["w3"]),
        ("sortBy=totalRunningTimeSeconds&filterBy=type==training", ["w4", "w3", "w0"]),
    ],
)
def test_filter_and_sort_by_run_ai_fields(api, query, expected):
    assert sorted(names(api.get("/api/v1/workloads?" + query))) == sorted(expected)
    if "sortBy" in query:
        assert names(api.get("/api/v1/workloads?" + query)) == expected
    filters = [(k, v) for k, v in parse_qsl(query) if k == "filterBy"]
    assert api.get("/api/v1/workloads/count?" + urlencode(filters)).json() == {"count": len(expected)}


@pytest.mark.parametrize(
    "query,problem",
    [
        ("filterBy=name==w0,secret==1", "'secret'"),
        ("filterBy=allocatedGPU>=lots", "allocatedGPU"),
        ("filterBy=createdAt>=yesterday", "createdAt"),
        ("sortBy=name,password", "'password'"),
    ],
)
def test_unknown_fields_and_bad_values_are_a_400_naming_them(api, query, problem):
    response = api.get("/api/v1/workloads?" + query)
    assert response.status_code == 400, response.json()
    errors = response.json()["errors"]
    assert [e["field"] for e in errors] == [query.split("=")[0]]
    assert problem in errors[0]["message"]


def test_metric_types_as_one_comma_list_or_repeated(api):
    workload = Workload.objects.get(name="w0")
    start = (NOW - timedelta(minutes=10)).isoformat()
    url = f"/api/v1/workloads/{workload.id}/metrics"
    for query in ({"metricType": "CPU_USAGE_CORES,POD_COUNT", "start": start, "end": NOW.isoformat()},
                  {"metricType": ["CPU_USAGE_CORES", "POD_COUNT"], "start": start, "end": NOW.isoformat()}):
        response = api.get(url, query)
        assert response.status_code == 200, response.json()
        assert [m["type"] for m in response.json()["measurements"]] == ["CPU_USAGE_CORES", "POD_COUNT"]
    bad = api.get(url, {"metricType": "CPU_USAGE_CORES,NOPE", "start": start, "end": NOW.isoformat()})
    assert bad.status_code == 400 and "NOPE" in bad.json()["errors"][0]["message"]


def test_filtered_sorted_list_reads_in_a_fixed_number_of_queries(api, django_assert_max_num_queries):
    with django_assert_max_num_queries(4):  # token, user, role (authentication), then one for the page
        names(api.get("/api/v1/workloads?filterBy=nodepool==default,allocatedGPU>=0&sortBy=priority,category"))


def test_nodepool_is_the_pool_a_workload_was_placed_in(client_for, org):
    """Run:ai's `nodepool` (filter, sort, the page's column): where the workload was placed, not the first pool it
    may use; a row not placed (kept from before placement was stored) shows the first pool it asked for."""
    for name, pools, placed in (("second", ["pool-a", "pool-b"], "pool-b"), ("first", ["pool-a", "pool-b"], "pool-a"),
                                ("legacy", ["pool-b"], ""), ("nameless", None, "")):
        Workload.objects.create(kind="training", name=name, requested_name=name, project=org.a,
                                department=org.department, cluster=org.cluster, actual_phase="Running",
                                spec={"nodePools": pools} if pools else {}, node_pool=placed)
    api = client_for(org.users.platform_admin)
    assert sorted(names(api.get("/api/v1/workloads", {"filterBy": "nodepool==pool-b"}))) == ["legacy", "second"]
    assert names(api.get("/api/v1/workloads", {"filterBy": "nodepool==pool-a"})) == ["first"]
    assert names(api.get("/api/v1/workloads", {"filterBy": "nodepool==default"})) == ["nameless"]
    assert api.get("/api/v1/workloads/count", {"filterBy": "nodepool!=pool-a"}).json() == {"count": 3}
    assert names(api.get("/api/v1/workloads", {"sortBy": "nodepool,name"})) == ["nameless", "first", "legacy",
                                                                                 "second"]
    page = Client()
    page.force_login(org.users.platform_admin)
    exported = page.get("/workloads/export.csv", {"columns": "name,nodepool", "sortBy": "nodepool,name"})
    assert exported.status_code == 200
    rows = list(csv.reader(io.StringIO(b"".join(exported.streaming_content).decode())))
    assert rows[1:] == [["nameless", "default"], ["first", "pool-a"], ["legacy", "pool-b"], ["second", "pool-b"]]
