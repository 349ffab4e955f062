"""Workload pages: the list with live phase badges, the detail page, and suspend / resume / delete."""

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from rest_framework.exceptions import ValidationError

from studio.errors import flatten_errors
from studio.models import Membership
from studio.permissions import has_project_role
from workloads import services
from workloads.filtersets import WorkloadFilterSet
from workloads.models import Workload

PAGE_SIZE = 50
TRANSITIONAL = {"Creating", "Pending", "Initializing", "Resuming", "Stopping", "Deleting", "Unknown"}


def _visible(request):
    return Workload.objects.visible_to(request.user).select_related("project")


@login_required
def workload_list(request):
    filterset = WorkloadFilterSet(request.GET, queryset=_visible(request), request=request)
    errors = []
    try:
        rows = list(filterset.qs[:PAGE_SIZE]) if filterset.is_valid() else []
        errors = [f"{k}: {' '.join(v)}" for k, v in filterset.errors.items()]
    except ValidationError as exc:
        rows, errors = [], [f"{e['field']}: {e['message']}" for e in flatten_errors(exc.detail)]
    context = {
        "workloads": rows, "filters": request.GET, "errors": errors,
        "kinds": Workload.Kind.choices, "phases": Workload.Phase.choices,
        "live": any(w.actual_phase in TRANSITIONAL for w in rows),
    }
    template = "workloads/_rows.html" if request.htmx else "workloads/list.html"
    return render(request, template, context)


def _workload(request, workload_id) -> Workload:
    return get_object_or_404(_visible(request).live(), pk=workload_id)


@login_required
def workload_detail(request, workload_id):
    workload = _workload(request, workload_id)
    context = {
        "workload": workload,
        "spec_json": json.dumps(workload.spec, indent=2),
        "events": workload.events.order_by("-at", "-id")[:100],
        "pods": workload.pods.all(),
        "can_change": has_project_role(request.user, workload.project_id, Membership.Role.MEMBER),
        "live": workload.actual_phase in TRANSITIONAL,
        "suspendable": workload.kind in (Workload.Kind.TRAINING, Workload.Kind.WORKSPACE),
    }
    if request.htmx and request.GET.get("part") == "status":
        return render(request, "workloads/_status.html", context)
    return render(request, "workloads/detail.html", context)


def _act(request, workload_id, service, done: str, *, redirect_to_list=False):
    workload = _workload(request, workload_id)
    try:
        service(workload=workload, user=request.user)
        messages.success(request, done.format(name=workload.name))
    except ValidationError as exc:
        messages.error(request, " ".join(e["message"] for e in flatten_errors(exc.detail)))
    except PermissionDenied as exc:
        messages.error(request, str(exc) or "You may not change this workload.")
    target = reverse("workload-list") if redirect_to_list else reverse("workload-detail", args=[workload.pk])
    return HttpResponseRedirect(target)


@login_required
@require_POST
def workload_suspend(request, workload_id):
    return _act(request, workload_id, services.workload_suspend, "Suspending {name}.")


@login_required
@require_POST
def workload_resume(request, workload_id):
    return _act(request, workload_id, services.workload_resume, "Resuming {name}.")


@login_required
@require_POST
def workload_delete(request, workload_id):
    return _act(request, workload_id, services.workload_delete, "Deleting {name}.", redirect_to_list=True)
