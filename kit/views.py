"""Portal pages of Kit App Streaming: applications with their versions, application profiles, sessions.

Pages over the same selectors, FilterSets and services as `/cfg` and `/streaming`; sessions start and stop here.
A profile the user may not see is a 404, as on the API."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST
from rest_framework.exceptions import APIException, ValidationError

from kit import selectors, services
from kit.filtersets import ApplicationFilterSet, ProfileFilterSet
from kit.matching import WILDCARD, matching, newest_first
from kit.streams import session_view
from studio.context import navigation


def _page_filter(filterset_class, request, queryset):
    """The filtered rows; a filter the page cannot apply (a hand-edited query string) shows none."""
    filterset = filterset_class(request.GET, queryset=queryset, request=request)
    try:
        return filterset.qs if filterset.is_valid() else queryset.none()
    except ValidationError:
        return queryset.none()


@login_required
def applications(request):
    queryset = selectors.applications().prefetch_related("versions")
    apps = _page_filter(ApplicationFilterSet, request, queryset)
    rows = []
    for app in apps:
        versions = newest_first(v.version for v in app.versions.all())
        rows.append({"app": app, "newest": versions[0] if versions else "", "count": len(versions)})
    return render(request, "kit/applications.html", {"rows": rows, "search": request.GET.get("search", "")})


@login_required
def application(request, app_id):
    try:
        app = selectors.application_get(app_id=app_id)
    except APIException:
        raise Http404("No such application.") from None
    profiles = []
    if selectors.may_see_profiles(request.user):
        visible = selectors.profiles_visible(user=request.user)
        profiles = matching(visible, app.id, WILDCARD, supported=lambda p: p.supported_applications)
    return render(request, "kit/application.html", {
        "app": app, "versions": selectors.versions_newest_first(app=app), "profiles": profiles,
    })


@login_required
def profiles(request):
    queryset = selectors.profiles_visible(user=request.user).select_related("owner_project")
    if not selectors.may_see_profiles(request.user):  # as on the API: no project, no profiles
        queryset = queryset.none()
    rows = _page_filter(ProfileFilterSet, request, queryset)
    return render(request, "kit/profiles.html", {"profiles": rows, "search": request.GET.get("search", "")})


@login_required
def profile(request, profile_id):
    try:
        found = selectors.profile_get(user=request.user, profile_id=profile_id)
    except APIException:
        raise Http404("No such application profile.") from None
    return render(request, "kit/profile.html", {"profile": found, "sharing": found.sharing()})


def _problem(exc: APIException) -> str:
    detail = exc.detail
    if isinstance(detail, dict):
        return " ".join(str(v) for values in detail.values() for v in (values if isinstance(values, list) else [values]))
    return " ".join(map(str, detail)) if isinstance(detail, list) else str(detail)


@login_required
def sessions(request):
    """The user's streaming sessions, re-read every 2 s (htmx), with a form to start one (the same service as
    POST /streaming/stream) and a stop button on each (DELETE /streaming/stream/{id})."""
    project = navigation(request).get("current_project")
    if request.method == "POST":
        try:
            session = services.session_launch(
                user=request.user, app_id=request.POST.get("application", ""),
                profile_id=request.POST.get("profile", ""), version=request.POST.get("version") or None,
                project_id=project.pk if project else None)
            messages.success(request, f"Starting {session.name}: it streams once its pod is running.")
        except APIException as exc:
            messages.error(request, f"Not started: {_problem(exc)}")
        return HttpResponseRedirect(reverse("kit-sessions"))
    rows = []
    for session in selectors.sessions_visible(user=request.user)[:200]:
        view = session_view(session_id=str(session.pk), phase=session.actual_phase,
                            phase_message=session.phase_message, endpoints=session.endpoints, spec=session.spec)
        routes = [(address, route) for address, items in view["routes"].items() for route in items]
        rows.append({"session": session, "status": view["status"], "routes": routes,
                     "inputs": session.launch_inputs or {}})
    context = {"rows": rows, "project": project}
    if request.htmx:
        return render(request, "kit/_session_rows.html", context)
    apps = list(selectors.applications().prefetch_related("versions"))
    profiles = list(selectors.profiles_visible(user=request.user)) if selectors.may_see_profiles(request.user) else []
    context.update({"apps": [(app, newest_first(v.version for v in app.versions.all())) for app in apps],
                    "profiles": profiles})
    return render(request, "kit/sessions.html", context)


@login_required
@require_POST
def session_stop(request, session_id):
    try:
        session = selectors.session_get(user=request.user, session_id=str(session_id))
        services.session_end(user=request.user, session=session)
        messages.success(request, f"Stopping {session.name}.")
    except APIException as exc:
        messages.error(request, f"Not stopped: {_problem(exc)}")
    return HttpResponseRedirect(reverse("kit-sessions"))
