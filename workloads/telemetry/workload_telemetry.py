"""Run:ai's `GET /api/v1/workloads/telemetry`: the live workloads the caller sees, now, counted (WORKLOADS_COUNT),
their allocated GPUs summed (GPU_ALLOCATION: what a workload in an allocated phase holds, as the list's
`allocatedGPU`), or the pending ones by how long they have been pending (PENDING_TIME_DISTRIBUTION, latest: four
buckets of the time since their phase became Pending). Filtered by cluster, department, node pool (the pool a
workload was placed in, where its pods run: `currentNodePools`, as studio.org.numbers counts it) and phases;
grouped by up to two of the spec's keys. One query."""

from datetime import timedelta

from django.db.models import Case, CharField, Count, Sum, Value, When
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from studio.listing import CommaListField
from studio.models import Cluster, Department, Project
from workloads.models import Workload
from workloads.runai_fields import allocated_gpu_expression, category_expression, placed_pool_expression

TYPES = ("WORKLOADS_COUNT", "GPU_ALLOCATION", "PENDING_TIME_DISTRIBUTION")
PHASES = ("Creating", "Initializing", "Resuming", "Pending", "Deleting", "Running", "Updating", "Stopped", "Stopping",
          "Degraded", "Failed", "Completed", "Terminating", "Unknown")
# groupBy key -> the column (or alias) it groups on, and the model that names its values.
GROUPS = {"ClusterId": ("cluster_id", Cluster), "DepartmentId": ("department_id", Department),
          "ProjectId": ("project_id", Project), "Type": ("kind", None), "CurrentNodepools": ("pool", None),
          "Phase": ("actual_phase", None), "Category": ("category", None)}
PENDING_KEY = "PendingTime"
# The four buckets of PENDING_TIME_DISTRIBUTION: (label, lower bound); the spec does not name them.
BUCKETS = (("0-1h", timedelta(0)), ("1h-8h", timedelta(hours=1)), ("8h-24h", timedelta(hours=8)),
           ("24h+", timedelta(hours=24)))


class TelemetryQuery(serializers.Serializer):
    telemetryType = serializers.ChoiceField(choices=TYPES)
    clusterId = serializers.UUIDField(required=False)
    departmentId = serializers.IntegerField(required=False, min_value=1)
    nodepoolName = serializers.CharField(required=False, max_length=63)
    groupBy = CommaListField(child=serializers.ChoiceField(choices=list(GROUPS)), required=False, max_length=2)
    filterByPhases = CommaListField(child=serializers.ChoiceField(choices=PHASES), required=False)


def _bucket_expression(now):
    whens = [When(phase_updated_at__lte=now - lower, then=Value(label)) for label, lower in reversed(BUCKETS[1:])]
    return Case(*whens, default=Value(BUCKETS[0][0]), output_field=CharField())


def telemetry(*, user, query: dict) -> dict:
    kind = query["telemetryType"]
    workloads = Workload.objects.visible_to(user).live().annotate(pool=placed_pool_expression(),
                                                                 category=category_expression())
    if query.get("clusterId"):
        workloads = workloads.filter(cluster_id=query["clusterId"])
    if query.get("departmentId"):
        workloads = workloads.filter(department_id=query["departmentId"])
    if query.get("nodepoolName"):
        workloads = workloads.filter(pool=query["nodepoolName"])
    if query.get("filterByPhases"):
        workloads = workloads.filter(actual_phase__in=query["filterByPhases"])
    keys = list(dict.fromkeys(query.get("groupBy") or []))
    columns = [GROUPS[key][0] for key in keys]
    if kind == "PENDING_TIME_DISTRIBUTION":
        workloads = workloads.filter(actual_phase=Workload.Phase.PENDING).annotate(
            bucket=_bucket_expression(timezone.now()))
        columns, keys = ["bucket", *columns], [PENDING_KEY, *keys]
    amount = Sum(allocated_gpu_expression()) if kind == "GPU_ALLOCATION" else Count("pk")
    rows = list(workloads.order_by().values(*columns).annotate(amount=amount)) if columns else [
        workloads.order_by().aggregate(amount=amount)]
    if kind == "PENDING_TIME_DISTRIBUTION":  # every bucket is answered, an empty one as 0
        seen = {tuple(row[c] for c in columns) for row in rows}
        rows += [{"bucket": label, "amount": 0} for label, _ in BUCKETS if (label,) not in seen and len(columns) == 1]
    names = _names(keys, columns, rows)
    values = []
    for row in sorted(rows, key=lambda r: [_order(c, r[c]) for c in columns]):
        value = {"value": f"{float(row['amount'] or 0):g}"}
        if keys:
            value["groups"] = [{"key": key, "value": str(row[column]),
                                **({"name": names[key][row[column]]} if row[column] in names.get(key, {}) else {})}
                               for key, column in zip(keys, columns, strict=True)]
        values.append(value)
    return {"type": kind, "timestamp": timezone.now().isoformat(), "values": values}


def _order(column, value):
    if column == "bucket":
        return str([label for label, _ in BUCKETS].index(value))
    return str(value)


def _names(keys, columns, rows) -> dict:
    """The names of grouped clusters, departments and projects: one query each."""
    names = {}
    for key, column in zip(keys, columns, strict=True):
        model = GROUPS.get(key, (None, None))[1]
        if model is not None:
            names[key] = dict(model.objects.filter(pk__in={r[column] for r in rows}).values_list("pk", "name"))
    return names


class WorkloadsTelemetryView(APIView):
    @extend_schema(
        tags=["Workloads"], operation_id="get_workloads_telemetry",
        summary="Workloads now: counted, GPUs allocated, or pending time (latest), grouped.",
        parameters=[OpenApiParameter("telemetryType", OpenApiTypes.STR, required=True, enum=list(TYPES)),
                    OpenApiParameter("clusterId", OpenApiTypes.UUID), OpenApiParameter("departmentId", OpenApiTypes.STR),
                    OpenApiParameter("nodepoolName", OpenApiTypes.STR),
                    OpenApiParameter("groupBy", OpenApiTypes.STR, explode=False, many=True, enum=list(GROUPS)),
                    OpenApiParameter("filterByPhases", OpenApiTypes.STR, explode=False, many=True, enum=list(PHASES))],
        responses={200: inline_serializer("WorkloadsTelemetry", {
            "type": serializers.CharField(), "timestamp": serializers.DateTimeField(),
            "values": serializers.ListField(child=serializers.DictField())})},
    )
    def get(self, request):
        query = TelemetryQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response(telemetry(user=request.user, query=query.validated_data))
