"""Writes of assets: create, update, delete, and the uses that later work records (a workload or a template made
from assets). Every bad input is a 400 naming each problem at once; a role that may not manage the scope a 403;
a taken name, or a delete of an asset in use, a 409 naming why. Secrets are kept encrypted (`Asset.secret`) and
never written to the audit trail (studio.audit masks the field) nor logged."""

import json

from django.db import IntegrityError, transaction
from rest_framework.exceptions import PermissionDenied, ValidationError

from assets import access
from assets.models import Asset, AssetUse, Kind, Scope
from assets.secret_manifests import MATERIALISED
from assets.selectors import clusters_served, spec_of
from assets.specs import REFERENCES, public_spec, secret_part, spec_problems, updatable
from studio.audit import audit_record, snapshot
from studio.errors import Conflict
from studio.ids import is_uuid, parse_id
from studio.models import AuditEvent, Cluster, Department, Project
from studio.names import NAME_PATTERN, NAME_RULE
from studio.queue import enqueue_on_commit

CREATE_META = {"name", "description", "scope", "clusterId", "departmentId", "projectId", "autoDelete",
               "workloadSupportedTypes", "private"}
READ_ONLY_META = {"id", "kind", "tenantId", "createdBy", "createdAt", "updatedBy", "updatedAt", "deletedAt",
                  "deletedBy", "projectName", "updateCount"}
SUPPORTED_TYPES = {"inference", "workspace", "training", "distributed", "distFramework"}
FRAMEWORKS = ("MPI", "PyTorch", "TF", "XGBoost")


def _raise(problems: list[tuple[str, str]]) -> None:
    if problems:
        detail: dict = {}
        for path, message in problems:
            detail.setdefault(path, []).append(message)
        raise ValidationError(detail)


def _common_meta_problems(meta: dict) -> list:
    problems = []
    name = meta.get("name")
    if name is not None and not (isinstance(name, str) and NAME_PATTERN.match(name)):
        problems.append(("meta.name", NAME_RULE))
    description = meta.get("description")
    if description is not None and not (isinstance(description, str) and len(description) <= 250):
        problems.append(("meta.description", "Must be text of at most 250 characters."))
    return problems


def _placed(meta: dict, actor, problems: list) -> dict:
    """The scope's rows from meta's scope and ids, seen by the actor; an id that names nothing the actor sees is
    a 400 naming the field, as one that does not exist (another project's id gives nothing away)."""
    scope = meta.get("scope")
    rows = {"cluster": None, "department": None, "project": None}
    if scope not in Scope.values:
        problems.append(("meta.scope", "This field is required: one of tenant, cluster, department, project."
                         if scope in (None, "") else f"Must be one of {', '.join(Scope.values)}."))
        return rows
    project_id, department_id, cluster_id = meta.get("projectId"), meta.get("departmentId"), meta.get("clusterId")
    if scope == Scope.PROJECT:
        project = None
        if parse_id(project_id) is not None:
            project = Project.objects.visible_to(actor).select_related("department").filter(
                pk=parse_id(project_id)).first()
        if project is None:
            problems.append(("meta.projectId", "This field is required with scope project." if project_id is None
                             else "No such project."))
            return rows
        rows.update(project=project, department=project.department, cluster=project.cluster)
    elif scope == Scope.DEPARTMENT:
        department = None
        if parse_id(department_id) is not None:
            department = Department.objects.visible_to(actor).filter(pk=parse_id(department_id)).first()
        if department is None:
            problems.append(("meta.departmentId", "This field is required with scope department."
                             if department_id is None else "No such department."))
            return rows
        rows.update(department=department, cluster=department.cluster)
    elif scope == Scope.CLUSTER:
        cluster = Cluster.objects.visible_to(actor).filter(pk=cluster_id).first() if is_uuid(cluster_id) else None
        if cluster is None:
            problems.append(("meta.clusterId", "This field is required with scope cluster." if cluster_id is None
                             else "No such cluster."))
            return rows
        rows.update(cluster=cluster)
    # Ids of the other levels may be given (runapy sends a project's clusterId); they must agree.
    for field, row, given in (("projectId", rows["project"], project_id), ("departmentId", rows["department"],
                              department_id), ("clusterId", rows["cluster"], cluster_id)):
        if given is not None and str(given) != str(row.pk if row else None):
            problems.append((f"meta.{field}", f"Does not match the asset's {scope} scope."))
    return rows


def _flags_problems(meta: dict) -> list:
    problems = [(f"meta.{key}", "Must be true or false.") for key in ("private", "autoDelete")
                if meta.get(key) is not None and not isinstance(meta[key], bool)]
    types = meta.get("workloadSupportedTypes")
    if types is not None:
        if not isinstance(types, dict):
            problems.append(("meta.workloadSupportedTypes", "Must be an object."))
        else:
            for key, value in types.items():
                where = f"meta.workloadSupportedTypes.{key}"
                if key not in SUPPORTED_TYPES:
                    problems.append((where, "Is not a field of this object."))
                elif key == "distFramework" and value is not None and value not in FRAMEWORKS:
                    problems.append((where, f"Must be one of {', '.join(FRAMEWORKS)}."))
                elif key != "distFramework" and value is not None and not isinstance(value, bool):
                    problems.append((where, "Must be true or false."))
    return problems


def _body_problems(body, kind: str, *, creating: bool) -> list:
    if not isinstance(body, dict):
        return [("", "The body must be a JSON object with meta and spec.")]
    problems = [(key, "Is not a field of this object.") for key in body if key not in ("meta", "spec")]
    if not isinstance(body.get("meta"), dict):
        problems.append(("meta", "This field is required: an object." if body.get("meta") is None
                         else "Must be an object."))
    if creating and not isinstance(body.get("spec"), dict):
        problems.append(("spec", "This field is required: an object." if body.get("spec") is None
                         else "Must be an object."))
    return problems


def _reference_problems(asset: Asset, actor, spec: dict) -> tuple[list, list[Asset]]:
    """Each field naming another asset must name one the actor sees, of a kind that fits, in the asset's scope or
    one above it (a project's data source may read a tenant's credential, not another project's)."""
    problems, found = [], []
    for (kind, field), kinds in REFERENCES.items():
        if kind != asset.kind or not spec.get(field):
            continue
        other = Asset.objects.visible_to(actor).filter(pk=spec[field], kind__in=kinds).first()
        if other is None:
            problems.append((f"spec.{field}", f"No such asset of kind {' or '.join(kinds)}."))
        elif not _reaches(other, asset):
            problems.append((f"spec.{field}", "Must name an asset of this asset's scope or of a scope above it."))
        else:
            found.append(other)
    return problems, found


def _reaches(other: Asset, asset: Asset) -> bool:
    if other.scope == Scope.TENANT:
        return True
    if other.scope == Scope.CLUSTER:
        return asset.scope != Scope.TENANT and asset.cluster_id == other.cluster_id
    if other.scope == Scope.DEPARTMENT:
        return asset.scope in (Scope.DEPARTMENT, Scope.PROJECT) and asset.department_id == other.department_id
    return asset.scope == Scope.PROJECT and asset.project_id == other.project_id


def _scope_key(asset: Asset) -> str:
    key = {Scope.TENANT: "tenant", Scope.CLUSTER: f"cluster:{asset.cluster_id}",
           Scope.DEPARTMENT: f"department:{asset.department_id}", Scope.PROJECT: f"project:{asset.project_id}"}
    return key[asset.scope] + (f":user:{asset.created_by_id}" if asset.private else "")


def _split(kind: str, spec: dict) -> tuple[dict, str]:
    secrets = secret_part(kind, spec)  # a generic secret's keys stay public, its values do not
    public = {k: v for k, v in public_spec(kind, spec).items() if v is not None}
    return public, json.dumps(secrets) if secrets else ""


def _name_taken(asset: Asset) -> Conflict:
    return Conflict(f"An asset of kind {asset.kind} named {asset.name} already exists in this scope.")


def _save(asset: Asset, **kwargs) -> None:
    try:
        with transaction.atomic():
            asset.save(**kwargs)
    except IntegrityError as exc:
        raise _name_taken(asset) from exc


def _record_references(asset: Asset, others: list[Asset]) -> None:
    AssetUse.objects.filter(consumer=AssetUse.Consumer.ASSET, consumer_asset=asset).delete()
    AssetUse.objects.bulk_create([AssetUse(asset=other, consumer=AssetUse.Consumer.ASSET, consumer_id=str(asset.pk),
                                           consumer_name=asset.name, consumer_asset=asset) for other in others])


def _secrets_follow(asset: Asset) -> None:
    """A credential's Secrets follow it on the clusters it serves, once the transaction commits."""
    if asset.kind in MATERIALISED:
        for cluster_id in clusters_served(asset):
            enqueue_on_commit("assets.tasks.cluster_credentials_sync", cluster_id)


def asset_create(*, actor, kind: str, body) -> Asset:
    """A new asset of `kind` from Run:ai's `<Kind>CreationRequest` body ({meta, spec})."""
    problems = _body_problems(body, kind, creating=True)
    _raise(problems)
    meta, spec = body["meta"], body.get("spec") or {}
    problems += [(f"meta.{key}", "Is not a field of this object.") for key in meta if key not in CREATE_META]
    if meta.get("name") in (None, ""):
        problems.append(("meta.name", "This field is required."))
    problems += _common_meta_problems(meta) + _flags_problems(meta) + spec_problems(kind, spec)
    rows = _placed(meta, actor, problems)
    _raise(problems)
    public, secret = _split(kind, spec)
    asset = Asset(kind=kind, name=meta["name"], description=meta.get("description") or "", scope=meta["scope"],
                  private=bool(meta.get("private")), auto_delete=bool(meta.get("autoDelete")),
                  workload_supported_types=meta.get("workloadSupportedTypes") or {}, spec=public, secret=secret,
                  created_by=actor, created_by_name=actor.get_username(), updated_by_name=actor.get_username(),
                  **rows)
    if not access.manages(actor, asset):
        raise PermissionDenied(access.REFUSED.format(kind=kind))
    ref_problems, others = _reference_problems(asset, actor, spec)
    _raise(ref_problems)
    asset.scope_key = _scope_key(asset)
    with transaction.atomic():
        _save(asset)
        _record_references(asset, others)
        audit_record(actor=actor, action=AuditEvent.Action.CREATE, instance=asset)
    _secrets_follow(asset)
    return asset


def _unchangeable(meta: dict, asset: Asset) -> list:
    """Fields of a full asset echoed back in an update may stay as they are; a change to one is a 400."""
    current = {"scope": asset.scope, "projectId": asset.project_id, "clusterId": asset.cluster_id,
               "departmentId": asset.department_id, "private": asset.private, "autoDelete": asset.auto_delete,
               "id": asset.pk, "kind": asset.kind}
    problems = []
    for key, value in meta.items():
        if key in ("name", "description"):
            continue
        if key not in CREATE_META | READ_ONLY_META:
            problems.append((f"meta.{key}", "Is not a field of this object."))
        elif key in current and value is not None and str(value) != str(current[key] if current[key] is not None
                                                                         else None):
            problems.append((f"meta.{key}", "Cannot be changed."))
    return problems


def asset_update(*, actor, asset: Asset, body) -> Asset:
    """Run:ai's `<Kind>UpdateRequest`: meta's name and description, and the spec's fields that the kind lets
    change (every field of an environment, a compute, NFS, S3, Git, host path; a PVC's `path`; none of a
    ConfigMap's, a Secret's or a credential's: those are made anew)."""
    problems = _body_problems(body, asset.kind, creating=False)
    _raise(problems)
    meta, spec = body["meta"], body.get("spec")
    problems += _common_meta_problems(meta) + _unchangeable(meta, asset)
    allowed = updatable(asset.kind)
    others = None
    if spec is not None:
        if not isinstance(spec, dict):
            problems.append(("spec", "Must be an object."))
        elif allowed is None:
            problems += spec_problems(asset.kind, spec)
        else:  # fields that cannot change may be echoed back as they are answered
            shown = spec_of(asset)
            problems += [(f"spec.{key}", "Cannot be changed.") for key, value in spec.items()
                         if key not in allowed and value is not None and value != shown.get(key)]
            spec = {**asset.spec, **{k: v for k, v in spec.items() if k in allowed}} if allowed else None
            problems += spec_problems(asset.kind, spec) if spec is not None else []
    _raise(problems)
    if not access.manages(actor, asset):
        raise PermissionDenied(access.REFUSED.format(kind=asset.kind))
    if spec is not None and allowed is None:
        ref_problems, others = _reference_problems(asset, actor, spec)
        _raise(ref_problems)
    before = snapshot(asset)
    asset.name = meta.get("name") or asset.name
    if "description" in meta:
        asset.description = meta["description"] or ""
    if spec is not None:
        asset.spec = _split(asset.kind, spec)[0]
    asset.updated_by_name = actor.get_username()
    asset.update_count += 1
    with transaction.atomic():
        _save(asset)
        if others is not None:
            _record_references(asset, others)
        audit_record(actor=actor, action=AuditEvent.Action.UPDATE, instance=asset, before=before)
    _secrets_follow(asset)
    return asset


def asset_delete(*, actor, asset: Asset) -> None:
    """Delete an asset nothing uses; one in use is a 409 naming what uses it."""
    if not access.manages(actor, asset):
        raise PermissionDenied(access.REFUSED.format(kind=asset.kind))
    uses = list(asset.uses.all()[:11])
    if uses:
        named = ", ".join(f"{use.consumer} {use.consumer_name}" for use in uses[:10])
        raise Conflict(f"The {asset.kind} asset {asset.name} is in use by {named}"
                       f"{' and more' if len(uses) > 10 else ''}; remove those first.")
    before = snapshot(asset)
    with transaction.atomic():
        asset.delete()
        _secrets_follow(asset)  # the clusters it served: their sync runs once it is gone
        audit_record(actor=actor, action=AuditEvent.Action.DELETE, instance=asset, before=before)


def asset_use_record(*, asset: Asset, consumer: str, consumer_id: str, consumer_name: str) -> AssetUse:
    """Record that a workload or a template uses `asset` (called by the apps that make them from assets)."""
    use, _ = AssetUse.objects.update_or_create(asset=asset, consumer=consumer, consumer_id=str(consumer_id),
                                               defaults={"consumer_name": consumer_name})
    return use


def asset_use_release(*, consumer: str, consumer_id: str) -> int:
    """Forget every use by a workload or template (it was deleted); the assets it used may then be deleted."""
    return AssetUse.objects.filter(consumer=consumer, consumer_id=str(consumer_id)).delete()[0]


# The scope's rows of a new asset's meta, for the other writers of assets (templates: assets/templates.py).
place = _placed

__all__ = ["Kind", "asset_create", "asset_delete", "asset_update", "asset_use_record", "asset_use_release",
           "registry_login_set"]


def registry_login_set(*, asset: Asset, spec: dict, password: str | None) -> Asset:
    """A registry's new URL and user (checked by the caller, assets/registry_api.py), and its new password when
    one is given (None keeps the one it has)."""
    asset.spec = spec
    if password is not None:
        asset.secret = json.dumps({"password": password})
    _save(asset, update_fields=["spec", "secret", "updated_at"])
    return asset
