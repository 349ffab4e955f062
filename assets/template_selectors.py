"""Reads of templates of assets (assets/templates.py writes them): the templates a user sees, the assets they
name, the spec a workload gets from one (`template_fill`), and whether an asset serves a scope."""

from dataclasses import dataclass, field

from rest_framework.exceptions import ValidationError

from assets import composition
from assets.models import Asset, Kind, Scope
from assets.secret_manifests import pull_secret_name
from assets.specs import CREDENTIAL_KINDS
from studio.ids import is_uuid
from studio.models import AccessRule, Project

TEMPLATE = Kind.WORKLOAD_TEMPLATE


def reaches(other: Asset, asset: Asset) -> bool:
    """Whether `other` (an asset) serves what lives in `asset`'s scope: its scope or one above it."""
    if other.scope == Scope.TENANT:
        return True
    if other.scope == Scope.CLUSTER:
        return asset.scope != Scope.TENANT and asset.cluster_id == other.cluster_id
    if other.scope == Scope.DEPARTMENT:
        return asset.scope in (Scope.DEPARTMENT, Scope.PROJECT) and asset.department_id == other.department_id
    return asset.scope == Scope.PROJECT and asset.project_id == other.project_id


def reaches_project(asset: Asset, project: Project) -> bool:
    return reaches(asset, Asset(scope=Scope.PROJECT, project_id=project.pk, department_id=project.department_id,
                                 cluster_id=project.cluster_id))


# -- templates -------------------------------------------------------------------------------------------------------

def templates_visible(user, *, workload_type: str | None = None):
    rows = Asset.objects.visible_to(user).filter(kind=TEMPLATE).select_related("project")
    if workload_type:
        rows = rows.filter(spec__workloadType=workload_type)
    return rows.order_by("name", "id")


def template_visible(user, template_id, *, workload_type: str | None = None) -> Asset | None:
    if not is_uuid(template_id):
        return None
    rows = templates_visible(user, workload_type=workload_type)
    return rows.filter(pk=template_id).first()


def referenced_assets(templates: list[Asset]) -> dict[str, Asset]:
    """{id: Asset} of every asset the templates name, and the credentials their data sources read: two queries."""
    ids = set()
    for template in templates:
        ids |= set(_ids_of(template.spec.get("assets")))
    found = {str(a.pk): a for a in Asset.objects.filter(pk__in=ids)}
    credentials = {str(v) for a in found.values() for k, v in a.spec.items()
                   if k in ("accessKeyAssetId", "passwordAssetId", "credentialId", "credentialAssetId") and v}
    credentials |= {str((v.get("credential") or {}).get("assetId")) for a in found.values()
                    for v in a.spec.get("environmentVariables") or () if v.get("credential")}
    if credentials:
        found.update({str(a.pk): a for a in Asset.objects.filter(pk__in=credentials, kind__in=CREDENTIAL_KINDS)})
    return found


def _ids_of(ids: dict | None) -> list[str]:
    if not ids:
        return []
    return [str(i) for i in (ids.get("environment"), ids.get("compute")) if i] + [
        str(s["id"]) for s in ids.get("datasources") or () if s.get("id")]


@dataclass
class Composed:
    spec: dict
    issue: str | None = None
    used: list[str] = field(default_factory=list)


def composed(template: Asset, kind: str, found: dict[str, Asset]) -> Composed:
    """The spec a workload of `kind` gets from the template, before its request's own fields."""
    ids = template.spec.get("assets") or {}
    secret_names = {k: pull_secret_name(asset_id=a.pk, spec=a.spec or {}) for k, a in found.items()
                    if a.kind in CREDENTIAL_KINDS}  # the Secret it names, else the one the credentials' sync makes
    layers, used = [], []
    try:
        environment = found.get(str(ids.get("environment")))
        if environment is not None:
            layers.append(composition.environment_part(environment.spec, kind, secret_names=secret_names,
                                                       name=environment.name))
            used.append(str(environment.pk))
        compute = found.get(str(ids.get("compute")))
        if compute is not None:
            layers.append(composition.compute_part(compute.spec))
            used.append(str(compute.pk))
        parts = []
        for source in ids.get("datasources") or ():
            asset = found.get(str(source.get("id")))
            if asset is not None:
                parts.append(composition.datasource_part(asset.kind, asset.spec, name=asset.name,
                                                         overrides=source.get("overrides"),
                                                         secret_names=secret_names))
                used.append(str(asset.pk))
        layers.append(composition.storage_part(parts))
    except composition.CompositionError as exc:
        return Composed(spec={}, issue=str(exc), used=used)
    layers.append(composition.specific_part(template.spec.get("specificEnv"), kind))
    layers.append(template.spec.get("spec") or {})
    spec = composition.compose(layers)
    return Composed(spec=spec, issue=None if spec.get("image") else "The template gives no image.", used=used)


@dataclass
class Filled:
    template: Asset
    spec: dict
    asset_ids: dict
    used: list[str]


def template_fill(*, user, template_id, project_id, kind: str) -> Filled:
    """What a workload of `kind` in project `project_id` gets from template `template_id`: a 400 naming
    templateId when the caller sees no such template, when it is of another workload type, or when it is not of
    the project's scope or one above it."""
    template = template_visible(user, template_id)
    if template is None:
        raise ValidationError({"templateId": [f"No such template: {template_id}."]})
    typed = template.spec.get("workloadType")
    if typed and typed != kind:
        raise ValidationError({"templateId": [f"Template {template.name} is a {typed} template; it cannot make a "
                                              f"{kind}."]})
    project = Project.objects.visible_to(user).filter(pk=project_id).first() if str(project_id).isdigit() else None
    if project is not None and not reaches_project(template, project):
        raise ValidationError({"templateId": [f"Template {template.name} is not available to project "
                                              f"{project.name}."]})
    found = referenced_assets([template])
    made = composed(template, kind, found)
    if made.issue and made.issue != "The template gives no image.":
        raise ValidationError({"templateId": [made.issue]})
    ids = template.spec.get("assets") or {}
    asset_ids = {"templateId": str(template.pk), "environment": ids.get("environment"),
                 "compute": ids.get("compute"), "datasources": [s.get("id") for s in ids.get("datasources") or ()]}
    return Filled(template=template, spec=made.spec, asset_ids=asset_ids, used=made.used)


def scope_id(asset: Asset) -> str:
    return str({Scope.TENANT: AccessRule.TENANT_ID, Scope.CLUSTER: asset.cluster_id,
                Scope.DEPARTMENT: asset.department_id, Scope.PROJECT: asset.project_id}[asset.scope])


def name_taken(*, user, name: str, scope: str, scope_ident: str | None) -> bool:
    """Whether a template of that name exists in that scope (latest's name-availability)."""
    rows = Asset.objects.filter(kind=TEMPLATE, name=name, scope=scope, private=False)
    if scope == Scope.PROJECT:
        rows = rows.filter(project_id=scope_ident if str(scope_ident).isdigit() else None)
    elif scope == Scope.DEPARTMENT:
        rows = rows.filter(department_id=scope_ident if str(scope_ident).isdigit() else None)
    elif scope == Scope.CLUSTER:
        rows = rows.filter(cluster_id=scope_ident if is_uuid(scope_ident) else None)
    return rows.exists()
