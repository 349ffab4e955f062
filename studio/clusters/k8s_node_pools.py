"""Run:ai 2.18's node pools of one cluster (`/v1/k8s/clusters/{clusterId}/node-pools`, deprecated in latest for
`/api/v1/node-pools`): the same pools and the same services (studio.services.node_pool_create/update/delete),
answered in 2.18's shapes and codes.

GET answers a bare array of NodePool1 (the pools the caller sees: whoever sees the cluster); POST answers 201,
PUT and PUT …/labels 202, DELETE 202, none with a body, as both documents give them. Writes are platform admins'.
A deletion the pool's quotas refuse is a 400 naming them (2.18 documents no 409 for it). PaaS Studio places
pods as the cluster's scheduler does (CPU spread, GPU binpack): `placementStrategy` is taken only as that."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from studio import api_schemas as schemas
from studio import services
from studio.clusters.api import NodePoolUpdateSerializer
from studio.clusters.models import Cluster, NodePool
from studio.errors import Conflict
from studio.iam.permissions import IsPlatformAdminOrReadOnly
from studio.serializers import StrictSerializer, run_ai_time

APPLIED_STRATEGY = {"cpu": "spread", "gpu": "binpack"}


def node_pool_v1(pool: NodePool) -> dict:
    """NodePool1 (2.18)."""
    return {
        "id": pool.pk, "name": pool.name, "clusterId": str(pool.cluster_id), "labelKey": pool.label_key,
        "labelValue": pool.label_value, "overProvisioningRatio": pool.over_provisioning_ratio,
        "placementStrategy": APPLIED_STRATEGY, "isDefault": pool.is_default, "status": "Ready", "statusMessage": "",
        "createdBy": pool.created_by, "createdAt": run_ai_time(pool.created_at),
        "updatedBy": pool.updated_by or pool.created_by, "updatedAt": run_ai_time(pool.updated_at),
    }


ONLY_STRATEGY = "PaaS Studio places pods as the cluster's scheduler does: CPU spread, GPU binpack; no other strategy."


class PlacementStrategySerializer(StrictSerializer):
    cpu = serializers.ChoiceField(["spread"], required=False, error_messages={"invalid_choice": ONLY_STRATEGY})
    gpu = serializers.ChoiceField(["binpack"], required=False, error_messages={"invalid_choice": ONLY_STRATEGY})


class NodePoolV1CreateSerializer(StrictSerializer):
    """NodePoolCreateRequest; the label defaults to run.ai/node-pool=<name>, as the services' does."""

    name = serializers.RegexField(r"^[a-z]([-a-z0-9]*[a-z0-9])?$", max_length=63)
    labelKey = serializers.CharField(max_length=253, required=False)
    labelValue = serializers.CharField(max_length=63, required=False)
    overProvisioningRatio = serializers.IntegerField(min_value=1, max_value=5, required=False)
    placementStrategy = PlacementStrategySerializer(required=False)


class NodePoolV1UpdateSerializer(NodePoolUpdateSerializer):
    """UpdateNodePoolRequest: latest's update fields (a PUT: the label whole), and the applied placementStrategy."""

    placementStrategy = PlacementStrategySerializer(required=False)

    def changes(self) -> dict:
        return {self.FIELDS[k]: v for k, v in self.validated_data.items() if k in self.FIELDS and v is not None}


class NodePoolLabelsSerializer(StrictSerializer):
    """NodePoolLabelsRequest: the pool's node label, both halves."""

    labelKey = serializers.CharField(max_length=253)
    labelValue = serializers.CharField(max_length=63)


def _cluster(request, clusterId) -> Cluster:
    return get_object_or_404(Cluster.objects.visible_to(request.user), pk=clusterId)


class ClusterNodePoolsView(APIView):
    permission_classes = [IsPlatformAdminOrReadOnly]

    @extend_schema(tags=["NodePools"], operation_id="getNodePools", deprecated=True,
                   responses={200: schemas.NODE_POOLS_V1})
    def get(self, request, clusterId):
        pools = NodePool.objects.visible_to(request.user).filter(cluster=_cluster(request, clusterId))
        return Response([node_pool_v1(p) for p in pools])

    @extend_schema(tags=["NodePools"], operation_id="createNodePool", deprecated=True,
                   request=NodePoolV1CreateSerializer, responses={201: OpenApiResponse(description="Created")})
    def post(self, request, clusterId):
        cluster = _cluster(request, clusterId)
        serializer = NodePoolV1CreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        label = {"label_key": data["labelKey"]} if data.get("labelKey") else {}
        services.node_pool_create(actor=request.user, cluster=cluster, name=data["name"], **label,
                                  label_value=data.get("labelValue"),
                                  over_provisioning_ratio=data.get("overProvisioningRatio") or 1)
        return Response(status=status.HTTP_201_CREATED)


class _PoolView(APIView):
    permission_classes = [IsPlatformAdminOrReadOnly]

    def _pool(self, request, clusterId, id) -> NodePool:
        return get_object_or_404(NodePool.objects.visible_to(request.user), cluster_id=clusterId, pk=id)


class ClusterNodePoolView(_PoolView):
    @extend_schema(tags=["NodePools"], operation_id="updateNodePool", deprecated=True,
                   request=NodePoolV1UpdateSerializer,
                   responses={202: OpenApiResponse(description="Node Pool update accepted.")})
    def put(self, request, clusterId, id):
        pool = self._pool(request, clusterId, id)
        serializer = NodePoolV1UpdateSerializer(data=request.data, context={"whole": not pool.is_default})
        serializer.is_valid(raise_exception=True)
        services.node_pool_update(pool, actor=request.user, **serializer.changes())
        return Response(status=status.HTTP_202_ACCEPTED)

    @extend_schema(tags=["NodePools"], operation_id="deleteNodePool", deprecated=True,
                   responses={202: OpenApiResponse(description="Node Pool deletion accepted")})
    def delete(self, request, clusterId, id):
        pool = self._pool(request, clusterId, id)
        try:
            services.node_pool_delete(pool, actor=request.user)
        except Conflict as exc:  # its quotas hold it: 2.18's code for a refused deletion
            raise serializers.ValidationError({"id": [str(exc.detail)]}) from exc
        return Response(status=status.HTTP_202_ACCEPTED)


class ClusterNodePoolLabelsView(_PoolView):
    @extend_schema(tags=["NodePools"], operation_id="updateNodePoolLabels", deprecated=True,
                   request=NodePoolLabelsSerializer,
                   responses={202: OpenApiResponse(description="Node Pool update accepted.")})
    def put(self, request, clusterId, id):
        pool = self._pool(request, clusterId, id)
        serializer = NodePoolLabelsSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        services.node_pool_update(pool, actor=request.user, label_key=serializer.validated_data["labelKey"],
                                  label_value=serializer.validated_data["labelValue"])
        return Response(status=status.HTTP_202_ACCEPTED)
