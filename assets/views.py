"""The asset pages: a list per family (environments, compute resources, data sources, credentials) as the table
component, and each kind's typed form to create, edit and delete an asset. Thin: reads start from
`Asset.objects.visible_to(user)` (outside it, a 404); writes are the API's services (assets/services.py), so the
rules, the roles (assets/access.py: a button a role may not use is not offered, a POST of it is a 403) and the
error messages are the API's."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import Http404, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.exceptions import PermissionDenied as DRFPermissionDenied

from assets import access, services
from assets.forms import FAMILIES, FAMILY_OF, KIND_LABELS, AssetForm, scope_choices
from assets.models import Asset, Scope
from assets.specs import REFERENCES
from assets.tables import AssetTable, scope_text, summary_text, usage_text
from studio.errors import flatten_errors
from studio.ids import is_uuid
from studio.models import Cluster, Department, Project
from studio.tables import bulk_run, bulk_target


def _family(family: str) -> tuple[str, tuple]:
    if family not in FAMILIES:
        raise Http404
    return FAMILIES[family]


def _rows(request, kinds):
    return (Asset.objects.visible_to(request.user).filter(kind__in=kinds)
            .select_related("project", "department", "cluster").prefetch_related("uses"))


def _table(request, family: str):
    label, kinds = _family(family)
    table = AssetTable(request, _rows(request, kinds), family=family, label=label, many_kinds=len(kinds) > 1)
    if not access.manages_any(request.user, kinds):
        table.bulk_actions = ()
    return table, label, kinds


@login_required
def asset_list(request, family):
    table, label, kinds = _table(request, family)
    context = table.context()
    view = "table" if request.GET.get("view") == "table" else "cards"
    cards = [{"asset": a, "kind": KIND_LABELS[a.kind], "scope": scope_text(a), "summary": summary_text(a),
              "uses": list(a.uses.all()), "manages": access.manages(request.user, a)}
             for a in getattr(table, "page_rows", [])]
    chosen = request.GET.getlist("filterBy")
    return render(request, "assets/list.html", {
        **context, "family": family, "label": label, "families": FAMILIES, "view": view, "cards": cards,
        "scopes": [(value, f"scope=={value}" in chosen) for value in Scope.values],
        "chosen_kinds": [c.removeprefix("kind==") for c in chosen if c.startswith("kind==")],
        "kinds": [(kind, KIND_LABELS[kind]) for kind in kinds],
        "may_create": access.manages_any(request.user, kinds),
        "empty_icon": "box", "empty_title": f"No {label.lower()} yet",
        "empty_text": f"{label} are reusable parts of a workload, shared with a scope.",
    })


@login_required
def asset_export(request, family):
    table, _, _ = _table(request, family)
    try:
        return table.export()
    except ValidationError as exc:
        return JsonResponse(exc.detail, status=400)


@login_required
@require_POST
def asset_bulk(request, family):
    """Delete the chosen assets, each through assets.services.asset_delete: a refused one (in use, not the
    user's to manage) is named with its reason."""
    _, kinds = _family(family)
    target = bulk_target(request, reverse("asset-list", args=[family]))
    ids = [i for i in request.POST.getlist("ids") if is_uuid(i)]
    if request.POST.get("action") == "delete" and ids:
        rows = {str(a.pk): a for a in _rows(request, kinds).filter(pk__in=ids)}
        bulk_run(request, rows=rows, ids=ids, done_text="Deleted", nouns=("asset", "assets"),
                 problem=lambda exc: _problem(exc), label=lambda a: a.name,
                 act=lambda a: services.asset_delete(actor=request.user, asset=a))
    return HttpResponseRedirect(target)


def _problem(exc) -> str | None:
    if isinstance(exc, APIException):
        detail = exc.detail
        return detail if isinstance(detail, str) else "; ".join(e["message"] for e in flatten_errors(detail))
    return None


def _units(user) -> list[tuple[str, str, dict]]:
    """Every scope the user sees, as (choice key, label, the asset's scope fields)."""
    units = [("tenant", "Tenant: everyone", {"scope": Scope.TENANT})]
    units += [(f"cluster:{c.pk}", f"Cluster {c.name}", {"scope": Scope.CLUSTER, "cluster": c})
              for c in Cluster.objects.visible_to(user).order_by("name")]
    units += [(f"department:{d.pk}", f"Department {d.name}", {"scope": Scope.DEPARTMENT, "department": d,
                                                               "cluster": d.cluster})
              for d in Department.objects.visible_to(user).select_related("cluster").order_by("name")]
    for p in Project.objects.visible_to(user).select_related("department", "cluster").order_by("name"):
        fields = {"scope": Scope.PROJECT, "project": p, "department": p.department, "cluster": p.cluster}
        units.append((f"project:{p.pk}", f"Project {p.name}", fields))
        units.append((f"project:{p.pk}:private", f"Project {p.name}, private to me",
                      {**fields, "private": True, "created_by": user}))
    return units


def _references(user, kind: str) -> dict:
    """The assets each reference field of `kind` may name (those the user sees of the kinds that fit)."""
    found = {}
    for (owner, field), kinds in REFERENCES.items():
        if owner == kind:
            rows = Asset.objects.visible_to(user).filter(kind__in=kinds).select_related("project", "department",
                                                                                        "cluster")
            found[(owner, field)] = [(str(a.pk), f"{a.name} ({KIND_LABELS[a.kind]}, {scope_text(a)})") for a in rows]
    return found


class _ReadProblems(Exception):
    """The service accepted a body the form could not fully read: undone, and the form's problems shown."""


def _save(form: AssetForm, write) -> bool:
    """Call the service with the form's body; its problems and the form's own (bad JSON, a bad KEY=value line)
    filed on their fields, all at once. A body with problems of the form's own is written in a transaction that
    is undone, so that the service still names every other problem."""
    body = form.body()
    try:
        with transaction.atomic():
            write(body)
            if form.local_problems:
                raise _ReadProblems
        return True
    except _ReadProblems:
        pass
    except ValidationError as exc:
        for error in flatten_errors(exc.detail):
            form.file(error["field"], error["message"])
    except DRFPermissionDenied as exc:
        form.add_error(None, str(exc.detail))
    except APIException as exc:  # a taken name: 409
        form.add_error("name", str(exc.detail))
    for path, message in form.local_problems:
        form.file(path, message)
    return False


@login_required
def asset_new(request, family, kind):
    label, kinds = _family(family)
    if kind not in kinds:
        raise Http404
    scopes = scope_choices(request.user, kind, units=_units(request.user))
    if not scopes:
        raise PermissionDenied(access.REFUSED.format(kind=kind))
    form = AssetForm(request.POST or None, kind=kind, scopes=scopes, references=_references(request.user, kind))
    if request.method == "POST" and form.is_valid():
        created = []

        def write(body):
            created.append(services.asset_create(actor=request.user, kind=kind, body=body))

        if _save(form, write):
            messages.success(request, f"Created the {KIND_LABELS[kind].lower()} {created[0].name}.")
            return HttpResponseRedirect(reverse("asset-list", args=[family]))
    return render(request, "assets/form.html", {"form": form, "family": family, "label": label, "kind": kind,
                                                "kind_label": KIND_LABELS[kind], "asset": None})


def _visible(request, asset_id) -> Asset:
    asset = None
    if is_uuid(str(asset_id)):
        asset = (Asset.objects.visible_to(request.user).select_related("project", "department", "cluster")
                 .prefetch_related("uses").filter(pk=asset_id).first())
    if asset is None:
        raise Http404
    return asset


@login_required
def asset_edit(request, asset_id):
    """An asset's page: its scope, usage and fields; the form to change it for those who manage it (a POST by
    anyone else is a 403, as the API's PUT)."""
    asset = _visible(request, asset_id)
    family = FAMILY_OF[asset.kind]
    label, _ = FAMILIES[family]
    manages = access.manages(request.user, asset)
    form = AssetForm(request.POST if request.method == "POST" else None, kind=asset.kind, asset=asset,
                     references=_references(request.user, asset.kind))
    if request.method == "POST":
        if not manages:
            raise PermissionDenied(access.REFUSED.format(kind=asset.kind))
        if form.is_valid() and _save(form, lambda body: services.asset_update(actor=request.user, asset=asset,
                                                                              body=body)):
            messages.success(request, f"Saved the {KIND_LABELS[asset.kind].lower()} {asset.name}.")
            return HttpResponseRedirect(reverse("asset-list", args=[family]))
    return render(request, "assets/form.html", {
        "form": form, "family": family, "label": label, "kind": asset.kind, "kind_label": KIND_LABELS[asset.kind],
        "asset": asset, "manages": manages, "scope": scope_text(asset), "usage": usage_text(asset),
        "summary": summary_text(asset), "uses": list(asset.uses.all()),
    })


@login_required
@require_POST
def asset_delete(request, asset_id):
    asset = _visible(request, asset_id)
    family = FAMILY_OF[asset.kind]
    try:
        services.asset_delete(actor=request.user, asset=asset)
    except DRFPermissionDenied as exc:
        raise PermissionDenied(str(exc.detail)) from exc
    except APIException as exc:  # in use: 409 naming what uses it
        messages.error(request, f"Refused — {asset.name}: {exc.detail}")
        return HttpResponseRedirect(reverse("asset-edit", args=[asset.pk]))
    messages.success(request, f"Deleted the {KIND_LABELS[asset.kind].lower()} {asset.name}.")
    return HttpResponseRedirect(reverse("asset-list", args=[family]))
