"""Run:ai's (latest) `GET /api/v1/org-unit/projects/{projectId}/metrics` and `…/departments/{departmentId}/metrics`.

A project's (a department's) allocation over time is the sum, per collection round, of its workloads' samples
(workloads.cluster.collect writes one row per workload and type each round, all stamped with the round's time), deleted
workloads included for the time they ran: GPU_ALLOCATION from GPU_ALLOCATION, CPU_ALLOCATION_MILLICORES from
CPU_REQUEST_CORES, CPU_MEMORY_ALLOCATION_MB from CPU_MEMORY_REQUEST_BYTES, of the running pods. Rounds in which
none of its workloads ran hold no point. Quotas are not kept over time and GPU memory utilisation needs the GPUs'
memory size: those types answer no values and the answer is a 207, as a workload's types without a source are.

A range longer than a day, or one that starts before the samples kept (METRICS_RETENTION_DAYS), is answered from
the usage history instead (workloads.telemetry.org_history): a point per hour, or per day before the hourly
window, so that a 30-day range reads rows per hour and not per workload and round."""

from datetime import timedelta

from django.conf import settings
from django.db.models import Sum
from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from studio.models import Department, Project
from workloads.metric_types import ALIASES
from workloads.models import MetricSample, Workload
from workloads.runai_fields import placed_pool_expression
from workloads.telemetry.metrics import MeasurementsSerializer, MetricsQuerySerializer, reduce_samples
from workloads.telemetry.org_history import org_history

ORG_UNIT_TYPES = ("GPU_QUOTA", "CPU_QUOTA_MILLICORES", "CPU_MEMORY_QUOTA_MB", "GPU_ALLOCATION",
                  "CPU_ALLOCATION_MILLICORES", "CPU_MEMORY_ALLOCATION_MB", "GPU_MEMORY_UTILIZATION")
# Run:ai's type → (the workload sample type summed, the factor to Run:ai's unit)
FROM_SAMPLES = {"GPU_ALLOCATION": ("GPU_ALLOCATION", 1.0), "CPU_ALLOCATION_MILLICORES": ("CPU_REQUEST_CORES", 1000.0),
                "CPU_MEMORY_ALLOCATION_MB": ("CPU_MEMORY_REQUEST_BYTES", 1e-6)}

PARAMETERS = [
    OpenApiParameter("metricType", OpenApiTypes.STR, required=True, explode=False, many=True,
                     enum=list(ORG_UNIT_TYPES)),
    OpenApiParameter("start", OpenApiTypes.DATETIME, required=True),
    OpenApiParameter("end", OpenApiTypes.DATETIME, required=True),
    OpenApiParameter("numberOfSamples", OpenApiTypes.INT, required=False),
    OpenApiParameter("nodepoolName", OpenApiTypes.STR, required=False,
                     description="Only the workloads placed in this node pool (where their pods run)."),
]


HISTORY_FROM = timedelta(days=1)  # ranges longer than this read the usage history


def _from_history(start, end) -> bool:
    kept_from = timezone.now() - timedelta(days=settings.METRICS_RETENTION_DAYS)
    return org_history() is not None and (end - start > HISTORY_FROM or start < kept_from)


def _sample_points(workloads, wanted, start, end, nodepool) -> dict[str, list]:
    if nodepool:
        workloads = workloads.alias(pool=placed_pool_expression()).filter(pool=nodepool)
    rows = (MetricSample.objects.filter(workload__in=workloads.values("pk"), pod_name="", type__in=wanted,
                                        timestamp__gte=start, timestamp__lte=end)
            .values("type", "timestamp").annotate(total=Sum("value")).order_by("timestamp")) if wanted else []
    points: dict[str, list] = {}
    for row in rows:
        points.setdefault(row["type"], []).append((row["timestamp"], row["total"]))
    return points


def org_unit_measurements(unit: tuple[str, object], workloads, *, types, start, end, samples,
                          nodepool=None) -> tuple[list[dict], bool]:
    """({"type", "labels", "values"} per type, partial) for the unit (("project_id" | "department_id" | "cluster_id", id)):
    over the samples of `workloads`, or the usage history for long ranges; one query."""
    wanted = {FROM_SAMPLES[ALIASES.get(t, t)][0] for t in types if ALIASES.get(t, t) in FROM_SAMPLES}
    if wanted and _from_history(start, end):
        points = org_history()(unit[0], unit[1], start, end, wanted, nodepool)
    else:
        points = _sample_points(workloads, wanted, start, end, nodepool)
    out, partial = [], False
    for requested in types:  # answered in the caller's spelling (ALLOCATED_GPU or GPU_ALLOCATION)
        if ALIASES.get(requested, requested) not in FROM_SAMPLES:
            partial = True  # no source: quotas are not kept over time, GPU memory size is not known
            out.append({"type": requested, "labels": {}, "values": []})
            continue
        source, factor = FROM_SAMPLES[ALIASES.get(requested, requested)]
        scaled = [(t, v * factor) for t, v in points.get(source, [])]
        out.append({"type": requested, "labels": {}, "values": reduce_samples(scaled, start, end, samples)})
    return out, partial


def _answer(request, unit, workloads):
    query = MetricsQuerySerializer(data=request.query_params, allowed_types=ORG_UNIT_TYPES)
    query.is_valid(raise_exception=True)
    data = query.validated_data
    body, partial = org_unit_measurements(unit, workloads, types=data["metricType"], start=data["start"],
                                          end=data["end"], samples=data["numberOfSamples"],
                                          nodepool=request.query_params.get("nodepoolName") or None)
    return Response({"measurements": body}, status=207 if partial else 200)


class ProjectMetricsView(APIView):
    """Read by whoever sees the project (a 404 for others)."""

    @extend_schema(tags=["Projects"], operation_id="get_project_metrics", parameters=PARAMETERS,
                   responses={200: MeasurementsSerializer, 207: MeasurementsSerializer})
    def get(self, request, projectId: int):
        project = get_object_or_404(Project.objects.visible_to(request.user), pk=projectId)
        return _answer(request, ("project_id", project.pk), Workload.objects.filter(project=project))


class DepartmentMetricsView(APIView):
    @extend_schema(tags=["Departments"], operation_id="get_department_metrics", parameters=PARAMETERS,
                   responses={200: MeasurementsSerializer, 207: MeasurementsSerializer})
    def get(self, request, departmentId: int):
        department = get_object_or_404(Department.objects.visible_to(request.user), pk=departmentId)
        return _answer(request, ("department_id", department.pk), Workload.objects.filter(department=department))
