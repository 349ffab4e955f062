"""Policy pages: the list of policies per scope and type, the edit form (defaults and rules as JSON, each
problem shown at its field) and a project's effective policy. Platform admins only, except the effective view,
which a project's members may read as the API lets them. Thin: reads through selectors, writes through the
API's services."""

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from rest_framework.exceptions import ValidationError

from policies import form as policy_form
from policies import selectors, services
from policies.fallback import FALLBACK_LABEL
from policies.models import Policy
from policies.schema import TYPES
from policies.tables import PolicyTable, unit_of
from studio.errors import flatten_errors
from studio.ids import is_uuid
from studio.models import Department, Project, is_platform_admin
from studio.tables import bulk_run, bulk_target


def _admin_only(request):
    if not is_platform_admin(request.user):
        raise PermissionDenied


def _type(value) -> str:
    if value not in TYPES:
        raise Http404
    return value


def _unit_query(unit: selectors.Unit) -> str:
    query = f"scope={unit.scope}"
    if unit.department is not None and unit.scope == "department":
        query += f"&departmentId={unit.department.pk}"
    if unit.project is not None:
        query += f"&projectId={unit.project.pk}"
    return query


@login_required
def policy_list(request):
    _admin_only(request)
    table = PolicyTable(request, _stored())
    return render(request, "policies/list.html", {
        **table.context(), "types": list(TYPES), "fallback_label": FALLBACK_LABEL,
        "departments": Department.objects.all(), "projects": Project.objects.select_related("department"),
    })


def _stored():
    return Policy.objects.select_related("department", "project__department")


@login_required
def policy_export(request):
    _admin_only(request)
    try:
        return PolicyTable(request, _stored()).export()
    except ValidationError as exc:
        return JsonResponse(exc.detail, status=400)


@login_required
@require_POST
def policy_bulk(request):
    """Delete the selected policies, each through policies.services (the wider ones apply again)."""
    _admin_only(request)
    target = bulk_target(request, reverse("policy-list"))
    ids = [i for i in request.POST.getlist("ids") if is_uuid(i)]
    if request.POST.get("action") == "delete" and ids:
        rows = {str(row.pk): row for row in _stored().filter(pk__in=ids)}
        bulk_run(request, rows=rows, ids=ids, done_text="Deleted", nouns=("policy", "policies"),
                 problem=lambda exc: str(exc) if isinstance(exc, (ValidationError, Http404)) else None,
                 act=lambda row: services.policy_delete(actor=request.user, policy_type=row.policy_type,
                                                        unit=unit_of(row)))
    return HttpResponseRedirect(target)


def _shown(value) -> str:
    if isinstance(value, list):
        return ", ".join(str(item["value"]) if isinstance(item, dict) else str(item) for item in value) or "none"
    return json.dumps(value)


def _rule_rows(policy) -> list[tuple[str, str, str]]:
    """(field, "min 1, max 5", "tenant, project a") for each effective rule."""
    rows = []
    for path, rule in sorted(policy.rules.items()):
        shown = "; ".join(f"{attribute} {_shown(value)}" for attribute, value in rule.items())
        sources = sorted({layer.label for layer in policy.origins[path].values()})
        rows.append((path, shown, ", ".join(sources)))
    return rows


def _default_name(unit: selectors.Unit, policy_type: str) -> str:
    return f"{unit.label.replace(' ', '-')}-{policy_type}"


def _unit_meta(unit: selectors.Unit, name: str) -> dict:
    meta = {"scope": unit.scope, "name": name}
    if unit.project is not None:
        meta["projectId"] = unit.project.pk
    elif unit.department is not None:
        meta["departmentId"] = str(unit.department.pk)
    return meta


def _json_policy(values: dict, errors: dict) -> dict:
    policy = {}
    for key in ("defaults", "rules"):
        try:
            policy[key] = json.loads(values[key] or "{}")
        except ValueError as exc:
            errors.setdefault(key, []).append(f"Not valid JSON: {exc}.")
    return policy


@login_required
def policy_edit(request, policy_type):
    """The policy of one scope: a typed form generated from Run:ai's schema (policies.form), or, as an advanced
    view, its defaults and rules as JSON. Every problem the API finds is shown at once, each at its field."""
    _admin_only(request)
    policy_type = _type(policy_type)
    try:
        unit = services.unit_from(request.GET, prefix="")
    except ValidationError as exc:
        messages.error(request, "; ".join(e["message"] for e in flatten_errors(exc.detail)))
        return HttpResponseRedirect(reverse("policy-list"))
    rows = selectors.stored_chain(policy_type, unit)
    own = next((row for row in rows if row.scope_key == unit.key), None)
    stored = {"defaults": own.defaults if own else {}, "rules": own.rules if own else {}}
    mode = "json" if (request.POST if request.method == "POST" else request.GET).get("view") == "json" else "form"
    values = {"name": own.name if own else "", "defaults": json.dumps(stored["defaults"], indent=2),
              "rules": json.dumps(stored["rules"], indent=2),
              **policy_form.values_of(policy_type, stored["defaults"], stored["rules"])}
    errors: dict[str, list[str]] = {}
    lists = {field.path: field.rows(data=request.POST if request.method == "POST" else None,
                                    defaults=stored["defaults"]) for field in policy_form.list_fields(policy_type)}
    if request.method == "POST":
        values = {**values, **{key: value for key, value in request.POST.items() if key != "csrfmiddlewaretoken"}}
        if mode == "json":
            policy = _json_policy(values, errors)
        else:
            policy = policy_form.policy_of(policy_type, request.POST, lists=lists, **stored)
        if not errors:
            name = values.get("name") or (own.name if own else _default_name(unit, policy_type))
            try:
                services.policy_overwrite(actor=request.user, policy_type=policy_type,
                                          body={"meta": _unit_meta(unit, name), "policy": policy})
                messages.success(request, f"Saved the {policy_type[:-1]} policy of {unit.label}.")
                return HttpResponseRedirect(request.get_full_path())
            except ValidationError as exc:
                for error in flatten_errors(exc.detail):
                    if mode == "form" and _filed_on_row(lists.values(), error):
                        errors.setdefault(error["field"], []).append(error["message"])  # counted, shown on its row
                        continue
                    errors.setdefault(_error_key(policy_type, mode, error["field"]), []).append(
                        f"{error['field']}: {error['message']}")
    merged = selectors.effective_of(policy_type, rows)
    return render(request, "policies/edit.html", {
        "policy_type": policy_type, "unit": unit, "own": own, "values": values, "errors": errors, "mode": mode,
        "tri": policy_form.TRI,
        "sections": _sections_shown(policy_type, values, errors, lists) if mode == "form" else (),
        "form_errors": [m for key, found in errors.items() if key == "other" for m in found],
        "effective_rows": _rule_rows(merged), "effective_defaults": json.dumps(merged.defaults, indent=2),
        "query": _unit_query(unit), "default_name": _default_name(unit, policy_type),
    })


def _error_key(policy_type: str, mode: str, path: str) -> str:
    if mode == "form":
        if path.startswith("meta.name"):
            return "name"
        return policy_form.field_of(policy_type, path) or "other"
    return "defaults" if path.startswith("policy.defaults") else ("rules" if path.startswith("policy.rules") else "name")


def _filed_on_row(lists, error: dict) -> bool:
    """A default instance's problem (`policy.defaults.storage.pvc.instances[0].path`) on its row's cell."""
    path = error["field"].removeprefix("policy.defaults.")
    return path != error["field"] and any(rows.file(path, error["message"]) for rows in lists)


def _sections_shown(policy_type: str, values: dict, errors: dict, lists: dict) -> list[dict]:
    """Each section with its rows' cells (name, value, errors) and its list fields' default instances as rows; a
    section is open when it holds a value or an error, so what is set is seen at once."""
    shown = []
    for section in policy_form.sections(policy_type):
        own_lists = [lists[field.path] for field in policy_form.list_fields(policy_type)
                     if field.section == section.key]
        rows_shown, filled = [], any(rows.items() or any(r["errors"] or any(c["errors"] for c in r["cells"])
                                                          for r in rows.rows) for rows in own_lists)
        has_default = any(row.default_type for row in section.rows)
        columns = [a for a in policy_form.ORDER if any(a in row.attributes for row in section.rows)]
        for row in section.rows:
            default = None
            if row.default_type:
                name = row.default_name()
                default = {"name": name, "value": values.get(name, ""), "errors": errors.get(name, ()),
                           "type": row.default_type, "enum": row.enum}
            cells = {}
            for attribute in row.attributes:
                name = row.rule_name(attribute)
                cells[attribute] = {"name": name, "value": values.get(name, ""), "errors": errors.get(name, ()),
                                    "label": policy_form.ATTRIBUTE_LABELS[attribute], "kind": row.kind}
            filled = filled or bool(default and (default["value"] or default["errors"])) or any(
                c["value"] or c["errors"] for c in cells.values())
            rows_shown.append({"row": row, "default": default,
                               "cells": [cells.get(attribute) for attribute in columns]})
        shown.append({"section": section, "rows": rows_shown, "open": filled, "has_default": has_default,
                      "lists": own_lists,
                      "columns": [policy_form.ATTRIBUTE_LABELS[a] for a in columns]})
    return shown


@login_required
@require_POST
def policy_remove(request, policy_type):
    _admin_only(request)
    policy_type = _type(policy_type)
    unit = services.unit_from(request.GET, prefix="")
    services.policy_delete(actor=request.user, policy_type=policy_type, unit=unit)
    messages.success(request, f"Deleted the {policy_type[:-1]} policy of {unit.label}; the wider ones apply.")
    return HttpResponseRedirect(reverse("policy-list"))


@login_required
def project_effective(request, pk):
    project = get_object_or_404(Project.objects.visible_to(request.user).select_related("department"), pk=pk)
    sections = []
    for policy_type in TYPES:
        merged = selectors.effective_for_project(policy_type, project)
        sections.append((policy_type, _rule_rows(merged), json.dumps(merged.defaults, indent=2)))
    return render(request, "policies/effective.html", {
        "project": project, "sections": sections, "is_admin": is_platform_admin(request.user),
        "level": selectors.project_security_labels(project)["pod-security.kubernetes.io/enforce"],
    })
