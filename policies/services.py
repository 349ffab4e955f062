"""Writes of policies (platform admins only; validated against Run:ai's schemas, audited, namespaces' Pod
Security labels refreshed on commit) and `policy_enforce`, the one call every submission path makes."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Mapping

from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.http import Http404
from rest_framework.exceptions import ValidationError

from policies import schema
from policies.check import enforce, violations
from policies.merge import effective, get_path, leaves, tighten
from policies.models import Policy
from policies.selectors import (
    Unit,
    effective_for_project,
    effective_of,
    layer_of,
    policy_view,
    stored_chain,
)
from studio.audit import audit_record, snapshot
from studio.errors import Conflict
from studio.ids import is_id, parse_id
from studio.models import AuditEvent, Department, Project, is_platform_admin
from studio.queue import enqueue_on_commit

WRITERS_ONLY = "Only platform admins may change policies."


# --- enforcement ------------------------------------------------------------------------------------------

def policy_enforce(*, kind: str, project: Project, spec: Mapping) -> dict:
    """The spec with the project's effective policy applied (its defaults filled in); a 400 naming each field
    and rule it breaks: `spec.security.runAsUid: must be at least 1 (policy: tenant)`."""
    policy_type = schema.TYPE_OF_KIND[kind]
    result, problems = enforce(policy_type, effective_for_project(policy_type, project), spec)
    if problems:
        errors: dict[str, list[str]] = {}
        for field, message in problems:
            errors.setdefault(field, []).append(message)
        raise ValidationError({"spec": errors})
    return result


def policy_decision(*, kind: str, project: Project, spec: Mapping, field: str = "spec") -> tuple[dict, dict]:
    """What `policy_enforce` would decide, as data for a launch preview: (spec with the policy's defaults,
    {"allowed", "violations": [{"field", "rule", "message"}]}), fields under `field` (a distributed training's
    `masterSpec`). Raises nothing."""
    policy_type = schema.TYPE_OF_KIND[kind]
    result, problems = violations(policy_type, effective_for_project(policy_type, project), spec)
    found = [{"field": f"{field}.{path}", "rule": rule, "message": message} for path, rule, message in problems]
    return result, {"allowed": not found, "violations": found}


# --- validation of a policy body --------------------------------------------------------------------------

def _schema_errors(name: str, body) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    for error in schema.validator(name).iter_errors(body):
        path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path).lstrip(".")
        errors.setdefault(path or "request", []).append(error.message)
    return errors


def _unknown_fields(policy_type: str, policy: Mapping) -> dict[str, list[str]]:
    """Keys Run:ai's policy of this type does not have: fields of `rules` and `defaults`, rule attributes."""
    errors: dict[str, list[str]] = {}
    table = schema.rule_fields(policy_type)
    prefixes = {p.rsplit(".", n)[0] for p in table for n in range(p.count(".") + 1)}

    def walk_rules(node, path):
        for key, value in node.items():
            child = f"{path}.{key}" if path else key
            if child in table:
                extra = set(value or {}) - set(table[child]["attributes"]) - {"sourceOfRule"}
                for attribute in sorted(extra):
                    errors.setdefault(f"policy.rules.{child}.{attribute}", []).append(
                        f"Not a rule of a {table[child]['kind']} field; allowed: "
                        f"{', '.join(table[child]['attributes'])}.")
            elif child in prefixes and isinstance(value, Mapping):
                walk_rules(value, child)
            else:
                errors.setdefault(f"policy.rules.{child}", []).append(
                    f"Unknown field: a {policy_type[:-1]} policy has no rules for it.")

    defaults_fields = {p.replace(".attributes", "").replace(".instances", "") for p in prefixes}

    def walk_defaults(node, path):
        for key, value in node.items():
            child = f"{path}.{key}" if path else key
            if child in schema.itemized_fields(policy_type) or child in defaults_fields and not isinstance(
                    value, Mapping):
                continue
            if child in defaults_fields:
                walk_defaults(value, child)
            else:
                errors.setdefault(f"policy.defaults.{child}", []).append(
                    f"Unknown field: a {policy_type[:-1]} policy has no default for it.")

    walk_rules(policy.get("rules") or {}, "")
    walk_defaults(policy.get("defaults") or {}, "")
    return errors


def _rule_sense(policy_type: str, rules: Mapping) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    for path, rule in leaves(rules, policy_type):
        kind = schema.rule_fields(policy_type)[path]["kind"]
        low, high = rule.get("min"), rule.get("max")
        if low is not None and high is not None and tighten(kind, "max", low, high) != low and low != high:
            errors.setdefault(f"policy.rules.{path}.max", []).append(f"Must be at least min ({low}).")
        if rule.get("step") is not None and rule["step"] <= 0:
            errors.setdefault(f"policy.rules.{path}.step", []).append("Must be more than 0.")
    return errors


def _loosened(policy_type: str, wider_rows: list[Policy], rules: Mapping) -> dict[str, list[str]]:
    """A narrower policy may only tighten what a wider stored policy set (the built-in default it may loosen)."""
    wider = effective(policy_type, [layer_of(row) for row in wider_rows])
    errors: dict[str, list[str]] = {}
    for path, rule in leaves(rules, policy_type):
        kind = schema.rule_fields(policy_type)[path]["kind"]
        for attribute, value in rule.items():
            if attribute not in wider.rules.get(path, {}):
                continue
            theirs = wider.rules[path][attribute]
            if tighten(kind, attribute, theirs, value) != value:
                label = wider.origins[path][attribute].label
                errors.setdefault(f"policy.rules.{path}.{attribute}", []).append(
                    f"Looser than the {label} policy ({attribute}: {theirs}): a narrower scope may only tighten it.")
    return errors


def _defaults_as_spec(policy_type: str, defaults: Mapping) -> dict:
    spec = copy.deepcopy(dict(defaults))
    for path in schema.itemized_fields(policy_type):
        node = get_path(spec, path)
        if isinstance(node, Mapping):
            *parents, last = path.split(".")
            parent = get_path(spec, ".".join(parents)) if parents else spec
            parent[last] = list(node.get("instances") or [])
    return spec


def _defaults_errors(policy_type: str, rows: list[Policy], candidate: Policy) -> dict[str, list[str]]:
    """Defaults that the effective rules at their own scope would refuse."""
    merged = effective_of(policy_type, [*rows, candidate])
    _, problems = enforce(policy_type, merged, _defaults_as_spec(policy_type, candidate.defaults or {}))
    errors: dict[str, list[str]] = {}
    for field, message in problems:
        if not message.startswith("is required"):
            errors.setdefault(f"policy.defaults.{field}", []).append(message)
    return errors


# --- scope -----------------------------------------------------------------------------------------------

def unit_from(meta: Mapping, *, prefix: str = "meta.") -> Unit:
    """The org unit named by `scope` and its id (`departmentId`, `projectId`); a 400 naming what is wrong."""
    scope = meta.get("scope")
    if scope == "tenant":
        return Unit(scope="tenant")
    if scope == "department":
        department_id = str(meta.get("departmentId") or "")
        department = Department.objects.filter(pk=parse_id(department_id)).first() if is_id(department_id) else None
        if department is None:
            raise ValidationError({f"{prefix}departmentId": ["Is required with scope department, and must name a "
                                                             "department."]})
        return Unit(scope="department", department=department)
    if scope == "project":
        project_id = str(meta.get("projectId") or "")
        project = (Project.objects.select_related("department", "cluster").filter(pk=parse_id(project_id)).first()
                   if is_id(project_id) else None)
        if project is None:
            raise ValidationError({f"{prefix}projectId": ["Is required with scope project, and must name a project."]})
        return Unit(scope="project", department=project.department, project=project)
    if scope in ("cluster", "system"):
        raise ValidationError({f"{prefix}scope": [f"Scope {scope} is not supported: PaaS Studio's policies are "
                                                  "per tenant, department and project."]})
    raise ValidationError({f"{prefix}scope": ["Must be one of tenant, department, project."]})


def cluster_id(text: str) -> str:
    try:
        return str(uuid.UUID(text))
    except ValueError:
        raise ValidationError({"clusterId": ["Must be a UUID."]}) from None


def _require_writer(actor) -> None:
    if not is_platform_admin(actor):
        raise PermissionDenied(WRITERS_ONLY)


def _affected_projects(unit: Unit) -> list[int]:
    if unit.project is not None:
        return [unit.project.pk]
    projects = Project.objects.all()
    if unit.department is not None:
        projects = projects.filter(department=unit.department)
    return list(projects.values_list("pk", flat=True))


def _after_change(unit: Unit) -> None:
    for project_id in _affected_projects(unit):
        enqueue_on_commit("policies.tasks.project_namespace_security", project_id)


# --- writes ----------------------------------------------------------------------------------------------

CREATED_MEANWHILE = "This policy was created meanwhile; read it and apply your change again."


def _locked(policy_type: str, unit: Unit) -> Policy | None:
    """The unit's stored policy, locked until the transaction ends (None when it has none yet)."""
    return Policy.objects.select_for_update().filter(policy_type=policy_type, scope_key=unit.key).first()


def _save(*, actor, policy_type: str, unit: Unit, existing: Policy | None, name: str | None, policy: Mapping,
          validate_only: bool, request_errors: dict) -> dict:
    """Write `policy` as the unit's own; `existing` is its row as read under the lock (`_locked`)."""
    rows = stored_chain(policy_type, unit)
    if existing is None and any(row.scope_key == unit.key for row in rows):
        raise Conflict(CREATED_MEANWHILE)  # another first write committed after our locked read found none
    wider = [row for row in rows if row.scope_key != unit.key]
    errors = dict(request_errors)
    errors.update(_unknown_fields(policy_type, policy))
    if not errors:
        errors.update(_rule_sense(policy_type, policy.get("rules") or {}))
        errors.update(_loosened(policy_type, wider, policy.get("rules") or {}))
    candidate = existing or Policy(policy_type=policy_type, scope=unit.scope, department=unit.department,
                                   project=unit.project, scope_key=unit.key, created_by=actor,
                                   created_by_name=actor.get_username())
    before = snapshot(existing) if existing is not None else None
    candidate.name = name or candidate.name or f"{unit.key.replace(':', '-')}-{policy_type}"
    candidate.defaults = policy.get("defaults") or {}
    candidate.rules = policy.get("rules") or {}
    candidate.imposed_assets = policy.get("imposedAssets") or []
    candidate.updated_by_name = actor.get_username()
    if not errors:
        errors.update(_defaults_errors(policy_type, wider, candidate))
    if errors:
        raise ValidationError(errors)
    if validate_only:
        return policy_view(policy_type, unit, [*wider, candidate], own=candidate)
    try:
        with transaction.atomic():
            candidate.save()
            audit_record(actor=actor, action=AuditEvent.Action.UPDATE if existing else AuditEvent.Action.CREATE,
                         instance=candidate, before=before)
            _after_change(unit)
    except IntegrityError as exc:  # a concurrent first write of the same unit's policy won
        raise Conflict(CREATED_MEANWHILE) from exc
    return policy_view(policy_type, unit, stored_chain(policy_type, unit))


def _body_parts(body) -> tuple[Mapping, Mapping]:
    if not isinstance(body, Mapping):
        raise ValidationError({"request": ["Must be a JSON object."]})
    meta = body.get("meta") if isinstance(body.get("meta"), Mapping) else {}
    policy = body.get("policy") if isinstance(body.get("policy"), Mapping) else {}
    return meta, policy


def policy_overwrite(*, actor, policy_type: str, body, validate_only: bool = False) -> dict:
    """PUT: the unit's policy becomes exactly `policy` (Run:ai's `<Type>PolicyOverwriteRequestV2`)."""
    _require_writer(actor)
    request_errors = _schema_errors(f"{schema.TYPES[policy_type]}PolicyOverwriteRequestV2", body)
    meta, policy = _body_parts(body)
    unit = unit_from(meta)
    with transaction.atomic():
        return _save(actor=actor, policy_type=policy_type, unit=unit, existing=_locked(policy_type, unit),
                     name=meta.get("name"), policy=policy, validate_only=validate_only,
                     request_errors=request_errors)


def _merge_patch(target, patch):
    """RFC 7386: objects merge, null removes, anything else replaces."""
    if not isinstance(patch, Mapping):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge_patch(result.get(key), value)
    return result


def _reset(tree: dict, path: str) -> None:
    *parents, last = path.split(".")
    node = get_path(tree, ".".join(parents)) if parents else tree
    if isinstance(node, dict):
        node.pop(last, None)


def policy_change(*, actor, policy_type: str, body, validate_only: bool = False) -> dict:
    """PATCH: `policy` merged into the unit's policy (created if it has none); `reset` clears the defaults and
    rules of the fields it lists (Run:ai's `<Type>PolicyChangeRequestV2`). The stored policy is read under its
    row's lock, so two concurrent changes both land (the second merges into the first); two first writes of a
    unit's policy race on its unique key and the loser is a 409."""
    _require_writer(actor)
    request_errors = _schema_errors(f"{schema.TYPES[policy_type]}PolicyChangeRequestV2", body)
    meta, change = _body_parts(body)
    unit = unit_from(meta)
    with transaction.atomic():
        current = _locked(policy_type, unit)
        merged = {"defaults": copy.deepcopy(current.defaults) if current else {},
                  "rules": copy.deepcopy(current.rules) if current else {},
                  "imposedAssets": list(current.imposed_assets) if current else []}
        for path in body.get("reset") or () if isinstance(body, Mapping) else ():
            if isinstance(path, str):
                _reset(merged["defaults"], path)
                _reset(merged["rules"], path)
        merged["defaults"] = _merge_patch(merged["defaults"], change.get("defaults") or {})
        merged["rules"] = _merge_patch(merged["rules"], change.get("rules") or {})
        if change.get("imposedAssets") is not None:
            merged["imposedAssets"] = change["imposedAssets"]
        return _save(actor=actor, policy_type=policy_type, unit=unit, existing=current, name=meta.get("name"),
                     policy=merged, validate_only=validate_only, request_errors=request_errors)


def policy_delete(*, actor, policy_type: str, unit: Unit) -> None:
    """The unit's own policy goes; the wider ones (and the built-in default) apply again. 404 if it has none."""
    _require_writer(actor)
    row = Policy.objects.filter(policy_type=policy_type, scope_key=unit.key).first()
    if row is None:
        raise Http404("This org unit has no policy of this type.")
    before = snapshot(row)
    with transaction.atomic():
        row.delete()
        audit_record(actor=actor, action=AuditEvent.Action.DELETE, instance=row, before=before)
        _after_change(unit)
