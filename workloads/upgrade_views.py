"""The workload page's upgrade panel (workloads.launch.upgrades), loaded by htmx into templates/workloads/detail.html: the
"Outdated" badge and the diff; "Preview upgrade" shows the cluster's verdicts (nothing changed); "Upgrade"
rolls it and returns to the page with a message."""

import json

import yaml
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from rest_framework.exceptions import APIException

from studio.errors import flatten_errors
from studio.iam.permissions import has_project_role
from studio.models import Level
from workloads.launch import upgrades
from workloads.models import Workload


def _problems(exc: APIException) -> list[str]:
    detail = exc.detail
    if isinstance(detail, (dict, list)):
        return [f"{e['field']}: {e['message']}" if e["field"] else e["message"] for e in flatten_errors(detail)]
    return [str(detail)]


@login_required
def upgrade_panel(request, workload_id):
    workload = get_object_or_404(Workload.objects.visible_to(request.user).live().select_related(
        "project", "cluster"), pk=workload_id)
    status = upgrades.upgrade_status(workload)
    if not status["outdated"]:
        return HttpResponse("")
    can_change = has_project_role(request.user, workload.project_id, Level.MEMBER)
    context = {"workload": workload, "status": status, "can_change": can_change, "changes": None,
               "problems": [], "preview": None}
    if request.method == "POST" and not can_change:
        return HttpResponse("Viewers may not upgrade workloads.", status=403)
    action = request.POST.get("action") if request.method == "POST" else None
    try:
        if action == "upgrade":
            upgrades.workload_upgrade(workload=workload, user=request.user)
            messages.success(request, f"Upgrading {workload.name} to revision {status['toRevision']}.")
            response = HttpResponse(status=204)
            response["HX-Redirect"] = reverse("workload-detail", args=[workload.pk])
            return response
        if action == "preview":
            preview = upgrades.upgrade_preview(workload=workload, user=request.user)
            for obj in preview["objects"]:
                obj["yaml"] = yaml.safe_dump(obj["manifest"], sort_keys=False)
            context["preview"] = preview
            context["changes"] = preview["changes"]
        elif can_change and status["upgradable"]:
            context["changes"] = upgrades.upgrade_preview_changes(workload=workload, user=request.user)
    except APIException as exc:
        context["problems"] = _problems(exc)
    for change in context["changes"] or []:
        change["from_text"], change["to_text"] = (json.dumps(change["from"]), json.dumps(change["to"]))
    return render(request, "profiles/_upgrade.html", context)
