"""Who holds which of Run:ai's roles on a department: its department-scope access rules, given and taken on the
portal through the access-rule services (a project's are its Members page). Readers of the department see the
list; its admins (and platform admins) change it."""

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Q
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from studio import services
from studio.forms import MemberForm
from studio.iam.models import AccessRule
from studio.org import access
from studio.org.models import Department

SUGGESTIONS = 10


def _department(request, pk) -> Department:
    if not access.reads_org(request.user):
        raise PermissionDenied
    return get_object_or_404(access.departments_readable(request.user), pk=pk)


@login_required
def department_access(request, pk):
    department = _department(request, pk)
    can_manage = access.manages_department(request.user, department.pk)
    form = MemberForm(request.POST or None, suggest_url=reverse("department-access-suggestions", args=[pk]))
    if request.method == "POST":
        if not can_manage:
            raise PermissionDenied
        if form.is_valid():
            services.scope_role_set(actor=request.user, department=department, user=form.cleaned_data["username"],
                                    role=form.cleaned_data["role"])
            messages.success(request, f"{form.cleaned_data['username']} is now {form.cleaned_data['role']} in "
                                      f"department {department.name}.")
            return HttpResponseRedirect(request.path)
    rules = (AccessRule.objects.filter(scope_type=AccessRule.Scope.DEPARTMENT, department=department)
             .select_related("role", "user").order_by("subject_id"))
    return render(request, "studio/department_access.html", {
        "department": department, "rules": rules, "form": form, "can_manage": can_manage})


@login_required
@require_POST
def department_access_remove(request, pk, user_id):
    department = _department(request, pk)
    if not access.manages_department(request.user, department.pk):
        raise PermissionDenied
    user = get_object_or_404(get_user_model(), pk=user_id)
    services.scope_role_remove(actor=request.user, user=user, department=department)
    messages.success(request, f"Removed {user.username} from department {department.name}.")
    return HttpResponseRedirect(reverse("department-access", args=[pk]))


@login_required
def department_access_suggestions(request, pk):
    department = _department(request, pk)
    if not access.manages_department(request.user, department.pk):
        raise PermissionDenied
    typed = request.GET.get("username", "").strip()
    users = []
    if len(typed) >= 2:
        users = (get_user_model().objects.filter(is_active=True, service_account__isnull=True)
                 .filter(Q(username__icontains=typed) | Q(email__icontains=typed))
                 .order_by("username").only("username", "email")[:SUGGESTIONS])
    return render(request, "studio/_member_suggestions.html", {"users": users})
