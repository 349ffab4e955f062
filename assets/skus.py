"""What the catalog shows of the assets beside the service profiles: compute resources as SKUs (Rafay's compute
profiles) with their GPU, CPU and memory, and Run:ai's templates of assets, among those a project may use (its own,
its department's, its cluster's and the tenant's)."""

import uuid

from django.db.models import prefetch_related_objects

from assets.models import Asset, Kind
from assets.selectors import ListQuery, asset_list
from assets.tables import scope_text
from assets.template_selectors import reaches_project, templates_visible


def _gpu(spec: dict) -> str:
    devices, kind = spec.get("gpuDevicesRequest"), spec.get("gpuRequestType")
    if kind == "portion":
        return f"{devices or 1} × {spec.get('gpuPortionRequest'):g} GPU"
    if kind == "memory":
        return f"{devices or 1} × {spec.get('gpuMemoryRequest')} of a GPU"
    if kind == "migProfile":
        return f"{devices or 1} × MIG {spec.get('migProfile')}"
    return f"{devices} GPU" if devices else "No GPU"


def compute_skus(*, user, project) -> list[dict]:
    """One entry per compute resource the project may use: id, name, description, scope, gpu, cpu, memory."""
    if project is None:
        return []
    rows = asset_list(user=user, kinds=(Kind.COMPUTE,), query=ListQuery(project=project))
    prefetch_related_objects(rows, "department", "cluster")  # each names its scope: two queries in all
    skus = []
    for asset in rows:
        spec = asset.spec or {}
        cpu = spec.get("cpuCoreRequest", spec.get("cpuCoreLimit"))
        skus.append({"id": str(asset.pk), "name": asset.name, "description": asset.description,
                     "scope": scope_text(asset), "gpu": _gpu(spec),
                     "cpu": f"{cpu:g} CPU" if cpu is not None else "",
                     "memory": spec.get("cpuMemoryRequest") or spec.get("cpuMemoryLimit") or ""})
    return skus


def catalog_templates(*, user, project) -> list[dict]:
    """The templates of assets a project may launch from (those with an environment: the New workload page fills
    its choices from them): id, name, description, scope, workload type, and what it is made of."""
    if project is None:
        return []
    rows = [t for t in templates_visible(user).select_related("department", "cluster")
            if reaches_project(t, project) and ((t.spec or {}).get("assets") or {}).get("environment")]
    names = dict(Asset.objects.filter(pk__in=[t.spec["assets"]["environment"] for t in rows]).values_list("pk", "name"))
    return [{"id": str(t.pk), "name": t.name, "description": t.description, "scope": scope_text(t),
             "kind": (t.spec or {}).get("workloadType") or "",
             "environment": names.get(_uuid(t.spec["assets"]["environment"]), "")} for t in rows]


def _uuid(value) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None
