"""Organisation pages for platform admins (clusters, departments, projects, audit) and project admins (members).

Lists read through the API's FilterSets (search, sort, paging); writes go through studio.services."""

import uuid

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Q
from django.http import Http404, HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from rest_framework.exceptions import APIException
from rest_framework.exceptions import ValidationError as InvalidQuery

from studio import selectors, services
from studio.audit import AuditEvent
from studio.clusters.models import Cluster
from studio.filtersets import (
    ClusterFilterSet,
    DepartmentFilterSet,
    ProjectFilterSet,
)
from studio.forms import ClusterForm, DepartmentForm, MemberForm, ProjectEditForm, ProjectForm
from studio.iam.models import Level, is_platform_admin
from studio.iam.permissions import has_project_role
from studio.ids import is_id, parse_id
from studio.org import access
from studio.org.forms import PoolQuotaForm
from studio.org.models import Department, Project
from studio.org.quotas import resources_from
from studio.org.tables import TABLES, AuditTable, MemberTable, table_queryset
from studio.org.units import department_cluster_id
from studio.tables import bulk_run, bulk_target

# kind → (model, form, FilterSet, columns as (label, attribute, API sort field))
PAGES = {
    "clusters": (Cluster, ClusterForm, ClusterFilterSet, [
        ("Name", "name", "name"), ("API server URL", "api_server_url", ""), ("Status", "status", "status"),
        ("Last seen", "last_seen_at", "lastSeenAt"), ("Scheduler", "scheduler_shown", "")]),
    "departments": (Department, DepartmentForm, DepartmentFilterSet, [
        ("Name", "name", "name"), ("Description", "description", ""), ("Created", "created_at", "createdAt")]),
    "projects": (Project, ProjectForm, ProjectFilterSet, [
        ("Name", "name", "name"), ("Department", "department", ""), ("Cluster", "cluster", ""),
        ("Namespace", "namespace", ""), ("GPUs deserved", "gpu_deserved", ""), ("GPU limit", "gpu_limit", "")]),
}
SINGULAR = {"clusters": "cluster", "departments": "department", "projects": "project"}


def _admin_only(request):
    if not is_platform_admin(request.user):
        raise PermissionDenied


def _apply_errors(form, exc: ValidationError):
    for field, errors in (exc.message_dict if hasattr(exc, "error_dict") else {None: exc.messages}).items():
        form.add_error(field if field in form.fields else None, errors)


def _save(form, save) -> bool:
    """Run one service with the form's data; its refusals land on the form. True when saved."""
    try:
        save(form.cleaned_data)
        return True
    except ValidationError as exc:
        _apply_errors(form, exc)
    except APIException as exc:
        form.add_error(None, str(exc.detail))
    return False


def _readable(request, kind):
    """The rows of an org page the user may open: clusters for platform admins; departments and projects for them
    and for whoever holds a role on a department (or tenant-wide). Anyone else: 403."""
    if kind == "clusters":
        _admin_only(request)
        return Cluster.objects.all()
    if not access.reads_org(request.user):
        raise PermissionDenied
    return access.departments_readable(request.user) if kind == "departments" \
        else access.projects_readable(request.user)


def _may_change(user, kind: str, row) -> bool:
    """Edit or delete this row: platform admins any; a department's admins its projects."""
    if kind == "projects":
        return access.manages_department(user, row.department_id)
    return is_platform_admin(user)


def _create_form(request, kind):
    """The page's New form, or None where the user may create nothing of this kind."""
    data = request.POST or None
    if kind == "projects":
        departments = access.departments_managed(request.user)
        if not is_platform_admin(request.user) and not departments.exists():
            return None
        return ProjectForm(data, departments=departments)
    return PAGES[kind][1](data) if is_platform_admin(request.user) else None


@login_required
def org_list(request, kind):
    readable = _readable(request, kind)
    form = _create_form(request, kind)
    if request.method == "POST":
        if form is None:
            raise PermissionDenied
        if form.is_valid():
            if kind == "projects":
                saved = _save(form, lambda data: services.project_create(actor=request.user, **data))
            elif kind == "clusters":  # with its default node pool
                saved = _save(form, lambda data: services.cluster_create(actor=request.user, **data))
            else:
                saved = _save(form, lambda data: services.department_create(actor=request.user, **data))
            if saved:
                messages.success(request, f"Created {SINGULAR[kind]} {form.cleaned_data['name']}.")
                if kind == "projects":  # its quotas per node pool next
                    created = Project.objects.get(name=form.cleaned_data["name"])
                    return HttpResponseRedirect(reverse("org-edit", args=[kind, created.pk]))
                return HttpResponseRedirect(request.path)
    table = _table(request, kind, readable)
    live = kind == "clusters"  # a cluster's status changes with every sync round
    context = {**table.context(), "kind": kind, "singular": SINGULAR[kind], "form": form,
               "search": request.GET.get("search", ""), "live": live}
    if request.htmx and live:
        return render(request, "studio/_table_rows.html", context)
    return render(request, "studio/org_list.html", context)


def _table(request, kind, readable):
    table = TABLES[kind](request, table_queryset(kind, PAGES[kind][0]).filter(pk__in=readable.values("pk")))
    table.may_change = lambda row: _may_change(request.user, kind, row)
    if kind == "departments" and not is_platform_admin(request.user) or (
            kind == "projects" and not access.departments_managed(request.user).exists()):
        table.bulk_actions = ()
    return table


@login_required
def org_export(request, kind):
    """The filtered list as CSV (the rows the page shows)."""
    try:
        return _table(request, kind, _readable(request, kind)).export()
    except InvalidQuery as exc:
        return JsonResponse(exc.detail, status=400)


@login_required
@require_POST
def org_bulk(request, kind):
    """Delete the selected rows, each through the same service as one delete; what is refused (a department
    with projects, a cluster with projects, a project of a department the user does not manage) is reported row
    by row."""
    readable = _readable(request, kind)
    target = request.POST.get("next", "")
    if not target.startswith("/") or target.startswith("//"):
        target = reverse("org-list", args=[kind])
    ids = [i for i in dict.fromkeys(request.POST.getlist("ids")) if _valid_key(kind, i)]
    if request.POST.get("action") != "delete" or not ids:
        messages.error(request, f"Choose {kind} and an action.")
        return HttpResponseRedirect(target)
    found = {str(row.pk): row for row in readable.filter(pk__in=[_key(kind, i) for i in ids])}
    done = []
    for key in ids:
        row = found.get(key)
        if row is None:
            messages.error(request, f"Refused — {key}: not found.")
            continue
        if not _may_change(request.user, kind, row):
            messages.error(request, f"Refused — {row}: you may not delete it.")
            continue
        try:
            services.model_delete(row, actor=request.user)
            done.append(str(row))
        except APIException as exc:
            messages.error(request, f"Refused — {row}: {exc.detail}")
    if done:
        messages.success(request, f"Deleted {len(done)} {SINGULAR[kind] if len(done) == 1 else kind}: "
                                  f"{', '.join(done)}.")
    return HttpResponseRedirect(target)


def _valid_key(kind: str, pk: str) -> bool:
    try:
        _key(kind, pk)
    except Http404:
        return False
    return True


def _key(kind: str, pk: str):
    """The primary key an org page's URL names: a cluster's UUID, a department's or project's id; else a 404."""
    if kind == "clusters":
        try:
            return uuid.UUID(pk)
        except ValueError:
            raise Http404(f"No such {SINGULAR[kind]}.") from None
    if not is_id(pk):
        raise Http404(f"No such {SINGULAR[kind]}.")
    return parse_id(pk)


@login_required
def org_edit(request, kind, pk):
    """Edit a cluster (credentials are write-only: left blank, they are kept), a department or a project. A
    department's and a project's page has two forms: its quotas per node pool (`action=quotas`, written as the
    API's `…/resources` PUT writes them) and its settings. Those who may only read it see both disabled."""
    pk = _key(kind, pk)
    instance = get_object_or_404(_readable(request, kind), pk=pk)
    can_change = _may_change(request.user, kind, instance)
    if request.method == "POST" and not can_change:
        raise PermissionDenied
    action = request.POST.get("action", "settings")
    posted = request.POST if request.method == "POST" else None
    quota_form = None
    if kind != "clusters":
        quota_form = _quota_form(kind, instance, posted if action == "quotas" else None, disabled=not can_change)
        if posted and action == "quotas":
            if _save_quotas(request, kind, instance, quota_form):
                messages.success(request, f"Saved the quotas of {SINGULAR[kind]} {instance}.")
                return HttpResponseRedirect(request.path)
    form = _settings_form(request, kind, instance, posted if action == "settings" else None, disabled=not can_change)
    if posted and action == "settings" and form.is_valid():
        data = {name: form.cleaned_data[name] for name in form.changed_data}
        if kind == "clusters":
            data = {name: value for name, value in data.items() if name not in ("token", "kubeconfig") or value}
        fresh = type(instance).objects.get(pk=pk)  # the form wrote its values onto `instance`; the service compares
        if kind == "projects":
            data = {name: value for name, value in data.items() if name in form.Meta.fields}
            rules = form.scheduling_rules()
            if rules != (fresh.scheduling_rules or {}):
                data["scheduling_rules"] = rules
            saved = _save(form, lambda _: services.project_update(fresh, actor=request.user, **data))
        elif kind == "departments":
            saved = _save(form, lambda _: services.department_update(fresh, actor=request.user, **data))
        else:
            saved = _save(form, lambda _: services.model_update(fresh, actor=request.user, **data))
        if saved:
            messages.success(request, f"Saved {SINGULAR[kind]} {fresh}.")
            return HttpResponseRedirect(reverse("org-list", args=[kind]))
    instance = type(instance).objects.get(pk=pk)
    return render(request, "studio/org_edit.html", {
        "kind": kind, "singular": SINGULAR[kind], "instance": instance, "form": form, "quota_form": quota_form,
        "can_change": can_change, "shares": _shares(kind, instance),
        "can_manage_access": kind == "departments" and access.manages_department(request.user, instance.pk),
    })


def _settings_form(request, kind, instance, data, *, disabled: bool):
    if kind == "projects":
        departments = None if is_platform_admin(request.user) else access.departments_managed(request.user)
        return ProjectEditForm(data, instance=instance, departments=departments, disabled=disabled)
    form = {"clusters": ClusterForm, "departments": DepartmentForm}[kind](data, instance=instance)
    for field in form.fields.values():
        field.disabled = field.disabled or disabled
    return form


def _unit_cluster_id(kind, instance):
    return instance.cluster_id if kind == "projects" else department_cluster_id(instance)


def _quota_form(kind, instance, data, *, disabled: bool) -> PoolQuotaForm:
    pools = selectors.quota_pool_rows(_unit_cluster_id(kind, instance))
    return PoolQuotaForm(data, pools=pools, resources=instance.node_pool_resources, disabled=disabled)


def _save_quotas(request, kind, instance, form: PoolQuotaForm) -> bool:
    """The form's `resources` read as the API reads a body, then the API's service; every refusal onto the form."""
    if not form.is_valid():
        return False
    items, order = form.resources()
    try:
        resources = resources_from(items, form.pools)
        if kind == "projects":
            services.project_resources_set(instance, actor=request.user, resources=resources)
        else:
            services.department_update(instance, actor=request.user, node_pool_resources=resources)
    except ValidationError as exc:
        form.errors_onto(exc, order)
        return False
    except APIException as exc:
        form.add_error(None, str(exc.detail))
        return False
    return True


def _shares(kind, instance) -> dict:
    """Beside each pool: a project's department share left there; a department's, what its projects deserve."""
    if kind == "projects":
        return selectors.department_share_left(instance.department, project_pk=instance.pk)
    if kind == "departments":
        return {name: {"given": value} for name, value in selectors.department_projects_deserved(instance).items()}
    return {}


@login_required
@require_POST
def cluster_test(request, pk):
    """Reach the cluster's API server now and say what answered (its Kubernetes version) or why not."""
    _admin_only(request)
    cluster = get_object_or_404(Cluster, pk=pk)
    ok, message = services.cluster_test_connection(cluster=cluster, actor=request.user)
    (messages.success if ok else messages.error)(request, f"{cluster.name}: {message}")
    return HttpResponseRedirect(request.POST.get("next") or reverse("org-list", args=["clusters"]))


@login_required
@require_POST
def org_delete(request, kind, pk):
    instance = get_object_or_404(_readable(request, kind), pk=_key(kind, pk))
    if not _may_change(request.user, kind, instance):
        raise PermissionDenied
    try:
        services.model_delete(instance, actor=request.user)
        messages.success(request, f"Deleted {SINGULAR[kind]} {instance}.")
    except APIException as exc:
        messages.error(request, str(exc.detail))
    return HttpResponseRedirect(reverse("org-list", args=[kind]))


@login_required
def project_members(request, pk):
    project = get_object_or_404(Project.objects.visible_to(request.user), pk=pk)
    can_manage = has_project_role(request.user, project, Level.ADMIN)
    form = MemberForm(request.POST or None, suggest_url=reverse("member-suggestions", args=[pk]))
    if request.method == "POST":
        if not can_manage:
            raise PermissionDenied
        if form.is_valid():
            services.scope_role_set(actor=request.user, project=project, user=form.cleaned_data["username"],
                                    role=form.cleaned_data["role"])
            messages.success(request, f"{form.cleaned_data['username']} is now {form.cleaned_data['role']}.")
            return HttpResponseRedirect(request.path)
    table = MemberTable(request, selectors.project_members(project), project=project, can_manage=can_manage)
    return render(request, "studio/members.html", {**table.context(), "project": project, "form": form,
                                                   "can_manage": can_manage})


@login_required
def member_export(request, pk):
    """The project's members as CSV, for whoever may see the project's members page."""
    project = get_object_or_404(Project.objects.visible_to(request.user), pk=pk)
    table = MemberTable(request, selectors.project_members(project), project=project, can_manage=False)
    try:
        return table.export()
    except InvalidQuery as exc:
        return JsonResponse(exc.detail, status=400)


@login_required
@require_POST
def member_bulk(request, pk):
    """Remove the selected members, each through the same service as one Remove (project admins)."""
    project = get_object_or_404(Project.objects.visible_to(request.user), pk=pk)
    if not has_project_role(request.user, project, Level.ADMIN):
        raise PermissionDenied
    ids = [i for i in request.POST.getlist("ids") if is_id(i)]
    if request.POST.get("action") == "remove" and ids:
        rows = {str(m.pk): m for m in selectors.project_members(project).select_related("user")
                .filter(pk__in=[parse_id(i) for i in ids])}
        bulk_run(request, rows=rows, ids=ids, done_text=f"Removed from {project.name}",
                 nouns=("member", "members"), label=lambda m: m.user.username,
                 problem=lambda exc: str(exc) if isinstance(exc, APIException) else None,
                 act=lambda m: services.membership_remove(actor=request.user, project=project, user=m.user))
    return HttpResponseRedirect(bulk_target(request, reverse("project-members", args=[pk])))


SUGGESTIONS = 10


@login_required
def member_suggestions(request, pk):
    """The active users whose username or email contains what was typed (two characters at least), as the
    <option>s of the member form's datalist; for those who manage the project's members only."""
    project = get_object_or_404(Project.objects.visible_to(request.user), pk=pk)
    if not has_project_role(request.user, project, Level.ADMIN):
        raise PermissionDenied
    typed = request.GET.get("username", "").strip()
    users = []
    if len(typed) >= 2:
        users = (get_user_model().objects.filter(is_active=True, service_account__isnull=True)
                 .filter(Q(username__icontains=typed) | Q(email__icontains=typed))
                 .order_by("username").only("username", "email")[:SUGGESTIONS])
    return render(request, "studio/_member_suggestions.html", {"users": users})


@login_required
@require_POST
def member_remove(request, pk, user_id):
    project = get_object_or_404(Project.objects.visible_to(request.user), pk=pk)
    if not has_project_role(request.user, project, Level.ADMIN):
        raise PermissionDenied
    member = get_object_or_404(selectors.project_members(project), user_id=user_id)
    services.membership_remove(actor=request.user, project=project, user=member.user)
    messages.success(request, f"Removed {member.user.username} from {project.name}.")
    return HttpResponseRedirect(reverse("project-members", args=[pk]))


@login_required
def audit_trail(request):
    """Every recorded change, newest first, paged like the API's /audit-events (never cut off)."""
    _admin_only(request)
    table = AuditTable(request, AuditEvent.objects.all(), size=50)
    return render(request, "studio/audit.html", {**table.context(), "search": request.GET.get("search", ""),
                                                 "actions": AuditEvent.Action.choices})


@login_required
def audit_export(request):
    """The filtered audit trail as CSV (platform admins only, as the page)."""
    _admin_only(request)
    try:
        return AuditTable(request, AuditEvent.objects.all()).export()
    except InvalidQuery as exc:
        return JsonResponse(exc.detail, status=400)
