"""The GPU pool pages: every cluster the user sees at a glance, one node pool, one node (workloads.telemetry.gpu_pool);
the quota pages: a department roll-up and a project's per-pool quota and use (workloads.telemetry.quota_use)."""

from django.contrib.auth.decorators import login_required
from django.http import Http404, JsonResponse
from django.shortcuts import get_object_or_404, render
from rest_framework.exceptions import ValidationError

from studio.audit_words import history_of
from studio.models import Cluster, Project
from workloads.pool_tables import NodeTable, PoolTable, QueueTable
from workloads.telemetry import gpu_pool, quota_use


@login_required
def gpu_overview(request):
    clusters = gpu_pool.overview(user=request.user)
    for result in clusters:  # each cluster's pools and nodes as tables (sorted alike by ?sortBy=)
        result.pool_table = PoolTable(request, result.pools, cluster=result.cluster).context()
        result.node_table = NodeTable(request, result.nodes, cluster=result.cluster).context()
        result.queue_table = QueueTable(request, result.queue, cluster=result.cluster).context()
    return render(request, "workloads/gpu_overview.html", {"clusters": clusters})


def _export(table):
    try:
        return table.export()
    except ValidationError as exc:
        return JsonResponse(exc.detail, status=400)


@login_required
def gpu_nodes_export(request, cluster_id):
    """The cluster's nodes (or one pool's: ?pool=) as CSV, for whoever sees the cluster."""
    result = _cluster(request, cluster_id)
    pool = request.GET.get("pool", "")
    nodes = [n for n in result.nodes if not pool or n.pool == pool]
    return _export(NodeTable(request, nodes, cluster=result.cluster, pool=pool))


@login_required
def gpu_queue_export(request, cluster_id):
    """The cluster's waiting queue (what the user may see of it) as CSV, in its order."""
    result = _cluster(request, cluster_id)
    return _export(QueueTable(request, result.queue, cluster=result.cluster))


@login_required
def gpu_pools_export(request, cluster_id):
    result = _cluster(request, cluster_id)
    return _export(PoolTable(request, result.pools, cluster=result.cluster))


def _cluster(request, cluster_id):
    cluster = get_object_or_404(Cluster.objects.visible_to(request.user), pk=cluster_id)
    return gpu_pool.cluster_pool(cluster, user=request.user)


@login_required
def gpu_node_pool(request, cluster_id, name):
    result = _cluster(request, cluster_id)
    pool = next((p for p in result.pools if p.name == name), None)
    if pool is None and not result.broken:
        raise Http404
    queue = [w for w in result.queue if w.pool == name]
    node_table = NodeTable(request, pool.nodes, cluster=result.cluster, pool=name).context() if pool else None
    return render(request, "workloads/gpu_pool.html", {
        "result": result, "pool": pool, "name": name, "queue": queue, "node_table": node_table,
        "queue_table": QueueTable(request, queue, cluster=result.cluster).context()})


@login_required
def gpu_node(request, cluster_id, name):
    result = _cluster(request, cluster_id)
    node = next((n for n in result.nodes if n.name == name), None)
    if node is None and not result.broken:
        raise Http404
    return render(request, "workloads/gpu_node.html", {"result": result, "node": node, "name": name})


@login_required
def quota_overview(request):
    """Quota and use of every department and project the user sees (the department roll-up)."""
    return render(request, "workloads/quota_overview.html", {"departments": quota_use.department_uses(user=request.user)})


@login_required
def project_quota(request, project_id):
    project = get_object_or_404(Project.objects.visible_to(request.user).select_related("department", "cluster"),
                                pk=project_id)
    return render(request, "workloads/project_quota.html", {"project": project, "pools": quota_use.project_use(project),
                                                            "history": history_of(project)})
