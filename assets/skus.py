"""Compute resources as the catalog shows them to end users: SKUs (Rafay's compute profiles) with their GPU,
CPU and memory, among those a project may use (its own, its department's, its cluster's and the tenant's)."""

from django.db.models import prefetch_related_objects

from assets.models import Kind
from assets.selectors import ListQuery, asset_list
from assets.tables import scope_text


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
