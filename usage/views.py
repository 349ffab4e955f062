"""Pages of the usage app: the GPU trends (a fragment the GPU overview, node pool, project and department pages
load with htmx), the Usage page (GPU-hours and cost per project) and the Reports page (platform admins, as the
Reports API)."""

from datetime import timedelta

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from studio.models import Cluster, Department, NodePool, Project, is_platform_admin
from usage import services
from usage.costs import project_usage
from usage.forms import API_FIELDS, ReportRequestForm
from usage.models import Report
from usage.serializers import ReportRequestSerializer
from usage.trends import DEFAULT_RANGE, RANGE_LABELS, RANGES, Scope, gpu_trend

REPORTS_SHOWN = 50
USAGE_BY = {"project": "Project", "department": "Department", "user": "User"}
USAGE_RANGES = {"7d": timedelta(days=7), "30d": timedelta(days=30), "90d": timedelta(days=90)}


def _range(request) -> str:
    value = request.GET.get("range", DEFAULT_RANGE)
    return value if value in RANGES else DEFAULT_RANGE


def _visible_projects(user, **filters) -> frozenset | None:
    """None for platform admins (every project, those deleted since included); else the ids the user sees."""
    if is_platform_admin(user):
        return None
    return frozenset(Project.objects.visible_to(user).filter(**filters).values_list("pk", flat=True))


@login_required
def trend(request, scope: str, pk=None, name: str = ""):
    """The trend card of one scope: `overview` (every cluster the user sees), `pool` (a cluster's node pool),
    `project`, `department`. Platform admins see all usage; others the usage of the projects they see."""
    user = request.user
    if scope == "overview":
        target, title = Scope(project_ids=_visible_projects(user)), "All clusters"
    elif scope == "pool":
        cluster = get_object_or_404(Cluster.objects.visible_to(user), pk=pk)
        # a pool the cluster reports but PaaS Studio has no row of has a history all the same (by name)
        pool = NodePool.objects.filter(cluster=cluster, name=name).first()
        target = Scope(project_ids=_visible_projects(user, cluster=cluster), cluster_ids=frozenset([cluster.pk]),
                       node_pool=name, pool_is_default=bool(pool and pool.is_default))
        title = f"Node pool {name}"
    elif scope == "project":
        project = get_object_or_404(Project.objects.visible_to(user), pk=pk)
        target, title = Scope(project_ids=frozenset([project.pk])), f"Project {project.name}"
    elif scope == "department":
        department = get_object_or_404(Department.objects.visible_to(user), pk=pk)
        target = Scope(department_id=department.pk, project_ids=_visible_projects(user, department=department))
        title = f"Department {department.name}"
    else:
        raise Http404
    range_key = _range(request)
    data = gpu_trend(scope=target, range_key=range_key)
    own_only = target.project_ids is not None and scope != "project"
    dom_id = f"trend-{scope}-{pk or ''}-{name}".rstrip("-").replace(".", "-")
    return render(request, "usage/_trend.html", {
        "trend": data, "chart": data.as_json(), "totals": data.totals(), "title": title, "range": range_key,
        "ranges": RANGE_LABELS.items(), "url": request.path, "own_only": own_only,
        "dom_id": dom_id, "json_id": f"{dom_id}-data"})


@login_required
def usage_page(request):
    """GPU-hours (allocated, used, idle) and cost per project, department or user over the last 7, 30 or 90 days."""
    range_key = request.GET.get("range", "30d")
    if range_key not in USAGE_RANGES:
        range_key = "30d"
    by = request.GET.get("by", "project")
    if by not in USAGE_BY:
        by = "project"
    end = timezone.now()
    projects = None
    if not is_platform_admin(request.user):
        projects = dict(Project.objects.visible_to(request.user).values_list("pk", "name"))
    lines = project_usage(start=end - USAGE_RANGES[range_key], end=end, projects=projects, by=by)
    total = {k: sum(getattr(line, k) for line in lines) for k in
             ("gpu_hours", "used_hours", "idle_hours", "unmeasured_hours", "gpu_cost", "idle_cost", "total_cost")}
    return render(request, "usage/usage.html", {
        "lines": lines, "total": total, "range": range_key, "ranges": USAGE_RANGES.keys(), "by": by,
        "by_title": USAGE_BY[by], "bys": USAGE_BY.items(),
        "currency": settings.CHARGEBACK_CURRENCY, "admin": projects is None})


def _reports_admin(request) -> None:
    """Reports span every project: platform admins only, as the API (GET …/reports/availability says so)."""
    if not is_platform_admin(request.user):
        raise PermissionDenied("Reports are for platform admins: they span every project.")


def _report_form(request, data=None) -> ReportRequestForm:
    now = timezone.now().replace(minute=0, second=0, microsecond=0)
    initial = {"start": (now - timedelta(days=7)).strftime("%Y-%m-%dT%H:%M"), "end": now.strftime("%Y-%m-%dT%H:%M")}
    return ReportRequestForm(data, initial=initial,
                             projects=Project.objects.order_by("name").values_list("name", flat=True),
                             departments=Department.objects.order_by("name").values_list("name", flat=True))


@login_required
def reports(request):
    """The report requests, newest first, and a form to request one (the API's POST, same rules)."""
    _reports_admin(request)
    form = _report_form(request, request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        body = ReportRequestSerializer(data=form.api_body())
        if body.is_valid():
            data = body.validated_data
            report = services.report_create(user=request.user, name=data["name"], description=data["description"],
                                            start=data["start"], end=data["end"], group_by=data["groupBy"],
                                            filter_by=data["filterBy"])
            messages.success(request, f"Report {report.name} requested: it is made in the background.")
            return HttpResponseRedirect(reverse("usage-reports"))
        for field, problems in body.errors.items():
            for problem in problems if isinstance(problems, list) else [problems]:
                form.add_error(API_FIELDS.get(field), str(problem))
    rows = list(Report.objects.defer("csv")[:REPORTS_SHOWN])
    context = {"reports": rows, "live": any(r.status in (Report.Status.PENDING, Report.Status.PROCESSING)
                                            for r in rows), "total": Report.objects.count()}
    if request.GET.get("part") == "rows":
        return render(request, "usage/_report_rows.html", context)
    return render(request, "usage/reports.html", {**context, "form": form},
                  status=400 if request.method == "POST" else 200)


@login_required
def report_download(request, pk):
    _reports_admin(request)
    report = get_object_or_404(Report, pk=pk)
    if report.status != Report.Status.READY:
        return HttpResponse(f"Report {report.name} is {report.status}: its file is there once it is Ready.",
                            status=409, content_type="text/plain; charset=utf-8")
    response = HttpResponse(report.csv, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="report-{report.pk}.csv"'
    return response


@login_required
@require_POST
def report_delete(request, pk):
    _reports_admin(request)
    report = get_object_or_404(Report.objects.defer("csv"), pk=pk)
    services.report_delete(report=report, user=request.user)
    messages.success(request, f"Report {report.name} deleted.")
    return HttpResponseRedirect(reverse("usage-reports"))
