"""Workload pages: the list with live phase badges, the detail page, and suspend / resume / delete."""

import json
from urllib.parse import urlsplit

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST
from rest_framework.exceptions import APIException, NotFound, ValidationError

from studio.audit_words import history_of
from studio.context import navigation
from studio.errors import flatten_errors
from studio.iam.permissions import has_project_role
from studio.ids import is_uuid
from studio.models import Level
from studio.pages import selected_filters
from workloads import services
from workloads.api import pod_logs, streams
from workloads.cluster import log_capture, reclaim
from workloads.cluster.replicas import replicas_by_role
from workloads.models import Workload
from workloads.services import SUSPENDABLE
from workloads.tables import WorkloadTable
from workloads.telemetry.metrics import MetricsQuerySerializer, gpu_series

# Phases after which nothing changes by itself: pages stop polling a workload there.
SETTLED = set(Workload.FINISHED)


def _visible(request):
    return Workload.objects.visible_to(request.user).select_related("project")


def _listed(request):
    """The workloads the list shows: the project chosen in the top bar, unless the user asks for every project
    they see (?scope=all); (queryset, that project or None, whether a project is chosen)."""
    current = navigation(request).get("current_project")
    every = request.GET.get("scope") == "all" or current is None
    visible = _visible(request).select_related("cluster", "department")
    return (visible if every else visible.filter(project=current)), (None if every else current), current is not None


@login_required
def workload_list(request):
    """The list as the table component (workloads.tables), filtered and sorted by the API's FilterSet; its rows
    re-read every 2 s."""
    queryset, scope_project, can_scope = _listed(request)
    table = WorkloadTable(request, queryset)
    context = {
        **table.context(), "scope_project": scope_project, "can_scope": can_scope, "filters": request.GET,
        "kinds": Workload.Kind.choices, "phases": Workload.Phase.choices,
        "chosen_kinds": selected_filters(request, "type"), "chosen_phases": selected_filters(request, "phase"),
        "may_launch": table.acting is None or bool(table.acting),  # a viewer of every project launches nothing
    }
    template = "workloads/_rows.html" if request.htmx else "workloads/list.html"
    return render(request, template, context)


@login_required
def workload_export(request):
    """The filtered list (every page, the columns chosen) as CSV: the same FilterSet and visible workloads."""
    queryset, _, _ = _listed(request)
    try:
        return WorkloadTable(request, queryset).export()
    except ValidationError as exc:
        return JsonResponse(exc.detail, status=400)


BULK = {"suspend": (services.workload_suspend, "Suspending"), "resume": (services.workload_resume, "Resuming"),
        "delete": (services.workload_delete, "Deleting")}


@login_required
@require_POST
def workload_bulk(request):
    """Suspend, resume or delete the selected workloads, each through the same service (and its permission and
    state checks) as the single action; what was refused is reported row by row."""
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}) or not target.startswith("/"):
        target = reverse("workload-list")
    action = BULK.get(request.POST.get("action", ""))
    ids = request.POST.getlist("ids")
    if action is None or not ids:
        messages.error(request, "Choose workloads and an action (suspend, resume or delete).")
        return HttpResponseRedirect(target)
    service, doing = action
    found = {str(w.pk): w for w in _visible(request).live().filter(pk__in=[i for i in ids if is_uuid(i)])}
    done, refused = [], []
    for workload_id in dict.fromkeys(ids):
        workload = found.get(workload_id)
        if workload is None:
            refused.append(f"{workload_id}: not found (deleted, or not yours to see).")
            continue
        try:
            service(workload=workload, user=request.user)
            done.append(workload.name)
        except ValidationError as exc:
            refused.append(f"{workload.name}: " + " ".join(e["message"] for e in flatten_errors(exc.detail)))
        except PermissionDenied as exc:
            refused.append(f"{workload.name}: {exc or 'You may not change this workload.'}")
    if done:
        messages.success(request, f"{doing} {len(done)} workload{pluralize(len(done))}: {', '.join(done)}.")
    for problem in refused:
        messages.error(request, f"Refused — {problem}")
    return HttpResponseRedirect(target)


def _workload(request, workload_id) -> Workload:
    return get_object_or_404(_visible(request).live(), pk=workload_id)


def _connect(workload) -> dict:
    """The tool's URL as a Connect button once the workload runs; a cluster-internal address (a Service's DNS name
    with no Ingress) is shown as such instead, since a browser outside the cluster cannot open it."""
    endpoints = workload.endpoints or {}
    url = endpoints.get("url") or ""
    host = urlsplit(url).hostname or ""
    internal = host.endswith(".svc.cluster.local") or host.endswith(".svc")
    running = workload.actual_phase == Workload.Phase.RUNNING
    return {"connect_url": url if url and running and not internal else "",
            "internal_url": url if internal else "", "routes": endpoints.get("ports") or [],
            "route_address": endpoints.get("serviceAddress") or "", "route_type": endpoints.get("serviceType") or ""}


@login_required
def workload_detail(request, workload_id):
    """The page; with ?part=live (htmx, every 2 s until the workload settles) only its status, actions, pods and
    timeline, so that a page left open follows the workload to Completed and offers only what still applies."""
    try:
        workload = _workload(request, workload_id)
    except Http404:
        if request.htmx:
            return HttpResponse(status=286)  # htmx: stop polling, the workload is gone
        raise
    pods = list(workload.pods.all())
    live_names = {p.name for p in pods}
    context = {
        # pods gone, their last lines kept: offered in the log panel after the live ones
        "captured_pods": [c for c in workload.log_captures.only("pod_name", "captured_at", "reason", "workload_id")
                          if c.pod_name not in live_names],
        "workload": workload,
        "spec_json": json.dumps(workload.spec, indent=2),
        "events": workload.events.order_by("-at", "-id")[:100],
        "pods": pods,
        "can_change": has_project_role(request.user, workload.project_id, Level.MEMBER),
        # as the exec endpoint decides (workloads.api.streams): members, the project's admins, platform admins
        "can_exec": streams.may_open_session(user=request.user, workload=workload),
        # as the logs API decides (workloads.api.pod_logs): every role of the project, platform admins
        "can_read_logs": pod_logs.may_read_logs(workload=workload, user=request.user),
        "metric_ranges": METRIC_RANGES, "metrics_range": metrics_range(workload),
        "live": workload.actual_phase not in SETTLED,
        "suspendable": workload.kind in SUSPENDABLE,
        "replicas": replicas_by_role(workload, pods) if workload.kind == Workload.Kind.DISTRIBUTED else None,
        "starting": workload.actual_phase in ("Creating", "Pending", "Initializing", "Resuming", "Stopping"),
        "reclaimed": reclaim.last_reclaim(workload),
        **_connect(workload),  # suspended by the platform: say why, next to Resume
    }
    if request.htmx and request.GET.get("part") == "live":
        return render(request, "workloads/_live.html", context)
    return render(request, "workloads/detail.html", {**context, "history": history_of(workload)})


# The metrics panel's windows (seconds, label); it opens on the first that holds the workload's whole life.
METRIC_RANGES = ((900, "15 min"), (3600, "1 h"), (21600, "6 h"), (86400, "24 h"), (604800, "7 d"))


def metrics_range(workload) -> int:
    """The smallest window that reaches back to when the workload was made (7 days at most): a minute-old job
    opens on 15 minutes, a two-day-old one on 7 days."""
    age = (timezone.now() - workload.created_at).total_seconds()
    return next((seconds for seconds, _ in METRIC_RANGES if seconds >= age), METRIC_RANGES[-1][0])


@login_required
def workload_logs(request, workload_id):
    """The last lines of one pod's log as text, for the logs panel, through the logs API's own functions (who may
    read, what the cluster's refusals mean). A refusal is a note for the panel (status 200, X-Log-Problem), not a
    failed request: a pod that has not started or is gone is an ordinary moment of a workload's life."""
    workload = _workload(request, workload_id)
    name = request.GET.get("pod", "")
    pod = workload.pods.filter(name=name).first()
    asked = {"tailLines": request.GET.get("tailLines", "500"),
             **{flag: "true" for flag in ("timestamps", "previous") if request.GET.get(flag) == "true"}}
    query = pod_logs.LogQuerySerializer(data=asked)
    try:
        pod_logs.check_may_read_logs(workload=workload, user=request.user)
        query.is_valid(raise_exception=True)
        if pod is None:
            return _captured_log(request, workload, name, query.validated_data) or _log_problem(
                "That pod is gone (replaced or stopped) and no lines of it were kept; choose another.")
        text = pod_logs.pod_log(workload=workload, pod=pod, query=query.validated_data)
    except APIException as exc:
        kept = _captured_log(request, workload, name, query.validated_data) if isinstance(exc, NotFound) else None
        if kept is not None:  # gone from the cluster before the sync noticed: its kept lines
            return kept
        detail = exc.detail
        return _log_problem(" ".join(e["message"] for e in flatten_errors(detail))
                            if isinstance(detail, (dict, list)) else str(detail))
    return _log_response(request, text, name, previous="previous" in asked)


def _captured_log(request, workload, pod_name: str, query: dict) -> HttpResponse | None:
    """The last lines kept of a pod that is gone (workloads.cluster.log_capture), saying when they were captured;
    None when none were kept."""
    capture = workload.log_captures.filter(pod_name=pod_name).first()
    if capture is None:
        return None
    if query.get("previous"):
        return _log_problem("The pod is gone: only the last lines of its last container were kept.")
    text = log_capture.captured_text(capture, tail_lines=query.get("tailLines", 500),
                                     timestamps=bool(query.get("timestamps")))
    response = _log_response(request, text, pod_name, previous=False)
    response["X-Log-Note"] = log_capture.capture_note(capture)
    response["X-Log-Captured-At"] = capture.captured_at.isoformat()
    return response


def _log_response(request, text: str, pod_name: str, *, previous: bool) -> HttpResponse:
    response = HttpResponse(text, content_type="text/plain; charset=utf-8")
    if request.GET.get("download") == "true":  # the panel's Download: the lines shown, as a file
        suffix = "-previous" if previous else ""
        response["Content-Disposition"] = f'attachment; filename="{pod_name}{suffix}.log"'
    return response


def _log_problem(message: str) -> HttpResponse:
    response = HttpResponse(message, content_type="text/plain; charset=utf-8")
    response["X-Log-Problem"] = "1"
    return response


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


@login_required
def workload_gpu_series(request, workload_id):
    """The per-GPU chart's JSON: each pod's GPUs (gone pods included), as the metrics API's measurements; a bad
    query is a JSON 400 naming each problem."""
    workload = _workload(request, workload_id)
    query = MetricsQuerySerializer(data={**request.GET.dict(), "metricType": ["GPU_UTILIZATION"]},
                                   allowed_types=("GPU_UTILIZATION",))
    if not query.is_valid():
        return JsonResponse(query.errors, status=400)
    data = query.validated_data
    return JsonResponse({"measurements": gpu_series(workload, start=data["start"], end=data["end"],
                                                    samples=data["numberOfSamples"])})
