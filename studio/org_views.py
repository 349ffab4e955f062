"""Organisation pages for platform admins (clusters, departments, projects, audit) and project admins (members)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from rest_framework.exceptions import APIException

from studio import services
from studio.forms import ClusterForm, DepartmentForm, MemberForm, ProjectForm
from studio.models import AuditEvent, Cluster, Department, Membership, Project, is_platform_admin
from studio.permissions import has_project_role

PAGES = {
    "clusters": (Cluster, ClusterForm, ["name", "api_server_url", "status", "last_seen_at"]),
    "departments": (Department, DepartmentForm, ["name", "description", "created_at"]),
    "projects": (Project, ProjectForm, ["name", "department", "cluster", "namespace", "gpu_deserved", "gpu_limit"]),
}


def _admin_only(request):
    if not is_platform_admin(request.user):
        raise PermissionDenied


def _apply_errors(form, exc: ValidationError):
    for field, errors in (exc.message_dict if hasattr(exc, "error_dict") else {None: exc.messages}).items():
        form.add_error(field if field in form.fields else None, errors)


@login_required
def org_list(request, kind):
    _admin_only(request)
    model, form_class, columns = PAGES[kind]
    form = form_class(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            data = form.cleaned_data
            if kind == "projects":
                services.project_create(actor=request.user, **data)
            else:
                services.model_create(model, actor=request.user, **data)
            messages.success(request, f"Created {data['name']}.")
            return HttpResponseRedirect(request.path)
        except ValidationError as exc:
            _apply_errors(form, exc)
        except APIException as exc:
            form.add_error(None, str(exc.detail))
    rows = model.objects.all()
    if kind == "projects":
        rows = rows.select_related("department", "cluster")
    table = [[getattr(row, c) for c in columns] for row in rows]
    return render(request, "studio/org_list.html", {
        "kind": kind, "form": form, "columns": [model._meta.get_field(c).verbose_name for c in columns],
        "rows": zip(rows, table, strict=True),
    })


@login_required
@require_POST
def org_delete(request, kind, pk):
    _admin_only(request)
    model = PAGES[kind][0]
    instance = get_object_or_404(model, pk=pk)
    try:
        services.model_delete(instance, actor=request.user)
        messages.success(request, f"Deleted {instance}.")
    except APIException as exc:
        messages.error(request, str(exc.detail))
    return HttpResponseRedirect(reverse("org-list", args=[kind]))


@login_required
def project_members(request, pk):
    project = get_object_or_404(Project.objects.visible_to(request.user), pk=pk)
    can_manage = has_project_role(request.user, project, Membership.Role.ADMIN)
    form = MemberForm(request.POST or None)
    if request.method == "POST":
        if not can_manage:
            raise PermissionDenied
        if form.is_valid():
            services.membership_set(actor=request.user, project=project, user=form.cleaned_data["username"],
                                    role=form.cleaned_data["role"])
            messages.success(request, f"{form.cleaned_data['username']} is now {form.cleaned_data['role']}.")
            return HttpResponseRedirect(request.path)
    members = project.memberships.select_related("user").order_by("user__username")
    return render(request, "studio/members.html", {"project": project, "members": members, "form": form,
                                                   "can_manage": can_manage})


@login_required
@require_POST
def member_remove(request, pk, user_id):
    project = get_object_or_404(Project.objects.visible_to(request.user), pk=pk)
    if not has_project_role(request.user, project, Membership.Role.ADMIN):
        raise PermissionDenied
    membership = get_object_or_404(Membership, project=project, user_id=user_id)
    services.model_delete(membership, actor=request.user)
    return HttpResponseRedirect(reverse("project-members", args=[pk]))


@login_required
def audit_trail(request):
    _admin_only(request)
    events = AuditEvent.objects.all()[:200]
    return render(request, "studio/audit.html", {"events": events})
