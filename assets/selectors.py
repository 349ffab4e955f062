"""Reads of assets: the lists with Run:ai's filters, and each asset as Run:ai's documents answer it.

A list costs a fixed number of queries, whatever its length: the assets with their project (one query), and,
when asked for with `usageInfo=true`, every use of them (one more)."""

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Q
from rest_framework.fields import DateTimeField

from assets.models import Asset, AssetUse, Scope
from assets.secret_manifests import MATERIALISED, pull_secret_name
from assets.specs import CREDENTIAL_KINDS, public_spec
from studio.models import AccessRule, Cluster, Department, Project

_TIME = DateTimeField()
ENCRYPTION_KEY_ID = 1  # one Fernet key encrypts every credential (studio.crypto)
WORKLOAD_TYPES = {"Workspace": "workspace", "Training": "training", "Distributed": "distributed",
                  "Inference": "inference"}
# The key of each data source kind in the combined list's `spec` (Run:ai's DatasourceListResponseAssetSpec).
DATASOURCE_LIST_KEYS = {"pvc": "pvc", "nfs": "nfs", "s3": "s3", "git": "git", "hostPath": "hostPath",
                        "config-map": "config_map", "secret-volume": "secret"}


@dataclass
class ListQuery:
    """Run:ai's list parameters, parsed (assets/api.py turns a bad one into a 400 naming it)."""

    name: str | None = None
    scope: str | None = None
    project: Project | None = None
    department_id: int | None = None
    cluster_id: str | None = None
    asset_ids: list | None = None
    include_descendants: bool = False
    usage: bool = False
    supports: str | None = None  # a workload type the asset must support (isTraining, complyToWorkloadType…)
    framework: str | None = None
    unknown_unit: bool = False  # projectId names no project the caller sees: the list is empty


def asset_list(*, user, kinds, query: ListQuery) -> list[Asset]:
    if query.unknown_unit:
        return []
    rows = Asset.objects.visible_to(user).filter(kind__in=kinds).select_related("project")
    if query.name:
        rows = rows.filter(name=query.name)
    if query.asset_ids is not None:
        rows = rows.filter(pk__in=query.asset_ids)
    rows = rows.filter(_scope_filter(query))
    found = list(rows.order_by("name", "id"))
    if query.supports:
        found = [a for a in found if supports(a, query.supports, query.framework)]
    return found


def _scope_filter(query: ListQuery) -> Q:
    """Run:ai's meaning of scope, projectId, departmentId and clusterId: with `scope`, the assets of exactly that
    scope (and of that id); without it, what a project (department, cluster) may use: its own assets and those of
    the scopes above it; with includeDescendants, an id's own assets and those of the scopes below it."""
    unit = Q()
    if query.project is not None:
        p = query.project
        exact = Q(scope=Scope.PROJECT, project_id=p.pk)
        above = (Q(scope=Scope.TENANT) | Q(scope=Scope.CLUSTER, cluster_id=p.cluster_id)
                 | Q(scope=Scope.DEPARTMENT, department_id=p.department_id))
        unit = exact if query.scope == Scope.PROJECT or query.include_descendants else exact | above
    elif query.department_id is not None:
        exact = Q(scope=Scope.DEPARTMENT, department_id=query.department_id)
        if query.include_descendants:
            unit = Q(scope__in=(Scope.DEPARTMENT, Scope.PROJECT), department_id=query.department_id)
        elif query.scope == Scope.DEPARTMENT:
            unit = exact
        else:
            # its cluster: the department's own, or (a department created without one) its projects'
            projects = Project.objects.filter(department_id=query.department_id).values("cluster_id")
            own = Department.objects.filter(pk=query.department_id).values("cluster_id")
            unit = exact | Q(scope=Scope.TENANT) | Q(Q(cluster_id__in=projects) | Q(cluster_id__in=own),
                                                     scope=Scope.CLUSTER)
    elif query.cluster_id is not None:
        exact = Q(scope=Scope.CLUSTER, cluster_id=query.cluster_id)
        if query.include_descendants:  # a department without a cluster of its own is on its projects'
            departments = Project.objects.filter(cluster_id=query.cluster_id).values("department_id")
            unit = Q(cluster_id=query.cluster_id) | Q(scope=Scope.DEPARTMENT, department_id__in=departments)
        else:
            unit = exact if query.scope == Scope.CLUSTER else exact | Q(scope=Scope.TENANT)
    if query.scope and not query.include_descendants:
        unit &= Q(scope=query.scope)
    return unit


def supports(asset: Asset, workload_type: str, framework: str | None = None) -> bool:
    """Whether an asset serves a workload type: Run:ai's `workloadSupportedTypes` (unset: every type)."""
    types = asset.workload_supported_types or {}
    if types.get(workload_type) is False:
        return False
    if framework and workload_type == "distributed" and types.get("distFramework") not in (None, framework):
        return False
    return True


def uses_of(assets: list[Asset]) -> dict:
    """{asset id: [AssetUse]} in one query."""
    found = defaultdict(list)
    for use in AssetUse.objects.filter(asset__in=[a.pk for a in assets]).select_related("consumer_asset"):
        found[use.asset_id].append(use)
    return found


def used_by(uses: list[AssetUse]) -> dict:
    """Run:ai's AssetUsageInfo: workloads by kind, templates, and the assets (data sources) that use it."""
    answer = {"workspaces": [], "trainings": [], "distributed": [], "inferences": [], "templates": [],
              "assets": {"environments": [], "computes": [], "datasources": []}}
    plural = {"workspace": "workspaces", "training": "trainings", "distributed": "distributed",
              "inference": "inferences", "template": "templates"}
    for use in uses:
        if use.consumer == AssetUse.Consumer.ASSET:
            kind = use.consumer_asset.kind if use.consumer_asset_id else "pvc"
            answer["assets"]["datasources"].append({"id": use.consumer_id, "name": use.consumer_name, "kind": kind})
        else:
            answer[plural[use.consumer]].append({"id": use.consumer_id, "name": use.consumer_name})
    return answer


def meta(asset: Asset) -> dict:
    answer = {
        "id": str(asset.pk), "name": asset.name, "description": asset.description or None, "kind": asset.kind,
        "scope": asset.scope, "clusterId": str(asset.cluster_id) if asset.cluster_id else None,
        "departmentId": str(asset.department_id) if asset.department_id else None,
        "projectId": asset.project_id, "projectName": asset.project.name if asset.project_id else None,
        "tenantId": AccessRule.TENANT_ID, "autoDelete": asset.auto_delete, "private": asset.private,
        "createdBy": asset.created_by_name, "createdAt": _TIME.to_representation(asset.created_at),
        "updatedBy": asset.updated_by_name, "updatedAt": _TIME.to_representation(asset.updated_at),
        "updateCount": asset.update_count,
    }
    if asset.workload_supported_types:  # not nullable in Run:ai's schema: left out when unset
        answer["workloadSupportedTypes"] = asset.workload_supported_types
    return answer


def spec_of(asset: Asset) -> dict:
    spec = public_spec(asset.kind, asset.spec)
    if asset.kind in CREDENTIAL_KINDS:
        spec["keyId"] = ENCRYPTION_KEY_ID
    return spec


def asset_answer(asset: Asset, *, uses: list[AssetUse] | None = None, listed_in: str | None = None) -> dict:
    """One asset as Run:ai answers it; `listed_in` "datasource" or "credentials" wraps the spec under its kind's
    key, as the combined lists do; `uses`: answer `usedBy` (usageInfo=true)."""
    spec = spec_of(asset)
    if listed_in == "datasource":
        spec = {DATASOURCE_LIST_KEYS[asset.kind]: spec}
    elif listed_in == "credentials":
        spec = {asset.kind: spec}
    answer = {"meta": meta(asset), "spec": spec}
    if uses is not None:
        answer["usedBy"] = used_by(uses)
    return answer


def compliance(asset: Asset, project: Project | None, workload_type: str) -> dict:
    """Whether a workload of `workload_type` in `project` may use the asset: the asset must be of the project's
    scope or one above it, and support the type (Run:ai's ComplianceInfo; policies do not constrain assets yet)."""
    reasons = []
    if project is None or not _reaches_project(asset, project):
        reasons.append({"field": "meta.scope", "details": "The asset is not available to the project."})
    if not supports(asset, workload_type):
        reasons.append({"field": "meta.workloadSupportedTypes",
                        "details": f"The asset does not support {workload_type} workloads."})
    return {"imposed": False, "compliance": not reasons, "reason": reasons}


def _reaches_project(asset: Asset, project: Project) -> bool:
    return (asset.scope == Scope.TENANT or (asset.scope == Scope.CLUSTER and asset.cluster_id == project.cluster_id)
            or (asset.scope == Scope.DEPARTMENT and asset.department_id == project.department_id)
            or (asset.scope == Scope.PROJECT and asset.project_id == project.pk))


# --- credentials made into Kubernetes Secrets (assets/secrets_sync.py) -------------------------------------------

def _serves(asset: Asset, project: Project) -> bool:
    return _reaches_project(asset, project)


def clusters_served(asset: Asset) -> list[str]:
    """The ids of the clusters whose project namespaces hold the credential's Secret: every cluster for a tenant
    credential; its cluster's; a department's projects' clusters."""
    if asset.scope == Scope.TENANT:
        return [str(pk) for pk in Cluster.objects.values_list("pk", flat=True)]
    if asset.scope == Scope.DEPARTMENT:
        found = set(Project.objects.filter(department_id=asset.department_id).values_list("cluster_id", flat=True))
        found |= {asset.cluster_id} if asset.cluster_id else set()
        return sorted(str(pk) for pk in found if pk)
    return [str(asset.cluster_id)] if asset.cluster_id else []


def credentials_of_cluster(cluster_id) -> list[tuple[Asset, list[Project]]]:
    """Each credential and the projects of the cluster it serves (tenant: all; cluster: all; department: its
    projects; project: itself), in two queries."""
    projects = list(Project.objects.filter(cluster_id=cluster_id).order_by("pk"))
    assets = Asset.objects.filter(kind__in=MATERIALISED).filter(
        Q(scope=Scope.TENANT) | Q(scope=Scope.CLUSTER, cluster_id=cluster_id)
        | Q(scope=Scope.DEPARTMENT, department_id__in={p.department_id for p in projects})
        | Q(scope=Scope.PROJECT, project_id__in=[p.pk for p in projects])).order_by("created_at", "id")
    return [(asset, [p for p in projects if _serves(asset, p)]) for asset in assets]


def pull_secret_names(project: Project, *, user_id=None) -> list[str]:
    """The Secrets a workload of the project pulls its images with: every docker registry credential that serves
    the project (a private one only for its creator's workloads), oldest first."""
    rows = Asset.objects.filter(kind="dockerRegistry").filter(
        Q(scope=Scope.TENANT) | Q(scope=Scope.CLUSTER, cluster_id=project.cluster_id)
        | Q(scope=Scope.DEPARTMENT, department_id=project.department_id)
        | Q(scope=Scope.PROJECT, project_id=project.pk)).filter(
        Q(private=False) | Q(created_by_id=user_id)).order_by("created_at", "id")
    return [pull_secret_name(asset_id=a.pk, spec=a.spec) for a in rows]
