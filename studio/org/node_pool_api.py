"""Run:ai's node pools (`GET /api/v1/node-pools[/{nodepoolId}]`, studio.clusters.api) answered with their
allocation: the organisation's numbers in the pool (studio.org.numbers), as every page shows them.

Neither of Run:ai's documents gives a node pool's Nodepool an allocation field (Run:ai answers it through the pool's
metrics); these are PaaS Studio's additions, named as Run:ai names the same numbers elsewhere:
`quotaStatus` (a QuotaStatus, as a project's status has it: GPUs, CPU millicores and memory MB allocated and
requested by the workloads placed in the pool), `totalResources.gpuQuota` (the GPUs its projects deserve there) and `gpus` (what the pool's nodes offer,
as the sync last counted them, and what of it is not allocated)."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from studio import api_schemas as schemas
from studio.clusters import api as cluster_api
from studio.clusters.models import NodePool
from studio.org.models import Project
from studio.org.numbers import ZERO, quota_numbers, quota_status


def pools_with_allocation(pools: list[NodePool]) -> list[dict]:
    """node_pool_data of each pool with its allocation: three queries, however many pools (their clusters'
    projects, the workloads' use grouped by pool, the clusters' pools)."""
    clusters = {p.cluster_id for p in pools}
    projects = list(Project.objects.filter(cluster_id__in=clusters).only(
        "id", "cluster_id", "department_id", "node_pool_resources", "gpu_deserved", "gpu_limit")) if pools else []
    found = quota_numbers(projects=projects, clusters=clusters)
    deserved: dict[tuple, object] = {}
    for project in projects:
        for name, numbers in found.project(project.pk).pools.items():
            key = (str(project.cluster_id), name)
            deserved[key] = deserved.get(key, ZERO) + (numbers.deserved or ZERO)
    out = []
    for pool in pools:
        numbers = found.pool(pool.cluster_id, pool.name)
        capacity = ((pool.cluster.gpu_capacity or {}).get("pools") or {}).get(pool.name) or {}
        total = capacity.get("total")
        out.append({
            **cluster_api.node_pool_data(pool),
            "quotaStatus": quota_status(numbers),
            "totalResources": {"gpuQuota": float(deserved.get((str(pool.cluster_id), pool.name), ZERO))},
            "gpus": {"total": total, "allocated": float(numbers.allocated), "requested": float(numbers.requested),
                     "free": None if total is None else max(0.0, total - float(numbers.allocated))},
        })
    return out


class NodePoolListView(cluster_api.NodePoolListView):
    @extend_schema(tags=["NodePools"], operation_id="get_nodepools", responses={200: schemas.NODE_POOLS})
    def get(self, request):
        return Response({"nodepools": pools_with_allocation(cluster_api.page_of(request, cluster_api.pools_asked(
            request)))})


class NodePoolDetailView(cluster_api.NodePoolDetailView):
    @extend_schema(tags=["NodePools"], operation_id="get_nodepool", responses={200: schemas.NODE_POOL})
    def get(self, request, nodepoolId: str):
        return Response(pools_with_allocation([self._pool(request, nodepoolId)])[0])
