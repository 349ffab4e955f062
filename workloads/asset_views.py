"""The New workload page, as Run:ai's: a workload made of assets — an environment, a compute resource, data
sources and credentials chosen as cards among those the project may use —, a name and a project; Preview shows
what would be created (the launch preview of profiles, nothing created), Submit goes through the workloads API's
service. Every problem is shown at once beside the choice it concerns. Thin: workloads.launch.assets does it."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError as DjangoValidationError
from django.shortcuts import redirect, render
from rest_framework.exceptions import APIException, PermissionDenied
from rest_framework.exceptions import ValidationError as DRFValidationError

from assets.forms import KIND_LABELS
from assets.tables import scope_text, sku_text, summary_text
from assets.template_selectors import reaches_project, template_visible
from studio.context import navigation
from studio.errors import flatten_errors
from studio.iam.permissions import has_project_role
from studio.models import Level, Project
from workloads.launch import assets as from_assets
from workloads.launch_views import _preview_shown
from workloads.specs import NAME_RULE_MESSAGE, is_valid_name

FIELDS = ("kind", "name", "project", "environment", "compute", "datasources", "credentials")


def _field_of(path: str) -> str:
    """Which choice of the page a problem of the request (`spec.compute.gpuPortionRequest`) concerns."""
    if path in ("name", "useGivenNameAsPrefix"):
        return "name"
    if path in ("projectId", "clusterId"):
        return "project"
    if path == "templateId":
        return "template"
    for prefix, field in (("spec.compute", "compute"), ("spec.storage", "datasources"),
                          ("spec.imagePullSecrets", "credentials")):
        if path.startswith(prefix):
            return field
    return "environment"


def _card(asset, chosen) -> dict:
    return {"asset": asset, "id": str(asset.pk), "kind": KIND_LABELS[asset.kind], "scope": scope_text(asset),
            "summary": sku_text(asset.spec or {}) if asset.kind == "compute" else summary_text(asset),
            "chosen": str(asset.pk) in chosen}


@login_required
def workload_new(request):
    data = request.POST if request.method == "POST" else request.GET
    projects = [p for p in Project.objects.visible_to(request.user).select_related("cluster").order_by("name")
                if has_project_role(request.user, p, Level.MEMBER)]
    current = navigation(request).get("current_project")
    wanted = data.get("project") or (str(current.pk) if current else "")
    project = next((p for p in projects if str(p.pk) == wanted), projects[0] if projects and not data.get("project")
                   else None)
    kind = data.get("kind") or "workspace"
    errors: dict[str, list[str]] = {}
    if kind not in from_assets.KINDS:
        errors["kind"] = [f"Must be one of {', '.join(from_assets.KINDS)}."]
        kind = "workspace"
    usable = from_assets.usable_assets(user=request.user, project=project, kind=kind) if project else {
        "environments": [], "computes": [], "datasources": [], "credentials": []}
    chosen = {"environment": data.get("environment", ""), "compute": data.get("compute", ""),
              "datasources": data.getlist("datasources"), "credentials": data.getlist("credentials")}
    # From the catalog's templates: the template's assets chosen (until the user chooses), its own fields applied
    template = template_visible(request.user, data.get("template")) if data.get("template") else None
    if data.get("template") and (template is None or (project is not None and not reaches_project(template, project))):
        errors["template"] = ["No such template for this project."]
        template = None
    if template is not None and request.method == "GET" and not chosen["environment"]:
        chosen.update(from_assets.template_choices(template))
    chosen_ids = {chosen["environment"], chosen["compute"], *chosen["datasources"], *chosen["credentials"]}
    preview = None
    if request.method == "POST" and request.POST.get("action") in ("preview", "submit"):
        name = request.POST.get("name", "").strip()
        if project is None:
            errors["project"] = ["Choose a project where you may submit workloads."]
        picked = _picked(usable, chosen, errors)
        if not name:
            errors.setdefault("name", []).append("This field is required.")
        elif not is_valid_name(name):
            errors.setdefault("name", []).append(NAME_RULE_MESSAGE)
        if not errors:
            preview, workload = _run(request, kind=kind, name=name, project=project, picked=picked, errors=errors,
                                     template=template)
            if workload is not None:
                messages.success(request, f"Submitted {workload.name} made of {picked['environment'].name}.")
                return redirect("workload-detail", workload.pk)
    context = {
        "projects": projects, "project": project, "kind": kind, "kinds": from_assets.KINDS,
        "name": data.get("name", ""), "errors": errors, "error_count": sum(len(v) for v in errors.values()),
        "preview": preview, "chosen": chosen, "template": template,
        "environments": [_card(a, chosen_ids) for a in usable["environments"]],
        "computes": [_card(a, chosen_ids) for a in usable["computes"]],
        "datasources": [_card(a, chosen_ids) for a in usable["datasources"]],
        "credentials": [_card(a, chosen_ids) for a in usable["credentials"]],
    }
    return render(request, "workloads/new.html", context)


def _picked(usable: dict, chosen: dict, errors: dict) -> dict:
    by_id = {str(a.pk): a for family in usable.values() for a in family}
    environment = by_id.get(chosen["environment"]) if chosen["environment"] in {
        str(a.pk) for a in usable["environments"]} else None
    compute = by_id.get(chosen["compute"]) if chosen["compute"] in {str(a.pk) for a in usable["computes"]} else None
    if environment is None:
        errors["environment"] = ["Choose an environment the project may use." if chosen["environment"]
                                 else "Choose an environment."]
    if compute is None:
        errors["compute"] = ["Choose a compute resource the project may use." if chosen["compute"]
                             else "Choose a compute resource."]
    picked = {"environment": environment, "compute": compute, "datasources": [], "credentials": []}
    for field, family in (("datasources", "datasources"), ("credentials", "credentials")):
        allowed = {str(a.pk) for a in usable[family]}
        for value in chosen[field]:
            if value in allowed:
                picked[field].append(by_id[value])
            else:
                errors.setdefault(field, []).append(f"{value}: not one the project may use.")
    return picked


def _run(request, *, kind, name, project, picked, errors, template=None):
    """Preview or submit; the request's problems filed on the choices they concern."""
    used = [picked["environment"], picked["compute"], *picked["datasources"], *picked["credentials"]]
    referenced = from_assets.referenced_credentials(user=request.user, assets=used)
    body = from_assets.assets_body(kind=kind, name=name, project=project, environment=picked["environment"],
                                   compute=picked["compute"], datasources=picked["datasources"],
                                   credentials=picked["credentials"], referenced=referenced, template=template)
    try:
        if request.POST.get("action") == "preview":
            return _preview_shown(from_assets.assets_preview(kind=kind, body=body, user=request.user)), None
        return None, from_assets.assets_submit(kind=kind, body=body, user=request.user, used=used)
    except DRFValidationError as exc:
        for error in flatten_errors(exc.detail):
            path = error["field"]
            shown = path.removeprefix("spec.") if path.startswith("spec.") else ""
            errors.setdefault(_field_of(path), []).append(f"{shown}: {error['message']}" if shown else
                                                          error["message"])
    except DjangoValidationError as exc:
        for field, found in exc.message_dict.items():
            errors.setdefault(_field_of(field), []).extend(found)
    except PermissionDenied as exc:
        errors.setdefault("project", []).append(str(exc.detail))
    except APIException as exc:  # a taken name: 409
        errors.setdefault("name", []).append(str(exc.detail))
    return None, None
