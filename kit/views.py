"""Portal pages of Kit App Streaming's catalogue: applications with their versions, application profiles (the
stream pages are kit.stream_views').

Pages over the same selectors, FilterSets and services as `/cfg`; a profile the user may not see is a 404, as on
the API."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST
from rest_framework.exceptions import APIException, ValidationError

from kit import selectors, services
from kit.forms import ApplicationForm, ProfileForm, VersionForm
from kit.matching import WILDCARD, matching
from kit.serializers import (
    ApplicationIn,
    ApplicationUpdateIn,
    ProfileIn,
    ProfileUpdateIn,
    VersionIn,
    profile_fields,
)
from kit.streams import port_protocol
from kit.tables import ApplicationTable, application_rows
from kit.tables import ProfileTable as KitProfileTable
from profiles.forms import api_errors
from studio.errors import Conflict
from studio.models import Project, is_platform_admin


def _admin_only(request):
    if not is_platform_admin(request.user):  # as on the API: only platform admins change Kit's catalog
        raise PermissionDenied


def _valid(serializer_class, body: dict) -> dict:
    serializer = serializer_class(data=body)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def _saved(form, save, file=None):
    """Run the API's validation and service; their refusals land next to the form's fields. The result, or None."""
    try:
        return save()
    except Conflict as exc:  # an id that is taken
        form.add_error("id" if "id" in form.fields and not form.fields["id"].disabled else None, str(exc.detail))
    except (ValidationError, DjangoValidationError, APIException) as exc:
        (file or form.file_all)(api_errors(exc))
    return None


@login_required
def applications(request):
    table = ApplicationTable(request, application_rows(selectors.applications()))
    return render(request, "kit/applications.html", {**table.context(), "search": request.GET.get("search", "")})


@login_required
def applications_export(request):
    try:
        return ApplicationTable(request, application_rows(selectors.applications())).export()
    except ValidationError as exc:
        return JsonResponse(exc.detail, status=400)


def _application(app_id):
    try:
        return selectors.application_get(app_id=app_id)
    except APIException:
        raise Http404("No such application.") from None


@login_required
def application(request, app_id, version_form=None):
    app = _application(app_id)
    profiles = []
    if selectors.may_see_profiles(request.user):
        visible = selectors.profiles_visible(user=request.user)
        profiles = matching(visible, app.id, WILDCARD, supported=lambda p: p.supported_applications)
    return render(request, "kit/application.html", {
        "app": app, "versions": selectors.versions_newest_first(app=app), "profiles": profiles,
        "version_form": version_form or VersionForm(),
    })


@login_required
def application_new(request):
    _admin_only(request)
    form = ApplicationForm(request.POST or None)
    if request.method == "POST":
        def create():
            data = _valid(ApplicationIn, form.payload())
            return services.application_create(actor=request.user, app_id=data.pop("id"), **data)

        app = _saved(form, create)
        if app is not None:
            messages.success(request, f"Created application {app.id}.")
            return HttpResponseRedirect(reverse("kit-app", args=[app.id]))
    return render(request, "kit/form.html", {"form": form, "title": "New Kit application",
                                             "back": reverse("kit-apps"), "submit": "Create application"})


@login_required
def application_edit(request, app_id):
    _admin_only(request)
    app = _application(app_id)
    form = ApplicationForm(request.POST or None, app=app)
    if request.method == "POST":
        def update():
            data = _valid(ApplicationUpdateIn, form.payload())
            return services.application_update(actor=request.user, application=app, **data)

        if _saved(form, update) is not None:
            messages.success(request, f"Saved application {app.id}.")
            return HttpResponseRedirect(reverse("kit-app", args=[app.id]))
    return render(request, "kit/form.html", {"form": form, "title": f"Edit application {app.id}",
                                             "back": reverse("kit-app", args=[app.id]), "submit": "Save"})


@login_required
@require_POST
def application_delete(request, app_id):
    _admin_only(request)
    app = _application(app_id)
    services.application_delete(actor=request.user, application=app)
    messages.success(request, f"Deleted application {app_id} and its versions.")
    return HttpResponseRedirect(reverse("kit-apps"))


@login_required
@require_POST
def version_add(request, app_id):
    _admin_only(request)
    app = _application(app_id)
    form = VersionForm(request.POST)

    def create():
        return services.version_create(actor=request.user, application=app, **_valid(VersionIn, form.payload()))

    version = _saved(form, create)
    if version is None:
        return application(request, app_id, version_form=form)
    messages.success(request, f"Added version {version.version} of {app.id}.")
    return HttpResponseRedirect(reverse("kit-app", args=[app.id]))


@login_required
@require_POST
def version_delete(request, app_id, version):
    _admin_only(request)
    app = _application(app_id)
    try:
        row = selectors.version_get(app=app, version=version)
    except APIException:
        raise Http404("No such version.") from None
    services.version_delete(actor=request.user, version=row)
    messages.success(request, f"Deleted version {version} of {app.id}.")
    return HttpResponseRedirect(reverse("kit-app", args=[app.id]))


@login_required
def profiles(request):
    table = KitProfileTable(request, _visible_profiles(request))
    return render(request, "kit/profiles.html", {**table.context(), "search": request.GET.get("search", "")})


def _visible_profiles(request):
    queryset = selectors.profiles_visible(user=request.user).select_related("owner_project")
    if not selectors.may_see_profiles(request.user):  # as on the API: no project, no profiles
        queryset = queryset.none()
    return queryset


@login_required
def profiles_export(request):
    try:
        return KitProfileTable(request, _visible_profiles(request)).export()
    except ValidationError as exc:
        return JsonResponse(exc.detail, status=400)


def _profile(request, profile_id):
    try:
        return selectors.profile_get(user=request.user, profile_id=profile_id)
    except APIException:
        raise Http404("No such application profile.") from None


@login_required
def profile(request, profile_id):
    found = _profile(request, profile_id)
    ports = [{**p, "protocol": port_protocol(p)} for p in found.ports]
    return render(request, "kit/profile.html", {"profile": found, "sharing": found.sharing(), "ports": ports})


def _profile_form(request, found=None):
    projects = Project.objects.order_by("name")
    form = ProfileForm(request.POST or None, profile=found, projects=projects,
                       applications=selectors.applications().order_by("pk").values_list("pk", flat=True))
    if request.method != "POST":
        return form, None
    body = form.payload()
    if body is None:  # a JSON field that is not JSON
        return form, None

    def save():
        data = _valid(ProfileUpdateIn if found else ProfileIn, body)
        fields = profile_fields(data)
        if found is None:
            return services.profile_create(actor=request.user, profile_id=data["id"], fields=fields,
                                           owner_project_id=data.get("projectId"), sharing=data.get("sharing"))
        return services.profile_update(actor=request.user, profile=found, fields=fields,
                                       owner_project_id=data.get("projectId", services.KEEP),
                                       sharing=data.get("sharing"))

    return form, _saved(form, save, file=form.file_profile_errors)


@login_required
def profile_new(request):
    _admin_only(request)
    form, saved = _profile_form(request)
    if saved is not None:
        messages.success(request, f"Created application profile {saved.slug}.")
        return HttpResponseRedirect(reverse("kit-profile", args=[saved.slug]))
    return render(request, "kit/form.html", {"form": form, "title": "New application profile",
                                             "back": reverse("kit-profiles"), "submit": "Create profile"})


@login_required
def profile_edit(request, profile_id):
    found = _profile(request, profile_id)
    _admin_only(request)
    form, saved = _profile_form(request, found)
    if saved is not None:
        messages.success(request, f"Saved application profile {saved.slug}: later sessions use revision "
                                  f"{saved.revision}.")
        return HttpResponseRedirect(reverse("kit-profile", args=[saved.slug]))
    return render(request, "kit/form.html", {"form": form, "title": f"Edit application profile {found.slug}",
                                             "back": reverse("kit-profile", args=[found.slug]), "submit": "Save"})


@login_required
@require_POST
def profile_delete(request, profile_id):
    found = _profile(request, profile_id)
    _admin_only(request)
    services.profile_delete(actor=request.user, profile=found)
    messages.success(request, f"Deleted application profile {profile_id}.")
    return HttpResponseRedirect(reverse("kit-profiles"))
