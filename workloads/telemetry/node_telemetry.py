"""Run:ai's `GET /api/v1/nodes/telemetry` (get_node_telemetry) and the node pool's metrics
(`GET /api/v1/clusters/{clusterUuid}/nodepools/{nodepoolName}/metrics`, get_nodepool_metrics), from the same
numbers as every page (issue 36).

Node telemetry is now, over the nodes of the clusters the caller sees (read live: workloads.telemetry.gpu_pool, as
the GPU overview reads them), summed and grouped by up to two of ClusterId, Nodepool, Node. Counts and GPUs come
from the nodes (allocatable `nvidia.com/gpu`, Ready); ALLOCATED_GPUS and FREE_GPUS from the organisation's numbers
where the answer is per pool or cluster (studio.org.numbers: the workloads placed in the pool) and from the pods on
each node where it is per node; CPU and memory allocated are the running pods' requests. The node's own use (USED_*)
and GPU memory are not read by PaaS Studio (metrics.k8s.io and DCGM give them per workload): no values.

A node pool's metrics: ALLOCATED_GPU (GPU_ALLOCATION) over time is the sum of the samples of the workloads placed
in the pool (as a project's metrics); the numbers not kept over time (TOTAL_GPU, GPU_QUOTA, UNALLOCATED_GPU,
WORKLOADS_COUNT) answer one point, now, when now lies in [start, end]; the others no values (207).
Both read a cluster the caller sees (Cluster.objects.visible_to: its admins and its projects' members), else 404."""

from collections import defaultdict
from decimal import Decimal

from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from studio.clusters.quantities import parse_quantity
from studio.errors import ServiceUnavailable
from studio.listing import CommaListField
from studio.models import Cluster, Project
from studio.org.numbers import ZERO, Numbers, quota_numbers
from workloads.metric_types import ALIASES
from workloads.models import Workload
from workloads.runai_fields import placed_pool_expression
from workloads.telemetry import gpu_pool
from workloads.telemetry.metrics import MeasurementsSerializer, MetricsQuerySerializer
from workloads.telemetry.org_metrics import org_unit_measurements

NODE_TYPES = ("READY_GPU_NODES", "READY_GPUS", "TOTAL_GPU_NODES", "TOTAL_GPUS", "IDLE_ALLOCATED_GPUS", "FREE_GPUS",
              "ALLOCATED_GPUS", "TOTAL_CPU_CORES", "USED_CPU_CORES", "ALLOCATED_CPU_CORES", "TOTAL_GPU_MEMORY_BYTES",
              "USED_GPU_MEMORY_BYTES", "TOTAL_CPU_MEMORY_BYTES", "USED_CPU_MEMORY_BYTES", "ALLOCATED_CPU_MEMORY_BYTES",
              "FULLY_FREE_GPU_NODES")
NO_SOURCE = frozenset({"USED_CPU_CORES", "TOTAL_GPU_MEMORY_BYTES", "USED_GPU_MEMORY_BYTES", "USED_CPU_MEMORY_BYTES"})
GROUPS = ("ClusterId", "Nodepool", "Node")
# latest's MetricsType (2.18's is a subset); GPU_ALLOCATION is ALLOCATED_GPU's other spelling (metric_types.ALIASES)
POOL_TYPES = ("TOTAL_GPU_NODES", "GPU_UTILIZATION", "GPU_UTILIZATION_DISTRIBUTION", "GPU_MEMORY_UTILIZATION",
              "CPU_UTILIZATION", "CPU_MEMORY_UTILIZATION", "TOTAL_GPU", "GPU_QUOTA", "GPU_ALLOCATION",
              "UNALLOCATED_GPU", "AVG_WORKLOAD_WAIT_TIME", "WORKLOADS_COUNT")
NOW_TYPES = frozenset({"TOTAL_GPU", "GPU_QUOTA", "UNALLOCATED_GPU", "WORKLOADS_COUNT"})


class NodeTelemetryQuery(serializers.Serializer):
    telemetryType = serializers.ChoiceField(choices=NODE_TYPES)
    clusterId = serializers.UUIDField(required=False)
    nodepoolName = serializers.CharField(required=False, max_length=63)
    groupBy = CommaListField(child=serializers.ChoiceField(choices=GROUPS), required=False, max_length=2)


def _amount(value) -> float:
    try:
        return float(parse_quantity(str(value))) if value not in (None, "") else 0.0
    except (ValueError, TypeError, ArithmeticError):
        return 0.0


def _node_value(kind: str, node) -> float:
    gpu_node = node.gpus > 0
    ready = node.status == "Ready"
    return {
        "READY_GPU_NODES": lambda: float(gpu_node and ready), "TOTAL_GPU_NODES": lambda: float(gpu_node),
        "READY_GPUS": lambda: float(node.gpus if ready else 0), "TOTAL_GPUS": lambda: float(node.gpus),
        "IDLE_ALLOCATED_GPUS": lambda: float(node.idle or 0), "FREE_GPUS": lambda: float(node.free),
        "ALLOCATED_GPUS": lambda: float(node.allocated),
        "FULLY_FREE_GPU_NODES": lambda: float(gpu_node and node.allocated == 0),
        "TOTAL_CPU_CORES": lambda: _amount(node.cpu), "ALLOCATED_CPU_CORES": lambda: node.cpu_allocated,
        "TOTAL_CPU_MEMORY_BYTES": lambda: _amount(node.memory),
        "ALLOCATED_CPU_MEMORY_BYTES": lambda: node.memory_allocated,
    }[kind]()


def node_telemetry(*, user, query: dict) -> dict:
    kind, keys = query["telemetryType"], list(dict.fromkeys(query.get("groupBy") or []))
    clusters = Cluster.objects.visible_to(user)
    if query.get("clusterId"):
        clusters = clusters.filter(pk=query["clusterId"])
    totals: dict[tuple, float] = defaultdict(float)
    names: dict[str, str] = {}
    for cluster in clusters:
        result = gpu_pool.cluster_pool(cluster, user=user)
        if result.broken:
            raise ServiceUnavailable(f"Cluster {cluster.name} did not answer: {result.problem}")
        names[str(cluster.pk)] = cluster.name
        pools = [p for p in result.pools if not query.get("nodepoolName") or p.name == query["nodepoolName"]]
        for pool in pools:
            per_pool = "Node" not in keys and kind in ("ALLOCATED_GPUS", "FREE_GPUS")
            if per_pool:  # the pool's number, as every page shows it
                value = float(pool.allocated) if kind == "ALLOCATED_GPUS" else float(pool.free)
                totals[tuple({"ClusterId": str(cluster.pk), "Nodepool": pool.name}[k] for k in keys)] += value
                continue
            for node in pool.nodes:
                group = {"ClusterId": str(cluster.pk), "Nodepool": pool.name, "Node": node.name}
                totals[tuple(group[k] for k in keys)] += 0.0 if kind in NO_SOURCE else _node_value(kind, node)
    if kind in NO_SOURCE:
        values = []
    else:
        if not keys:
            totals.setdefault((), 0.0)
        values = []
        for group, total in sorted(totals.items()):
            value = {"value": f"{total:g}"}
            if keys:
                value["groups"] = [{"key": key, "value": v, **({"name": names[v]} if key == "ClusterId" else {})}
                                   for key, v in zip(keys, group, strict=True)]
            values.append(value)
    return {"type": kind, "timestamp": timezone.now().isoformat(), "values": values}


TELEMETRY = inline_serializer("NodeTelemetry", {
    "type": serializers.CharField(), "timestamp": serializers.DateTimeField(),
    "values": serializers.ListField(child=serializers.DictField())})


class NodeTelemetryView(APIView):
    @extend_schema(tags=["Nodes"], operation_id="get_node_telemetry", parameters=[
        OpenApiParameter("telemetryType", OpenApiTypes.STR, required=True, enum=list(NODE_TYPES)),
        OpenApiParameter("clusterId", OpenApiTypes.UUID, required=False),
        OpenApiParameter("nodepoolName", OpenApiTypes.STR, required=False),
        OpenApiParameter("groupBy", OpenApiTypes.STR, required=False, explode=False, many=True, enum=list(GROUPS))],
        responses={200: TELEMETRY})
    def get(self, request):
        query = NodeTelemetryQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        return Response(node_telemetry(user=request.user, query=query.validated_data))


def _pool_now(cluster: Cluster, name: str) -> dict[str, float]:
    """The pool's numbers now: its GPUs and GPU nodes (as the sync last counted them), its projects' deserved
    GPUs there, what is not allocated, and its live workloads."""
    projects = list(Project.objects.filter(cluster=cluster).only(
        "id", "cluster_id", "department_id", "node_pool_resources", "gpu_deserved", "gpu_limit"))
    found = quota_numbers(projects=projects, clusters=[cluster.pk])
    deserved = sum(((found.project(p.pk).pools.get(name) or Numbers()).deserved or ZERO for p in projects), ZERO)
    capacity = ((cluster.gpu_capacity or {}).get("pools") or {}).get(name) or {}
    total = Decimal(capacity.get("total") or 0)
    workloads = (Workload.objects.live().filter(cluster=cluster).alias(pool=placed_pool_expression())
                 .filter(pool=name).exclude(actual_phase__in=Workload.FINISHED).count())
    return {"TOTAL_GPU": float(total), "GPU_QUOTA": float(deserved),
            "UNALLOCATED_GPU": float(max(ZERO, total - found.pool(cluster.pk, name).allocated)),
            "WORKLOADS_COUNT": float(workloads)}


class NodePoolMetricsView(APIView):
    @extend_schema(tags=["NodePools"], operation_id="get_nodepool_metrics", parameters=[
        OpenApiParameter("metricType", OpenApiTypes.STR, required=True, explode=False, many=True,
                         enum=[*POOL_TYPES, "ALLOCATED_GPU"]),
        OpenApiParameter("start", OpenApiTypes.DATETIME, required=True),
        OpenApiParameter("end", OpenApiTypes.DATETIME, required=True),
        OpenApiParameter("numberOfSamples", OpenApiTypes.INT, required=False)],
        responses={200: MeasurementsSerializer, 207: MeasurementsSerializer})
    def get(self, request, clusterUuid, nodepoolName: str):
        cluster = get_object_or_404(Cluster.objects.visible_to(request.user), pk=clusterUuid)
        get_object_or_404(cluster.node_pools.all(), name=nodepoolName)  # a pool it lacks: 404
        query = MetricsQuerySerializer(data=request.query_params, allowed_types=POOL_TYPES)
        query.is_valid(raise_exception=True)
        data = query.validated_data
        types = data["metricType"]
        history = [t for t in types if ALIASES.get(t, t) == "GPU_ALLOCATION"]
        measured = {}
        if history:
            found, _ = org_unit_measurements(("cluster_id", cluster.pk), Workload.objects.filter(cluster=cluster),
                                             types=history,
                                             start=data["start"], end=data["end"], samples=data["numberOfSamples"],
                                             nodepool=nodepoolName)
            measured = {m["type"]: m for m in found}
        now = timezone.now()
        current = _pool_now(cluster, nodepoolName) if NOW_TYPES & set(types) else {}
        body, partial = [], False
        for kind in types:
            if kind in measured:
                body.append(measured[kind])
            elif kind in NOW_TYPES:
                point = [{"value": f"{current[kind]:g}", "timestamp": now.isoformat()}] \
                    if data["start"] <= now <= data["end"] else []
                body.append({"type": kind, "labels": {}, "values": point})
            else:
                partial = True
                body.append({"type": kind, "labels": {}, "values": []})
        return Response({"measurements": body}, status=207 if partial else 200)
