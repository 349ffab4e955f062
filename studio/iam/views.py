"""Pages of users (platform admins: create, deactivate, reset password, platform admin role, project roles) and
of one's own access keys. Writes through studio.services; a temporary password or a key's secret is shown once,
in the answer to the request that made it, and never stored in clear."""


from django.contrib import messages
from django.contrib.auth import get_user_model, update_session_auth_hash
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from rest_framework.exceptions import APIException
from rest_framework.exceptions import ValidationError as InvalidQuery

from studio import services
from studio.audit_words import history_of
from studio.forms import AccessKeyForm, PasswordChangeForm, UserCreateForm, UserProjectRoleForm
from studio.iam import passwords
from studio.iam.models import AccessKey, AccessRule, Level, is_platform_admin
from studio.iam.tables import AccessKeyTable, UserTable
from studio.ids import is_uuid
from studio.org.models import Project
from studio.tables import bulk_run, bulk_target


def _admin_only(request):
    if not is_platform_admin(request.user):
        raise PermissionDenied


def _problem(exc) -> str:
    if isinstance(exc, ValidationError):
        return " ".join(m for messages_ in exc.message_dict.values() for m in messages_) \
            if hasattr(exc, "error_dict") else " ".join(exc.messages)
    return str(exc.detail)


@login_required
def user_list(request):
    _admin_only(request)
    form = UserCreateForm(request.POST or None)
    created = None
    if request.method == "POST" and form.is_valid():
        try:
            user, password = services.user_create(actor=request.user, email=form.cleaned_data["email"])
            created = {"user": user, "password": password}
            form = UserCreateForm()
        except (ValidationError, APIException) as exc:
            form.add_error("email", _problem(exc))
    table = UserTable(request, _people(), admins=_platform_admins())
    return render(request, "studio/users.html", {
        **table.context(), "form": form, "created": created, "search": request.GET.get("search", ""),
    })


def _people():
    return get_user_model().objects.filter(service_account__isnull=True)


def _platform_admins() -> set:
    return set(AccessRule.objects.filter(scope_type__in=AccessRule.TENANT_WIDE, role__level=Level.ADMIN,
                                         subject_type=AccessRule.Subject.USER).values_list("user_id", flat=True))


@login_required
def user_export(request):
    """The filtered users list as CSV (platform admins only, as the page)."""
    _admin_only(request)
    try:
        return UserTable(request, _people(), admins=_platform_admins()).export()
    except InvalidQuery as exc:
        return JsonResponse(exc.detail, status=400)


@login_required
def user_detail(request, pk):
    _admin_only(request)
    person = get_object_or_404(get_user_model(), pk=pk)
    form = UserProjectRoleForm(request.POST or None, projects=Project.objects.order_by("name"))
    password = None
    if request.method == "POST":
        action = request.POST.get("action")
        try:
            if action == "reset-password":
                password = services.user_password_reset(person, actor=request.user)
            elif action in ("deactivate", "activate"):
                services.user_set_active(person, actor=request.user, active=action == "activate")
                messages.success(request, f"{person.username} is {'active' if action == 'activate' else 'deactivated'}.")
                return HttpResponseRedirect(request.path)
            elif action in ("make-admin", "remove-admin"):
                services.user_platform_admin_set(person, actor=request.user, admin=action == "make-admin")
                messages.success(request, f"{person.username} is {'now' if action == 'make-admin' else 'no longer'} "
                                          "a platform admin.")
                return HttpResponseRedirect(request.path)
            elif action == "remove-role":
                project = get_object_or_404(Project, pk=request.POST.get("project"))
                services.membership_remove(actor=request.user, project=project, user=person)
                messages.success(request, f"Removed {person.username} from {project.name}.")
                return HttpResponseRedirect(request.path)
            elif action == "set-role" and form.is_valid():
                project = form.cleaned_data["project"]
                services.scope_role_set(actor=request.user, project=project, user=person,
                                        role=form.cleaned_data["role"])
                messages.success(request, f"{person.username} is {form.cleaned_data['role']} in {project.name}.")
                return HttpResponseRedirect(request.path)
        except (ValidationError, APIException) as exc:
            messages.error(request, _problem(exc))
            return HttpResponseRedirect(request.path)
    rules = (AccessRule.objects.filter(subject_type=AccessRule.Subject.USER, user=person)
             .select_related("role", "project", "department").order_by("scope_type", "project__name"))
    return render(request, "studio/user_detail.html", {
        "person": person, "rules": rules, "form": form, "password": password,
        "is_admin": is_platform_admin(person),
        "own_admin_rule": rules.filter(scope_type=AccessRule.Scope.TENANT, role__level=Level.ADMIN).exists(),
        "history": history_of(person),
    })


@login_required
def access_key_list(request):
    """The user's own access keys (client id + secret for POST /api/v1/token); the secret is shown once."""
    form = AccessKeyForm(request.POST or None)
    created = None
    if request.method == "POST" and form.is_valid():
        key, secret = services.access_key_create(user=request.user, name=form.cleaned_data["name"])
        created = {"key": key, "secret": secret}
        form = AccessKeyForm()
    table = AccessKeyTable(request, AccessKey.objects.filter(user=request.user))
    return render(request, "studio/access_keys.html", {**table.context(), "form": form, "created": created})


@login_required
def access_key_export(request):
    """One's own keys' names and client ids as CSV (a secret is never readable: it is stored hashed)."""
    try:
        return AccessKeyTable(request, AccessKey.objects.filter(user=request.user)).export()
    except InvalidQuery as exc:
        return JsonResponse(exc.detail, status=400)


@login_required
@require_POST
def access_key_bulk(request):
    """Delete the selected keys of one's own (another user's key is not found)."""
    target = bulk_target(request, reverse("portal-access-keys"))
    ids = [i for i in request.POST.getlist("ids") if is_uuid(i)]
    if request.POST.get("action") == "delete" and ids:
        rows = {str(k.pk): k for k in AccessKey.objects.filter(user=request.user, pk__in=ids)}
        bulk_run(request, rows=rows, ids=ids, done_text="Deleted", nouns=("access key", "access keys"),
                 problem=lambda exc: None, act=lambda key: services.model_delete(key, actor=request.user))
    return HttpResponseRedirect(target)


@login_required
@require_POST
def access_key_delete(request, pk):
    key = get_object_or_404(AccessKey, pk=pk, user=request.user)  # another user's key is a 404
    services.model_delete(key, actor=request.user)
    messages.success(request, f"Deleted the access key {key.name}; clients using {key.client_id} can no longer "
                              "get tokens.")
    return HttpResponseRedirect(reverse("portal-access-keys"))


@login_required
def account_password(request):
    """Change one's own password (the API's service: current password checked, Django's validators); a temporary
    password (given by an admin) must be changed here before any other page opens."""
    if not request.user.has_usable_password():
        return render(request, "studio/password.html", {"no_local_password": True})
    temporary = passwords.is_temporary(request.user)
    form = PasswordChangeForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.me_password_change(user=request.user, current_password=form.cleaned_data["current_password"],
                                        new_password=form.cleaned_data["new_password"])
        except ValidationError as exc:  # the service's, keyed by the API's field names
            for field, problems in exc.message_dict.items():
                name = {"currentPassword": "current_password", "newPassword": "new_password"}.get(field)
                for problem in problems:
                    form.add_error(name, problem)
        else:
            update_session_auth_hash(request, request.user)  # stay logged in with the new password
            request.session.pop(passwords.SESSION_KEY, None)
            messages.success(request, "Your password is changed.")
            return HttpResponseRedirect(reverse("home") if temporary else reverse("account-password"))
    return render(request, "studio/password.html", {"form": form, "temporary": temporary})
