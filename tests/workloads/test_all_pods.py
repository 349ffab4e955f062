"""`GET /api/v1/workloads/pods` and `/pods/count` (Run:ai's Pods tag): every pod the caller may see, with the
spec's filters, sort and paging, checked against both of Run:ai's documents."""

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.runai_spec import assert_matches_spec
from workloads.models import Pod, Workload

pytestmark = pytest.mark.django_db


@pytest.fixture
def pods(org):
    """Pods in project A (two workloads, one finished pod) and in project B, plus one of a deleted workload."""
    now = timezone.now()

    def workload(name, project, **extra):
        return Workload.objects.create(kind="training", name=name, requested_name=name, project=project,
                                       department=org.department, cluster=org.cluster, created_by_name="bob",
                                       spec={"image": "python:3.11"}, **extra)

    a1, a2, b1 = workload("a1", org.a), workload("a2", org.a), workload("b1", org.b)
    gone = workload("gone", org.a, deleted_at=now)
    rows = [(a1, "a1-0", "Running", "n0", 3), (a1, "a1-1", "Succeeded", "n1", 2), (a2, "a2-0", "Pending", "", 1),
            (b1, "b1-0", "Running", "n0", 0), (gone, "gone-0", "Running", "n1", 4)]
    for w, name, phase, node, minutes_ago in rows:
        Pod.objects.create(workload=w, uid=str(uuid.uuid5(uuid.NAMESPACE_DNS, name)), name=name, phase=phase, node_name=node,
                           created_at=now - timedelta(minutes=minutes_ago))
    return {"a1": a1, "a2": a2, "b1": b1, "gone": gone}


def names(response):
    assert response.status_code == 200, response.json()
    assert_matches_spec(response, "get", "/api/v1/workloads/pods")
    return [pod["name"] for pod in response.json()["pods"]]


def test_a_member_sees_only_their_projects_pods(client_for, org, pods):
    member = client_for(org.users.member)
    # Oldest first by default (sortOrder's default is asc); the deleted workload's pod is left out.
    assert names(member.get("/api/v1/workloads/pods")) == ["a1-0", "a1-1", "a2-0"]
    count = member.get("/api/v1/workloads/pods/count")
    assert count.json() == {"count": 3}
    assert_matches_spec(count, "get", "/api/v1/workloads/pods/count")
    assert names(client_for(org.users.other).get("/api/v1/workloads/pods")) == ["b1-0"]
    assert names(client_for(org.users.platform_admin).get("/api/v1/workloads/pods")) == [
        "a1-0", "a1-1", "a2-0", "b1-0"]


def test_the_item_is_the_per_workload_pods_item(client_for, org, pods):
    member = client_for(org.users.member)
    everything = member.get("/api/v1/workloads/pods").json()["pods"]
    own = member.get(f"/api/v1/workloads/{pods['a1'].pk}/pods").json()["pods"]
    assert everything[:2] == own
    assert everything[0]["workloadId"] == str(pods["a1"].pk) and everything[0]["projectName"] == "alpha"


def test_filters_sort_search_and_paging(client_for, org, pods):
    member = client_for(org.users.platform_admin)
    get = lambda query: names(member.get("/api/v1/workloads/pods?" + query))  # noqa: E731
    assert get(f"filterBy=workloadId=={pods['a1'].pk},nodeName==n1") == ["a1-1"]
    assert get("filterBy=nodeName!=n0&sortBy=createdAt&sortOrder=desc") == ["a2-0", "a1-1"]
    assert get("filterBy=nodeName=^n&sortBy=nodeName,createdAt") == ["a1-0", "b1-0", "a1-1"]
    assert get(f"filterBy=clusterId=={org.cluster.pk}&search=A1-") == ["a1-0", "a1-1"]
    assert get("completed=true") == ["a1-1"] and get("completed=false") == ["a1-0", "a2-0", "b1-0"]
    assert get("filterBy=completedAt>=2000-01-01T00:00:00Z") == ["a1-1"]
    assert get("deleted=true") == ["gone-0"]
    assert get("verbosity=full&limit=2") == ["a1-0", "a1-1"]
    page = member.get("/api/v1/workloads/pods?limit=2").json()
    assert page["next"] == 2
    last = member.get("/api/v1/workloads/pods?limit=2&offset=2").json()
    assert [p["name"] for p in last["pods"]] == ["a2-0", "b1-0"] and "next" not in last
    count = member.get("/api/v1/workloads/pods/count?filterBy=nodeName==n0&search=b1").json()
    assert count == {"count": 1}


@pytest.mark.parametrize("query,fields", [
    ("filterBy=secret==1", ["filterBy"]),
    ("filterBy=nodeName==n0,image==x", ["filterBy"]),
    ("sortBy=name", ["sortBy"]),
    ("sortOrder=up", ["sortOrder"]),
    ("completed=maybe", ["completed"]),
    ("deleted=perhaps", ["deleted"]),
    ("verbosity=loud", ["verbosity"]),
    ("limit=0", ["limit"]),
    ("filterBy=createdAt>=yesterday", ["filterBy"]),
])
def test_bad_input_is_a_400_naming_the_problem(client_for, org, pods, query, fields):
    for path in ("/api/v1/workloads/pods", "/api/v1/workloads/pods/count"):
        response = client_for(org.users.member).get(f"{path}?{query}")
        if path.endswith("count") and fields[0] in ("sortBy", "limit", "sortOrder"):
            continue  # count takes neither sort nor paging
        assert response.status_code == 400, (path, query, response.content)
        assert set(fields) <= {e["field"] for e in response.json()["errors"]}, response.json()


def test_anonymous_is_refused(client, pods):
    assert client.get("/api/v1/workloads/pods").status_code == 401
