"""The asset pages' lists as the table component (studio.tables): one table per family (environments, compute
resources, data sources, credentials), with each asset's scope and what uses it; natural sort of names, the column
chooser, CSV export of the filtered list, and bulk delete through assets.services (each refusal named)."""

from django.template.loader import get_template
from django.urls import reverse
from django.utils.html import format_html

from assets import access
from assets.forms import KIND_LABELS
from assets.models import Asset, Scope
from studio.listing import StudioFilterSet
from studio.tables import BulkAction, Column, Table


class AssetFilterSet(StudioFilterSet):
    class Meta:
        model = Asset
        fields = []
        api_fields = {"name": "name", "kind": "kind", "scope": "scope", "projectName": "project__name",
                      "departmentName": "department__name", "clusterName": "cluster__name",
                      "createdBy": "created_by_name", "updatedAt": "updated_at", "private": "private"}
        search_fields = ["name", "description", "project__name", "department__name", "cluster__name"]
        default_sort = ["name", "id"]


def scope_text(asset: Asset) -> str:
    """"Project alpha", "Department research", "Cluster main", "Tenant"; ", private" for a private one."""
    row = {Scope.PROJECT: asset.project, Scope.DEPARTMENT: asset.department, Scope.CLUSTER: asset.cluster}.get(
        asset.scope)
    text = f"{asset.get_scope_display().capitalize()} {row.name}" if row is not None else "Tenant"
    return f"{text}, private" if asset.private else text


def usage_text(asset: Asset) -> str:
    uses = list(asset.uses.all())
    return ", ".join(f"{use.consumer} {use.consumer_name}" for use in uses)


def summary_text(asset: Asset) -> str:
    """The spec's few telling fields, for the list: an image, GPUs and CPU, a path, a URL."""
    spec = asset.spec or {}
    if asset.kind == "environment":
        return spec.get("image", "")
    if asset.kind == "compute":
        return sku_text(spec)
    parts = [spec.get(k) for k in ("server", "bucket", "repository", "configMap", "url", "path", "mountPath",
                                   "claimName", "existingSecretName", "user") if spec.get(k)]
    return " · ".join(str(p) for p in parts[:3])


def sku_text(spec: dict) -> str:
    """GPU, CPU and memory of a compute spec, as a catalog SKU reads: "1 × 0.5 GPU · 2 CPU · 4Gi"."""
    parts = []
    devices, kind = spec.get("gpuDevicesRequest"), spec.get("gpuRequestType")
    if kind == "portion":
        parts.append(f"{devices or 1} × {spec.get('gpuPortionRequest')} GPU")
    elif kind == "memory":
        parts.append(f"{devices or 1} × {spec.get('gpuMemoryRequest')} GPU memory")
    elif kind == "migProfile":
        parts.append(f"{devices or 1} × MIG {spec.get('migProfile')}")
    elif devices:
        parts.append(f"{devices} GPU")
    else:
        parts.append("No GPU")
    if spec.get("cpuCoreRequest") is not None:
        parts.append(f"{spec['cpuCoreRequest']:g} CPU")
    if spec.get("cpuMemoryRequest"):
        parts.append(spec["cpuMemoryRequest"])
    return " · ".join(parts)


class AssetTable(Table):
    noun_one = "asset"
    filterset_class = AssetFilterSet
    bulk_actions = (BulkAction("delete", "Delete", "trash", danger=True),)
    empty_template = "assets/_empty.html"

    def __init__(self, request, queryset, *, family: str, label: str, many_kinds: bool):
        self.name = f"assets-{family}"
        self.noun = label.lower()
        self.family = family
        self.many_kinds = many_kinds
        super().__init__(request, queryset)

    @property
    def columns(self):
        return (
            Column("name", "Name", lambda a: a.name, sort="name", natural=True,
                   html=lambda a: self._render("assets/_name_cell.html", a)),
            Column("kind", "Kind", lambda a: KIND_LABELS[a.kind], sort="kind", default=self.many_kinds),
            Column("scope", "Scope", scope_text, sort="scope",
                   html=lambda a: format_html('<span class="badge bg-purple-lt">{}</span>', scope_text(a))),
            Column("summary", "Details", summary_text),
            Column("usage", "Used by", usage_text, html=lambda a: self._render("assets/_usage_cell.html", a)),
            Column("description", "Description", lambda a: a.description, default=False),
            Column("createdBy", "Created by", lambda a: a.created_by_name, sort="createdBy", default=False),
            Column("updated", "Updated", lambda a: a.updated_at.strftime("%Y-%m-%d %H:%M"), sort="updatedAt",
                   default=False),
            Column("actions", "Actions", lambda a: "", export=False,
                   html=lambda a: self._render("assets/_actions_cell.html", a)),
        )

    def _render(self, template: str, row) -> str:
        return get_template(template).render({"a": row, "family": self.family,
                                              "manages": access.manages(self.request.user, row)},
                                             request=self.request)

    def page(self):
        rows, page = super().page()
        self.page_rows = rows
        return rows, page

    def totals(self, qs) -> dict:
        return {"usage": f"{qs.filter(uses__isnull=False).distinct().count()} in use"}

    def row_label(self, row) -> str:
        return row.name

    @property
    def bulk_url(self) -> str:
        return reverse("asset-bulk", args=[self.family])

    @property
    def export_url(self) -> str:
        return reverse("asset-export", args=[self.family])
