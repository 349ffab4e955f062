"""The workload list builds its rows from `values()` (workloads.list_rows) and formats dates itself: its JSON must
be the serializer's over model instances, field for field and byte for byte, and name every declared field."""

import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from workloads.models import Workload
from workloads.serializers import WorkloadSerializer

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


@pytest.mark.parametrize("query", ["", "deleted=true", "sortBy=name&sortOrder=asc", "sortBy=priority"])
def test_the_list_answers_what_the_serializer_answers_for_each_workload(client_for, org, workloads, query):
    response = client_for(org.users.member).get(f"/api/v1/workloads?{query}")
    assert response.status_code == 200, response.content
    listed = response.json()["workloads"]
    assert listed
    for row in listed:
        expected = WorkloadSerializer(Workload.objects.select_related("project", "department").get(pk=row["id"])).data
        assert json.dumps(row) == json.dumps(expected)  # same keys in the same order, same values and types


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
