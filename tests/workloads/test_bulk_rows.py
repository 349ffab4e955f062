"""The sync's bulk writes (`workloads/cluster/bulk_rows.py`) keep every value as the ORM would write it: on
PostgreSQL the rows go as one JSON document read by column type, on SQLite a parameter per value."""

from decimal import Decimal

import pytest
from django.utils import timezone

from tests.workloads.cluster_support import make_workload
from workloads.cluster.bulk_rows import insert_rows, update_rows
from workloads.models import Workload, WorkloadEvent

pytestmark = pytest.mark.django_db


def test_rows_of_several_shapes_get_their_columns_defaults(org):
    workload, now = make_workload(org.a, "events"), timezone.now()
    insert_rows(WorkloadEvent, [
        {"workload_id": workload.pk, "at": now, "type": "Warning", "reason": "Quoted",
         "message": 'it\'s "quoted" \\ back, é ✓ {"not": "json"}'},
        {"workload_id": workload.pk, "at": now, "type": "Normal", "reason": "Keyed", "source": "cluster",
         "dedup_key": "uid-1"},
    ])
    rows = WorkloadEvent.objects.filter(workload=workload, reason__in=["Quoted", "Keyed"]).order_by("reason")
    assert list(rows.values_list("reason", "type", "message", "source", "dedup_key", "at")) == [
        ("Keyed", "Normal", "", "cluster", "uid-1", now),
        ("Quoted", "Warning", 'it\'s "quoted" \\ back, é ✓ {"not": "json"}', "studio", "", now)]


def test_updated_rows_keep_decimals_json_values_and_nulls(org):
    first, second = make_workload(org.a, "first"), make_workload(org.a, "second")
    reason = {"type": "NoNodeRoom", "queueLength": 2, "nodes": ["gpu-1", "gpu-2"], "note": "it's \"so\""}
    update_rows(Workload, [{"pk": first.pk, "gpu_request": Decimal("1.250"), "pending_reason": reason,
                            "queue_position": 1},
                           {"pk": second.pk, "gpu_request": Decimal("0.5"), "pending_reason": "just text",
                            "queue_position": 2}],
                ["gpu_request", "pending_reason", "queue_position"], same={"phase_message": "waiting"})
    rows = Workload.objects.filter(pk__in=[first.pk, second.pk]).order_by("queue_position")
    assert list(rows.values_list("gpu_request", "pending_reason", "queue_position", "phase_message")) == [
        (Decimal("1.250"), reason, 1, "waiting"), (Decimal("0.500"), "just text", 2, "waiting")]
    update_rows(Workload, [{"pk": first.pk, "pending_reason": None, "queue_position": None}],
                ["pending_reason", "queue_position"])
    assert Workload.objects.filter(pk=first.pk, pending_reason__isnull=True, queue_position__isnull=True).exists()
