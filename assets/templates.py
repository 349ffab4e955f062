"""Templates of assets: one `Asset` row of kind `workload-template` answers both Run:ai APIs of templates.

- 2.18's (and latest's) asset `workload-template`: `{meta, spec: {assets: {environment, compute, datasources},
  specificEnv}}`, an asset's meta (scope, private, workloadSupportedTypes);
- latest's `workload-templates/{workspaces,trainings,distributed,inferences}`: `{meta: {name, scopeType, scopeId},
  spec: <the workload's spec fields>, assets}` of one workload type.

The row's `spec` keeps the union: `workloadType` (none for a 2.18 template that serves several types), `assets`
(ids), `specificEnv`, `spec` (workload fields) and a distributed template's `master`/`masterSpecSameAsWorker`.
A template uses its assets (AssetUse rows of consumer `template`: they cannot be deleted under it) and a workload
made from it is filled by `template_fill` (assets/template_selectors.py): environment, compute, data sources, the
template's own fields, then the request's (assets/composition.py)."""

from dataclasses import dataclass

from django.db import transaction
from rest_framework.exceptions import PermissionDenied, ValidationError

from assets import access, composition
from assets.models import Asset, AssetUse, Kind, Scope
from assets.services import asset_use_release, place
from assets.specs import DATASOURCE_KINDS
from assets.template_selectors import reaches, scope_id
from studio.audit import audit_record, snapshot
from studio.errors import Conflict
from studio.ids import is_uuid
from studio.models import AuditEvent
from studio.names import NAME_PATTERN, NAME_RULE

TEMPLATE = Kind.WORKLOAD_TEMPLATE
TYPES = {"workspace": "Workspace", "training": "Training", "distributed": "Distributed", "inference": "Inference"}
_COMMON = ("annotations", "args", "category", "command", "compute", "createHomeDir", "environmentVariables",
           "exposedUrls", "image", "imagePullPolicy", "labels", "nodeAffinityRequired", "nodePools", "nodeType",
           "podAffinity", "ports", "preemptibility", "priorityClass", "probes", "relatedUrls", "security", "storage",
           "tolerations", "workingDir", "imagePullSecrets")
_NOT_INFERENCE = ("autoDeletionTimeAfterCompletionSeconds", "backoffLimit", "restartPolicy", "stdin",
                  "terminateAfterPreemption", "terminationGracePeriodSeconds", "tty")
# The spec fields of each type's template (Run:ai latest's <Type>TemplateSpec).
SPEC_FIELDS = {
    "workspace": frozenset(_COMMON + _NOT_INFERENCE),
    "training": frozenset(_COMMON + _NOT_INFERENCE + ("completions", "parallelism")),
    "distributed": frozenset(_COMMON + _NOT_INFERENCE + (
        "cleanPodPolicy", "distributedFramework", "maxReplicas", "minReplicas", "mpiLauncherCreationPolicy",
        "numWorkers", "slotsPerWorker", "sshAuthMountPath")),
    "inference": frozenset(_COMMON + ("autoscaling", "servingConfiguration", "servingPort")),
}
_OBJECTS = {"compute", "security", "storage", "probes", "podAffinity", "nodeAffinityRequired", "autoscaling",
            "servingPort", "servingConfiguration"}
_LISTS = {"annotations", "labels", "environmentVariables", "tolerations", "ports", "exposedUrls", "relatedUrls",
          "nodePools", "imagePullSecrets"}
SPECIFIC_FIELDS = frozenset((
    "allowOverQuota", "annotations", "args", "autoDeletionTimeAfterCompletionSeconds", "autoScaling", "backoffLimit",
    "category", "command", "completions", "connections", "environmentVariables", "imagePullSecrets", "labels",
    "nodeAffinityRequired", "nodePools", "nodeType", "parallelism", "podAffinity", "preemptibility", "priorityClass",
    "restartPolicy", "runAsGid", "runAsUid", "servingPortAccess", "supplementalGroups", "terminateAfterPreemption",
    "terminationGracePeriodSeconds", "tolerations"))


def _raise(problems: list[tuple[str, str]]) -> None:
    if problems:
        detail: dict = {}
        for path, message in problems:
            detail.setdefault(path, []).append(message)
        raise ValidationError(detail)


# -- checking a body ---------------------------------------------------------------------------------------------

def _spec_problems(spec, workload_type: str | None, path: str) -> list:
    """The workload fields of a template: known to its type, objects and lists where they must be. Every rule of
    a field is checked when a workload is made from it (the template is then the workload's spec)."""
    if spec is None:
        return []
    if not isinstance(spec, dict):
        return [(path, "Must be an object.")]
    known = SPEC_FIELDS.get(workload_type) or frozenset().union(*SPEC_FIELDS.values())
    problems = [(f"{path}.{key}", "Is not a field of this object.") for key in spec if key not in known]
    for key, value in spec.items():
        if value is None:
            continue
        if key in _OBJECTS and not isinstance(value, dict):
            problems.append((f"{path}.{key}", "Must be an object."))
        elif key in _LISTS and not isinstance(value, list):
            problems.append((f"{path}.{key}", "Must be a list."))
        elif key not in _OBJECTS | _LISTS and isinstance(value, (dict, list)):
            problems.append((f"{path}.{key}", "Must be a single value."))
    return problems


def _specific_problems(specific, path: str) -> list:
    if specific is None:
        return []
    if not isinstance(specific, dict):
        return [(path, "Must be an object.")]
    return [(f"{path}.{key}", "Is not a field of this object.") for key in specific if key not in SPECIFIC_FIELDS]


def _asset_ids_problems(ids, path: str, *, environment_required: bool) -> list:
    """The shape of Run:ai's AssetsIds: {environment, compute, datasources: [{id, kind, overrides}]}."""
    if ids is None:
        return [(path, "This field is required: an object.")] if environment_required else []
    if not isinstance(ids, dict):
        return [(path, "Must be an object.")]
    problems = [(f"{path}.{key}", "Is not a field of this object.") for key in ids
                if key not in ("environment", "compute", "datasources", "workloadVolumes")]
    if environment_required and not ids.get("environment"):
        problems.append((f"{path}.environment", "This field is required."))
    for key in ("environment", "compute"):
        if ids.get(key) is not None and not is_uuid(ids[key]):
            problems.append((f"{path}.{key}", "Must be a UUID."))
    sources = ids.get("datasources")
    if sources is not None and not isinstance(sources, list):
        problems.append((f"{path}.datasources", "Must be a list."))
    for index, source in enumerate(sources if isinstance(sources, list) else ()):
        where = f"{path}.datasources[{index}]"
        if not isinstance(source, dict):
            problems.append((where, "Must be an object with id and kind."))
            continue
        if not is_uuid(source.get("id")):
            problems.append((f"{where}.id", "This field is required: a UUID."))
        if source.get("kind") not in DATASOURCE_KINDS:
            problems.append((f"{where}.kind", f"Must be one of {', '.join(DATASOURCE_KINDS)}."))
        overrides = source.get("overrides")
        if overrides is not None and (not isinstance(overrides, dict) or set(overrides) - {"containerPath"}):
            problems.append((f"{where}.overrides", "Must be an object with containerPath only."))
    return problems


def _well_formed(ids) -> dict | None:
    """The ids of a body with shape problems that can still be looked up (each problem is named at once)."""
    if not isinstance(ids, dict):
        return None
    sources = ids.get("datasources") if isinstance(ids.get("datasources"), list) else []
    return {"environment": ids.get("environment") if is_uuid(ids.get("environment")) else None,
            "compute": ids.get("compute") if is_uuid(ids.get("compute")) else None,
            "datasources": [s for s in sources if isinstance(s, dict) and is_uuid(s.get("id"))
                            and s.get("kind") in DATASOURCE_KINDS]}


def _referenced(actor, template: Asset, ids: dict | None, path: str) -> tuple[list, list[Asset]]:
    """The assets the template names: each one the actor sees, of the kind named, in the template's scope or
    one above it."""
    if not ids:
        return [], []
    wanted = [(f"{path}.environment", ids.get("environment"), (Kind.ENVIRONMENT,)),
              (f"{path}.compute", ids.get("compute"), (Kind.COMPUTE,))]
    wanted += [(f"{path}.datasources[{i}].id", s["id"], (s["kind"],)) for i, s in enumerate(ids.get("datasources")
                                                                                        or ())]
    wanted = [w for w in wanted if w[1]]
    found = {str(a.pk): a for a in Asset.objects.visible_to(actor).filter(pk__in=[w[1] for w in wanted])}
    problems, rows = [], []
    for where, asset_id, kinds in wanted:
        asset = found.get(str(asset_id))
        if asset is None or asset.kind not in kinds:
            problems.append((where, f"No such asset of kind {' or '.join(kinds)}: {asset_id}."))
        elif not reaches(asset, template):
            problems.append((where, "Must name an asset of the template's scope or of a scope above it."))
        elif asset.private and not template.private:  # a shared template would hand it to everyone in scope
            problems.append((where, "A private asset may be named by a private template only."))
        else:
            rows.append(asset)
    return problems, rows


def _name_problems(meta: dict, *, required: bool) -> list:
    problems = []
    name = meta.get("name")
    if name in (None, ""):
        if required:
            problems.append(("meta.name", "This field is required."))
    elif not (isinstance(name, str) and NAME_PATTERN.match(name)):
        problems.append(("meta.name", NAME_RULE))
    description = meta.get("description")
    if description is not None and not (isinstance(description, str) and len(description) <= 250):
        problems.append(("meta.description", "Must be text of at most 250 characters."))
    return problems


def _asset_meta(meta: dict) -> dict:
    """latest's template meta (`scopeType`, `scopeId`) as an asset's (`scope` and the id of that scope)."""
    scope, ident = meta.get("scopeType"), meta.get("scopeId")
    out = {"scope": scope}
    key = {"project": "projectId", "department": "departmentId", "cluster": "clusterId"}.get(scope)
    if key and ident is not None:
        out[key] = int(ident) if key == "projectId" and str(ident).isdigit() else ident
    return out


# -- writes ------------------------------------------------------------------------------------------------------

@dataclass
class TemplateBody:
    """A template's parts, from either API's body."""

    meta: dict
    asset_meta: dict
    stored: dict
    asset_ids: dict | None


def _from_asset_body(body) -> tuple[TemplateBody | None, list]:
    if not isinstance(body, dict):
        return None, [("", "The body must be a JSON object with meta and spec.")]
    problems = [(key, "Is not a field of this object.") for key in body if key not in ("meta", "spec")]
    meta, spec = body.get("meta"), body.get("spec")
    if not isinstance(meta, dict):
        problems.append(("meta", "This field is required: an object."))
    if not isinstance(spec, dict):
        problems.append(("spec", "This field is required: an object."))
    if problems:
        return None, problems
    problems += [(f"spec.{key}", "Is not a field of this object.") for key in spec
                 if key not in ("assets", "specificEnv")]
    problems += _asset_ids_problems(spec.get("assets"), "spec.assets", environment_required=True)
    problems += _specific_problems(spec.get("specificEnv"), "spec.specificEnv")
    types = meta.get("workloadSupportedTypes") if isinstance(meta.get("workloadSupportedTypes"), dict) else {}
    chosen = [t for t in TYPES if types.get(t) is True]
    stored = {"workloadType": chosen[0] if len(chosen) == 1 else None, "assets": spec.get("assets"),
              "specificEnv": spec.get("specificEnv")}
    return TemplateBody(meta=meta, asset_meta=meta, stored=stored, asset_ids=spec.get("assets")), problems


TYPED_KEYS = ("meta", "spec", "assets")
DISTRIBUTED_KEYS = ("masterSpecSameAsWorker", "master")


def _from_typed_body(body, workload_type: str, *, creating: bool, patching: bool = False
                     ) -> tuple[TemplateBody | None, list]:
    if not isinstance(body, dict):
        return None, [("", "The body must be a JSON object.")]
    allowed = TYPED_KEYS + (DISTRIBUTED_KEYS if workload_type == "distributed" else ()) + (
        ("fieldsToClear",) if patching else ())
    problems = [(key, "Is not a field of this object.") for key in body if key not in allowed]
    meta = body.get("meta")
    if meta is None and patching:
        meta = {}
    if not isinstance(meta, dict):
        return None, problems + [("meta", "This field is required: an object.")]
    # an update may echo the template's scope back (a change to it is refused by template_update)
    known_meta = ("name", "description", "scopeType", "scopeId")
    problems += [(f"meta.{key}", "Is not a field of this object.") for key in meta if key not in known_meta]
    if creating and meta.get("scopeType") not in Scope.values:
        problems.append(("meta.scopeType", f"This field is required: one of {', '.join(Scope.values)}."))
    problems += _spec_problems(body.get("spec"), workload_type, "spec")
    problems += _asset_ids_problems(body.get("assets"), "assets", environment_required=False)
    master = body.get("master")
    if master is not None:
        if not isinstance(master, dict) or set(master) - {"spec", "assets"}:
            problems.append(("master", "Must be an object with spec and assets."))
        else:
            problems += _spec_problems(master.get("spec"), "training", "master.spec")
    if body.get("masterSpecSameAsWorker") is not None and not isinstance(body["masterSpecSameAsWorker"], bool):
        problems.append(("masterSpecSameAsWorker", "Must be true or false."))
    if body.get("fieldsToClear") is not None and not (isinstance(body["fieldsToClear"], list) and all(
            isinstance(f, str) and f.startswith("spec.") for f in body["fieldsToClear"])):
        problems.append(("fieldsToClear", "Must be a list of paths such as spec.image."))
    stored = {"workloadType": workload_type, "spec": body.get("spec"), "assets": body.get("assets")}
    if workload_type == "distributed":
        stored.update(master=master, masterSpecSameAsWorker=body.get("masterSpecSameAsWorker"))
    return TemplateBody(meta=meta, asset_meta=_asset_meta(meta) if creating else {}, stored=stored,
                        asset_ids=body.get("assets")), problems


def _record_uses(template: Asset, used: list[Asset]) -> None:
    AssetUse.objects.filter(consumer=AssetUse.Consumer.TEMPLATE, consumer_id=str(template.pk)).delete()
    AssetUse.objects.bulk_create([AssetUse(asset=asset, consumer=AssetUse.Consumer.TEMPLATE,
                                           consumer_id=str(template.pk), consumer_name=template.name)
                                  for asset in {a.pk: a for a in used}.values()])


def _scope_key(asset: Asset) -> str:
    key = {Scope.TENANT: "tenant", Scope.CLUSTER: f"cluster:{asset.cluster_id}",
           Scope.DEPARTMENT: f"department:{asset.department_id}", Scope.PROJECT: f"project:{asset.project_id}"}
    return key[asset.scope] + (f":user:{asset.created_by_id}" if asset.private else "")


def _save(template: Asset) -> None:
    if Asset.objects.filter(kind=TEMPLATE, scope_key=template.scope_key, name=template.name).exclude(
            pk=template.pk).exists():
        raise Conflict(f"A template named {template.name} already exists in this scope.")
    template.save()


def template_create(*, actor, body, workload_type: str | None = None) -> Asset:
    """A template from 2.18's asset body (`workload_type` None) or latest's body of one workload type."""
    parsed, problems = (_from_asset_body(body) if workload_type is None
                        else _from_typed_body(body, workload_type, creating=True))
    if parsed is None:
        _raise(problems)
    meta = parsed.meta
    problems += _name_problems(meta, required=True)
    if workload_type is None:
        problems += [(f"meta.{key}", "Is not a field of this object.") for key in meta if key not in (
            "name", "description", "scope", "clusterId", "departmentId", "projectId", "autoDelete",
            "workloadSupportedTypes", "private")]
    rows = place(parsed.asset_meta, actor, problems)
    if workload_type is not None:  # latest names the scope's id scopeId
        problems = [(p.replace("meta.projectId", "meta.scopeId").replace("meta.departmentId", "meta.scopeId")
                     .replace("meta.clusterId", "meta.scopeId"), m) for p, m in problems]
    template = Asset(kind=TEMPLATE, name=meta["name"], description=meta.get("description") or "",
                     scope=parsed.asset_meta["scope"], private=meta.get("private") is True,
                     workload_supported_types=meta.get("workloadSupportedTypes") or {}
                     if isinstance(meta.get("workloadSupportedTypes"), dict) else {},
                     spec=parsed.stored, created_by=actor, created_by_name=actor.get_username(),
                     updated_by_name=actor.get_username(), **rows)
    used = []
    if not any(p.startswith("meta.scope") or p.startswith("meta.projectId") or p.startswith("meta.departmentId")
               or p.startswith("meta.clusterId") for p, _ in problems):  # placed: its assets must reach it
        ref_problems, used = _referenced(actor, template, parsed.asset_ids if not problems else _well_formed(
            parsed.asset_ids), "spec.assets" if workload_type is None else "assets")
        problems += ref_problems
    _raise(problems)
    if not access.manages(actor, template):
        raise PermissionDenied("Your roles do not let you manage templates at this scope.")
    template.scope_key = _scope_key(template)
    with transaction.atomic():
        _save(template)
        _record_uses(template, used)
        audit_record(actor=actor, action=AuditEvent.Action.CREATE, instance=template)
    return template


def template_update(*, actor, template: Asset, body, workload_type: str | None = None, patch: bool = False
                    ) -> Asset:
    """2.18's PUT (meta's name and description, the spec's assets and specificEnv), latest's PUT of a typed
    template (its spec and assets replaced) or PATCH (the given fields merged, `fieldsToClear` removed)."""
    if workload_type is None:
        parsed, problems = _from_asset_body(body)
        if parsed is not None:  # an asset's full meta may be echoed back: only the name and description change
            parsed.stored["workloadType"] = template.spec.get("workloadType")
    else:
        parsed, problems = _from_typed_body(body, workload_type, creating=False, patching=patch)
    _raise(problems)
    problems += _name_problems(parsed.meta, required=not patch)
    if workload_type is not None:
        current = {"scopeType": template.scope, "scopeId": scope_id(template)}
        problems += [(f"meta.{key}", "Cannot be changed.") for key, value in current.items()
                     if parsed.meta.get(key) is not None and str(parsed.meta[key]) != value]
    _raise(problems)
    if not access.manages(actor, template):
        raise PermissionDenied("Your roles do not let you manage templates at this scope.")
    stored = parsed.stored
    if patch:
        stored = {**template.spec, **{k: v for k, v in stored.items() if k in body}}
        if "spec" in body:
            stored["spec"] = composition.merged(template.spec.get("spec") or {}, body.get("spec") or {})
        for path in body.get("fieldsToClear") or ():
            (stored.get("spec") or {}).pop(path.removeprefix("spec.").split(".")[0], None)
    ids = stored.get("assets")
    ref_problems, used = _referenced(actor, template, ids, "spec.assets" if workload_type is None else "assets")
    _raise(ref_problems)
    before = snapshot(template)
    template.name = parsed.meta.get("name") or template.name
    if "description" in parsed.meta:
        template.description = parsed.meta["description"] or ""
    template.spec = stored
    template.updated_by_name = actor.get_username()
    template.update_count += 1
    with transaction.atomic():
        _save(template)
        _record_uses(template, used)
        audit_record(actor=actor, action=AuditEvent.Action.UPDATE, instance=template, before=before)
    return template


def template_delete(*, actor, template: Asset) -> None:
    """Delete a template; the assets it used are then free (workloads made from it keep their own copy)."""
    if not access.manages(actor, template):
        raise PermissionDenied("Your roles do not let you manage templates at this scope.")
    before = snapshot(template)
    with transaction.atomic():
        asset_use_release(consumer=AssetUse.Consumer.TEMPLATE, consumer_id=str(template.pk))
        template.delete()
        audit_record(actor=actor, action=AuditEvent.Action.DELETE, instance=template, before=before)


def workload_assets_use(*, workload_kind: str, workload_id: str, workload_name: str, asset_ids: list[str]) -> None:
    """Record that a workload uses these assets (the workloads app calls it as it makes one from a template)."""
    AssetUse.objects.bulk_create([AssetUse(asset_id=asset_id, consumer=workload_kind, consumer_id=str(workload_id),
                                           consumer_name=workload_name) for asset_id in dict.fromkeys(asset_ids)],
                                 ignore_conflicts=True)


__all__ = ["TYPES", "template_create", "template_delete", "template_update", "workload_assets_use"]
