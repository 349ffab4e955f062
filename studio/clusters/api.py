"""Run:ai's NodePools and Nodes tags, and the Clusters shapes its spec gives (DisplayedCluster).

Node pools: `GET/POST /api/v1/node-pools`, `GET/DELETE /api/v1/node-pools/{nodepoolId}`, `/count` (latest's
paths; deletes answer 204 as 2.18 does elsewhere). Nodes: `GET /api/v1/clusters/{clusterUuid}/nodes`, and latest's
`GET /api/v1/nodes` and `/nodes/count` over every cluster the caller sees, read live from the cluster (one LIST
each) and placed in pools by the pools' labels. Their allocation: studio.org.node_pool_api (node pools) and
workloads.telemetry.node_telemetry (nodes)."""

import uuid

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from studio import api_schemas as schemas
from studio import services
from studio.clusters import kube
from studio.clusters.models import Cluster, NodePool
from studio.errors import ServiceUnavailable
from studio.iam.models import AccessRule
from studio.iam.permissions import IsPlatformAdminOrReadOnly
from studio.ids import is_id, parse_id
from studio.listing import (
    DEFAULT_LIMIT,
    FILTER_PATTERN,
    MAX_LIMIT,
    MAX_OFFSET,
    int_query_param,
    split_list_param,
)
from studio.serializers import StrictSerializer, run_ai_time


def node_pool_data(pool: NodePool) -> dict:
    """Nodepool (latest)."""
    return {
        "id": str(pool.pk), "name": pool.name, "labelKey": pool.label_key, "labelValue": pool.label_value,
        "clusterId": str(pool.cluster_id), "clusterName": pool.cluster.name, "isDefault": pool.is_default,
        "tenantId": AccessRule.TENANT_ID, "phase": "Ready", "phaseMessage": "",
        "overProvisioningRatio": pool.over_provisioning_ratio,
        "gpuNetworkAccelerationDetection": pool.gpu_network_acceleration_detection,
        "placementStrategy": {"cpu": "spread", "gpu": "binpack"},
        "createdBy": pool.created_by, "createdAt": run_ai_time(pool.created_at),
        "updatedBy": pool.updated_by or pool.created_by, "updatedAt": run_ai_time(pool.updated_at),
    }


class NodePoolCreateSerializer(StrictSerializer):
    """NodepoolCreateFields. `overProvisioningRatio` and `gpuNetworkAccelerationDetection` (runapy sends both)
    are stored and answered: they tune Run:ai's own scheduler, which a PaaS Studio cluster does not run. The
    other scheduling knobs (placementStrategy, schedulingConfiguration, …) are not supported: a 400."""

    name = serializers.RegexField(r"^[a-z]([-a-z0-9]*[a-z0-9])?$", max_length=63)
    labelKey = serializers.CharField(max_length=253)
    labelValue = serializers.CharField(max_length=63)
    clusterId = serializers.PrimaryKeyRelatedField(queryset=Cluster.objects.all(),
                                                   error_messages={"does_not_exist": "No cluster {pk_value}."})
    overProvisioningRatio = serializers.IntegerField(min_value=1, max_value=5, required=False, allow_null=True)
    gpuNetworkAccelerationDetection = serializers.ChoiceField(choices=["Use", "DontUse", "Auto"], required=False,
                                                              allow_null=True)


class NodePoolUpdateSerializer(StrictSerializer):
    """NodepoolUpdateFields: the node label and Run:ai's stored settings (the portal's form edits the same). The
    default pool has no label; a name or cluster never changes (quotas name the pool)."""

    labelKey = serializers.CharField(max_length=253, min_length=1, required=False, allow_null=True)
    labelValue = serializers.CharField(max_length=63, min_length=1, required=False, allow_null=True)
    overProvisioningRatio = serializers.IntegerField(min_value=1, max_value=5, required=False, allow_null=True)
    gpuNetworkAccelerationDetection = serializers.ChoiceField(choices=["Use", "DontUse", "Auto"], required=False,
                                                              allow_null=True)

    FIELDS = {"labelKey": "label_key", "labelValue": "label_value", "overProvisioningRatio": "over_provisioning_ratio",
              "gpuNetworkAccelerationDetection": "gpu_network_acceleration_detection"}

    def to_internal_value(self, data):
        errors = {}
        try:
            values = super().to_internal_value(data)
        except serializers.ValidationError as exc:
            errors, values = dict(exc.detail), {}
        if self.context.get("whole"):  # PUT: the label is the pool's whole definition
            errors.update({k: ["This field is required."] for k in ("labelKey", "labelValue")
                           if not (data.get(k) if isinstance(data, dict) else None) and k not in errors})
        if errors:
            raise serializers.ValidationError(errors)
        return values

    def changes(self) -> dict:
        return {self.FIELDS[k]: v for k, v in self.validated_data.items() if v is not None}


def visible_pools(user):
    return NodePool.objects.visible_to(user).select_related("cluster")


def pools_asked(request):
    """The pools the caller sees, of `?clusterId=` when given (a UUID, or a 400 naming it)."""
    pools = visible_pools(request.user)
    cluster_id = request.query_params.get("clusterId")
    if cluster_id:
        try:
            uuid.UUID(cluster_id)
        except ValueError:
            raise serializers.ValidationError({"clusterId": [f"Must be a cluster's UUID, not {cluster_id!r}."]}) \
                from None
        pools = pools.filter(cluster_id=cluster_id)
    return pools


def page_of(request, queryset):
    offset = int_query_param(request, "offset", 0, 0, MAX_OFFSET)
    limit = int_query_param(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    return list(queryset[offset : offset + limit])


class NodePoolListView(APIView):
    permission_classes = [IsPlatformAdminOrReadOnly]

    @extend_schema(tags=["NodePools"], operation_id="get_nodepools", responses={200: schemas.NODE_POOLS})
    def get(self, request):
        return Response({"nodepools": [node_pool_data(p) for p in page_of(request, pools_asked(request))]})

    @extend_schema(tags=["NodePools"], operation_id="create_nodepool", request=NodePoolCreateSerializer,
                   responses={201: schemas.NODE_POOL})
    def post(self, request):
        serializer = NodePoolCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        pool = services.node_pool_create(
            actor=request.user, cluster=data["clusterId"], name=data["name"], label_key=data["labelKey"],
            label_value=data["labelValue"], over_provisioning_ratio=data.get("overProvisioningRatio") or 1,
            gpu_network_acceleration_detection=data.get("gpuNetworkAccelerationDetection") or "Auto")
        return Response(node_pool_data(pool), status=status.HTTP_201_CREATED)


class NodePoolCountView(APIView):
    @extend_schema(tags=["NodePools"], operation_id="count_nodepools", responses={200: schemas.COUNT})
    def get(self, request):
        return Response({"count": visible_pools(request.user).count()})


class NodePoolDetailView(APIView):
    permission_classes = [IsPlatformAdminOrReadOnly]

    def _pool(self, request, nodepoolId: str):
        return get_object_or_404(visible_pools(request.user), pk=parse_id(nodepoolId) if is_id(nodepoolId) else -1)

    @extend_schema(tags=["NodePools"], operation_id="get_nodepool", responses={200: schemas.NODE_POOL})
    def get(self, request, nodepoolId: str):
        return Response(node_pool_data(self._pool(request, nodepoolId)))

    def _update(self, request, nodepoolId: str, *, partial: bool):
        pool = self._pool(request, nodepoolId)
        serializer = NodePoolUpdateSerializer(data=request.data, context={"whole": not partial and not pool.is_default})
        serializer.is_valid(raise_exception=True)
        return Response(node_pool_data(services.node_pool_update(pool, actor=request.user, **serializer.changes())))

    @extend_schema(tags=["NodePools"], operation_id="update_nodepool", request=NodePoolUpdateSerializer,
                   responses={200: schemas.NODE_POOL})
    def put(self, request, nodepoolId: str):
        return self._update(request, nodepoolId, partial=False)

    @extend_schema(tags=["NodePools"], operation_id="patch_nodepool", request=NodePoolUpdateSerializer,
                   responses={200: schemas.NODE_POOL})
    def patch(self, request, nodepoolId: str):
        return self._update(request, nodepoolId, partial=True)

    @extend_schema(tags=["NodePools"], operation_id="delete_nodepool",
                   responses={204: OpenApiResponse(description="Deleted.")})
    def delete(self, request, nodepoolId: str):
        services.node_pool_delete(self._pool(request, nodepoolId), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


def node_data(node: dict, cluster: Cluster, pools: list[NodePool]) -> dict:
    """Node (NodeInfo + name + clusterUuid): its pool is the first non-default pool whose label it carries."""
    meta, node_status = node.get("metadata") or {}, node.get("status") or {}
    labels = meta.get("labels") or {}
    pool = next((p.name for p in pools if not p.is_default and labels.get(p.label_key) == p.label_value), "default")
    ready = next((c for c in node_status.get("conditions") or () if c.get("type") == "Ready"), {})
    gpus = int((node_status.get("allocatable") or {}).get("nvidia.com/gpu", 0) or 0)
    data = {
        "id": meta.get("uid") or meta.get("name"), "name": meta.get("name"), "clusterUuid": str(cluster.pk),
        "nodePool": pool, "status": "Ready" if ready.get("status") == "True" else "NotReady",
        "conditions": [{"type": c.get("type"), "status": c.get("status"), "reason": c.get("reason"),
                        "message": c.get("message")} for c in node_status.get("conditions") or ()],
        "taints": [{"key": t.get("key"), "value": t.get("value"), "effect": t.get("effect")}
                   for t in (node.get("spec") or {}).get("taints") or ()],
        "createdAt": meta.get("creationTimestamp"), "updatedAt": ready.get("lastHeartbeatTime") or meta.get(
            "creationTimestamp"),
    }
    if gpus:
        data["gpuInfo"] = {"gpuType": labels.get("nvidia.com/gpu.product", ""), "gpuCount": gpus}
    return data


class ClusterNodesView(APIView):
    @extend_schema(tags=["Nodes"], operation_id="get_nodes",
                   responses={200: schemas.NODES, 503: OpenApiResponse(description="The cluster did not answer.")})
    def get(self, request, clusterUuid: str):
        cluster = get_object_or_404(Cluster.objects.visible_to(request.user), pk=clusterUuid)
        pools = list(cluster.node_pools.all())
        try:
            nodes = kube.list_objects(kube.connect(cluster), "v1", "Node")
        except kube.ClusterError as exc:  # the cluster is down or refuses: say so, as a 503
            raise ServiceUnavailable(f"Cluster {cluster.name} did not answer the list of its nodes: {exc}") from exc
        wanted = request.query_params.get("nodeName")
        return Response({"nodes": [node_data(n, cluster, pools) for n in nodes
                                   if not wanted or n["metadata"]["name"] == wanted]})


# --- the tenant's nodes (latest: get_tenant_nodes, count_tenant_nodes) -----------------------------------------

NODE_FIELDS = {"name": lambda n: n["name"], "status": lambda n: n["status"], "nodePool": lambda n: n["nodePool"],
               "gpuType": lambda n: (n.get("gpuInfo") or {}).get("gpuType") or "",
               "nvLinkDomainUid": lambda n: n.get("nvLinkDomainUid") or "",
               "nvLinkCliqueId": lambda n: n.get("nvLinkCliqueId") or "", "clusterUuid": lambda n: n["clusterUuid"]}
_TEXT_TESTS = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<=": lambda a, b: a <= b,
               ">=": lambda a, b: a >= b, "=@": lambda a, b: b.lower() in a.lower(),
               "!@": lambda a, b: b.lower() not in a.lower(), "=^": lambda a, b: a.lower().startswith(b.lower()),
               "=$": lambda a, b: a.lower().endswith(b.lower())}


def visible_nodes(user, *, cluster_id=None) -> list[dict]:
    """Node answers of every cluster the user sees (one LIST each); a cluster that does not answer is a 503."""
    clusters = Cluster.objects.visible_to(user).prefetch_related("node_pools")
    if cluster_id:
        clusters = clusters.filter(pk=cluster_id)
    nodes = []
    for cluster in clusters:
        pools = list(cluster.node_pools.all())
        try:
            raw = kube.list_objects(kube.connect(cluster), "v1", "Node")
        except (kube.ClusterError, *kube.TRANSIENT_ERRORS) as exc:
            raise ServiceUnavailable(f"Cluster {cluster.name} did not answer the list of its nodes: {exc}") from exc
        nodes += [node_data(item, cluster, pools) for item in raw]
    return nodes


def filtered_nodes(nodes: list[dict], params) -> list[dict]:
    """Run:ai's NodesFilter (`filterBy`, explode false), `search` (name), `sortBy`/`sortOrder`; a bad one is a 400
    naming it."""
    errors = {}
    for expression in split_list_param(params.getlist("filterBy"), expressions=True):
        match = FILTER_PATTERN.match(expression)
        if not match or match["field"] not in NODE_FIELDS:
            errors.setdefault("filterBy", []).append(
                f"{expression!r}: filter by `field<op>value` over one of: {', '.join(NODE_FIELDS)}.")
            continue
        read, test, value = NODE_FIELDS[match["field"]], _TEXT_TESTS[match["op"]], match["value"]
        nodes = [n for n in nodes if test(str(read(n)), value)]
    sort_by = params.get("sortBy") or "name"
    if sort_by not in NODE_FIELDS:
        errors["sortBy"] = [f"{sort_by!r} is not one of: {', '.join(NODE_FIELDS)}."]
    order = params.get("sortOrder") or "asc"
    if order not in ("asc", "desc"):
        errors["sortOrder"] = [f"{order!r} is not asc or desc."]
    if errors:
        raise serializers.ValidationError(errors)
    if params.get("search"):
        nodes = [n for n in nodes if params["search"].lower() in n["name"].lower()]
    return sorted(nodes, key=lambda n: (str(NODE_FIELDS[sort_by](n)), n["name"]), reverse=order == "desc")


_NODE_PARAMETERS = [
    OpenApiParameter("filterBy", OpenApiTypes.STR, many=True, explode=False, required=False),
    OpenApiParameter("sortBy", OpenApiTypes.STR, enum=list(NODE_FIELDS), required=False),
    OpenApiParameter("sortOrder", OpenApiTypes.STR, enum=["asc", "desc"], required=False),
    OpenApiParameter("offset", OpenApiTypes.INT, required=False),
    OpenApiParameter("limit", OpenApiTypes.INT, required=False),
    OpenApiParameter("search", OpenApiTypes.STR, required=False),
]


class TenantNodesView(APIView):
    """Every node of the clusters the caller sees (a cluster is seen by its admins and by the members of its
    projects: Cluster.objects.visible_to), as Run:ai's Node; read live from each cluster."""

    @extend_schema(tags=["Nodes"], operation_id="get_tenant_nodes", parameters=_NODE_PARAMETERS,
                   responses={200: schemas.NODES, 503: OpenApiResponse(description="A cluster did not answer.")})
    def get(self, request):
        offset = int_query_param(request, "offset", 0, 0, MAX_OFFSET)
        limit = int_query_param(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
        nodes = filtered_nodes(visible_nodes(request.user), request.query_params)
        return Response({"nodes": nodes[offset: offset + limit]})


class TenantNodesCountView(APIView):
    @extend_schema(tags=["Nodes"], operation_id="count_tenant_nodes", parameters=_NODE_PARAMETERS[:1] + [
        _NODE_PARAMETERS[-1]], responses={200: schemas.COUNT})
    def get(self, request):
        return Response({"count": len(filtered_nodes(visible_nodes(request.user), request.query_params))})
