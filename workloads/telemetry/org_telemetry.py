"""Run:ai's (latest) `GET /api/v1/org-unit/projects/telemetry` and `…/departments/telemetry`: the quotas and the
allocation of the projects (departments) the caller sees, now, summed and optionally grouped.

Quotas are the per-pool `resources` (a project without per-pool quotas counts its GPU totals in its cluster's
default pool, as studio.org.numbers does): GPU_QUOTA in GPUs, CPU_QUOTA in millicores, MEMORY_QUOTA in MB.
Allocation is what the live workloads in an allocated phase hold, allocated as studio.org.numbers defines it (the
number every page and `status.quotaStatus` show): GPU_ALLOCATION their GPUs, CPU_ALLOCATION their CPU in millicores
and MEMORY_ALLOCATION their memory in MB, each over all the pods it may run (as stored at submission). A workload counts in the pool it was placed in (`Workload.node_pool`, ""
the cluster's default pool), where its pods run, on every cluster (KAI Scheduler's own count stays in the projects'
`additionalStatusData`). The `*_NON_PREEMPTIBLE` types count the workloads of a class that is not preempted (build,
inference)."""

from collections import defaultdict

from django.db.models import Sum
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from studio.listing import CommaListField
from studio.models import Cluster, Department, NodePool, Project
from studio.org.units import MB_PER_UNIT, department_cluster_id
from workloads.models import ALLOCATED, Workload
from workloads.runai_fields import DEFAULT_NODE_POOL, priority_class_expression

TYPES = ("GPU_QUOTA", "CPU_QUOTA", "MEMORY_QUOTA", "GPU_ALLOCATION", "CPU_ALLOCATION", "MEMORY_ALLOCATION",
         "GPU_ALLOCATION_NON_PREEMPTIBLE", "CPU_ALLOCATION_NON_PREEMPTIBLE", "MEMORY_ALLOCATION_NON_PREEMPTIBLE")
PROJECT_GROUPS = {"ClusterId": "cluster", "NodepoolId": "pool", "ParentId": "department"}
DEPARTMENT_GROUPS = {"CLUSTER_ID": "cluster"}


class TelemetryQuery(serializers.Serializer):
    telemetryType = serializers.ChoiceField(choices=TYPES)
    clusterId = serializers.UUIDField(required=False)
    departmentId = serializers.IntegerField(required=False, min_value=1)
    nodepoolId = serializers.CharField(required=False, max_length=20)
    nodepoolName = serializers.CharField(required=False, max_length=63)
    groupBy = CommaListField(child=serializers.CharField(), required=False, max_length=2)

    def __init__(self, *args, groups: dict, **kwargs):
        super().__init__(*args, **kwargs)
        self.groups = groups

    def validate_groupBy(self, value):
        unknown = [g for g in value if g not in self.groups]
        if unknown:
            raise serializers.ValidationError(f"Cannot group by {', '.join(unknown)}; by: {', '.join(self.groups)}.")
        return list(dict.fromkeys(value))


def _quota_rows(units, kind: str, default_pool_ids: dict):
    """(cluster, pool id, department, amount) per unit and pool of its quotas."""
    for cluster, department, resources, gpu_total in units:
        if not resources and kind == "gpu" and gpu_total is not None:
            yield cluster, default_pool_ids.get(cluster, ""), department, float(gpu_total)
        for entry in resources:
            quota = entry.get(kind) or {}
            if quota.get("deserved") in (None, -1):
                continue
            factor = MB_PER_UNIT.get(quota.get("units"), 1.0) if kind == "memory" else 1.0
            yield cluster, str((entry.get("nodePool") or {}).get("id", "")), department, float(quota["deserved"]) * factor


# The stored field of each kind, and its factor to the telemetry's unit (GPUs, millicores, MB).
ALLOCATION_FIELDS = {"gpu": ("gpu_request", 1.0), "cpu": ("cpu_request", 1.0), "memory": ("memory_request", 1e-6)}


def _allocation_rows(workloads, kind: str, non_preemptible: bool, pool_ids: dict, defaults: dict):
    """(cluster, pool id, department, amount), grouped in the database by cluster, department and placed pool:
    one query, few rows."""
    if non_preemptible:  # the build and inference classes (runai_fields.preemptible_of)
        workloads = workloads.alias(cls=priority_class_expression()).filter(cls__in=["build", "inference"])
    field, factor = ALLOCATION_FIELDS[kind]
    rows = workloads.values("cluster_id", "department_id", "node_pool").annotate(total=Sum(field))
    amounts = ((r, float(r["total"] or 0) * factor) for r in rows)
    for row, amount in amounts:
        cluster = str(row["cluster_id"])
        pool = row["node_pool"] or defaults.get(cluster, DEFAULT_NODE_POOL)
        yield cluster, pool_ids.get((cluster, pool), ""), row["department_id"], amount


def _answer(request, *, groups: dict, projects_of, quota_units):
    query = TelemetryQuery(data=request.query_params, groups=groups)
    query.is_valid(raise_exception=True)
    data = query.validated_data
    telemetry = data["telemetryType"]
    kind = telemetry.split("_")[0].lower()
    pools = list(NodePool.objects.all().only("id", "name", "cluster_id", "is_default"))
    pool_ids = {(str(p.cluster_id), p.name): str(p.pk) for p in pools}
    defaults = {str(p.cluster_id): p.name for p in pools if p.is_default}
    names = {"pool": {str(p.pk): p.name for p in pools},
             "cluster": {str(pk): name for pk, name in Cluster.objects.values_list("pk", "name")}}
    if "QUOTA" in telemetry:
        rows = list(_quota_rows(quota_units(data), kind, {c: pool_ids.get((c, name), "") for c, name in defaults.items()}))
    else:
        workloads = Workload.objects.live().filter(ALLOCATED, project__in=projects_of(data))
        rows = list(_allocation_rows(workloads, kind, telemetry.endswith("NON_PREEMPTIBLE"), pool_ids, defaults))
    if data.get("nodepoolId") or data.get("nodepoolName"):
        wanted = {data["nodepoolId"]} if data.get("nodepoolId") else {
            str(p.pk) for p in pools if p.name == data["nodepoolName"]}
        rows = [r for r in rows if r[1] in wanted]
    if data.get("clusterId"):
        rows = [r for r in rows if r[0] == str(data["clusterId"])]
    keys = data.get("groupBy") or []
    names["department"] = dict(Department.objects.filter(pk__in={r[2] for r in rows}).values_list("pk", "name"))
    totals: dict[tuple, float] = defaultdict(float)
    for cluster, pool, department, amount in rows:
        by = {"cluster": cluster, "pool": pool, "department": department}
        totals[tuple(by[groups[k]] for k in keys)] += amount
    if not keys:
        totals.setdefault((), 0.0)
    values = []
    for group, total in sorted(totals.items(), key=lambda item: [str(v) for v in item[0]]):
        value = {"value": f"{total:g}"}
        if keys:
            value["groups"] = [{"key": key, "value": str(v), **_name(names, groups[key], v)}
                               for key, v in zip(keys, group, strict=True)]
        values.append(value)
    return Response({"type": telemetry, "timestamp": timezone.now().isoformat(), "values": values})


def _name(names: dict, field: str, value) -> dict:
    name = names.get(field, {}).get(value)
    return {"name": name} if name else {}


TELEMETRY = inline_serializer("OrgUnitTelemetry", {
    "type": serializers.CharField(), "timestamp": serializers.DateTimeField(),
    "values": serializers.ListField(child=serializers.DictField())})


def _parameters(groups: dict, pool_parameter: str) -> list:
    return [OpenApiParameter("telemetryType", OpenApiTypes.STR, required=True, enum=list(TYPES)),
            OpenApiParameter("clusterId", OpenApiTypes.UUID, required=False),
            OpenApiParameter("departmentId", OpenApiTypes.STR, required=False),
            OpenApiParameter(pool_parameter, OpenApiTypes.STR, required=False),
            OpenApiParameter("groupBy", OpenApiTypes.STR, required=False, explode=False, many=True,
                             enum=list(groups))]


class ProjectsTelemetryView(APIView):
    """Over the projects the caller sees."""

    @extend_schema(tags=["Projects"], operation_id="get_projects_telemetry",
                   parameters=_parameters(PROJECT_GROUPS, "nodepoolId"), responses={200: TELEMETRY})
    def get(self, request):
        def projects(data):
            visible = Project.objects.visible_to(request.user)
            if data.get("departmentId"):
                visible = visible.filter(department_id=data["departmentId"])
            return visible

        def quotas(data):
            return [(str(p.cluster_id), p.department_id, p.node_pool_resources or [], p.gpu_deserved)
                    for p in projects(data).only("cluster_id", "department_id", "node_pool_resources",
                                                 "gpu_deserved")]

        return _answer(request, groups=PROJECT_GROUPS, projects_of=projects, quota_units=quotas)


class DepartmentsTelemetryView(APIView):
    """Over the departments the caller sees: their own quotas, their projects' workloads."""

    @extend_schema(tags=["Departments"], operation_id="get_departments_telemetry",
                   parameters=_parameters(DEPARTMENT_GROUPS, "nodepoolName"), responses={200: TELEMETRY})
    def get(self, request):
        def departments(data):
            visible = Department.objects.visible_to(request.user).prefetch_related("projects")
            if data.get("departmentId"):
                visible = visible.filter(pk=data["departmentId"])
            return visible

        def projects(data):
            return Project.objects.filter(department__in=departments(data).values("pk"))

        def quotas(data):
            return [(department_cluster_id(d), d.pk, d.node_pool_resources or [], None) for d in departments(data)]

        return _answer(request, groups=DEPARTMENT_GROUPS, projects_of=projects, quota_units=quotas)

