"""Portal pages of Kit App Streaming: applications with their versions, application profiles, sessions.

Read-only pages over the same selectors and FilterSets as `/cfg` and `/streaming`; changes go through the API.
A profile the user may not see is a 404, as on the API."""

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from rest_framework.exceptions import APIException, ValidationError

from kit import selectors
from kit.filtersets import ApplicationFilterSet, ProfileFilterSet
from kit.matching import WILDCARD, matching, newest_first
from kit.streams import session_view


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


@login_required
def sessions(request):
    rows = []
    for session in selectors.sessions_visible(user=request.user)[:200]:
        view = session_view(session_id=str(session.pk), phase=session.actual_phase,
                            phase_message=session.phase_message, endpoints=session.endpoints, spec=session.spec)
        routes = [(address, route) for address, items in view["routes"].items() for route in items]
        rows.append({"session": session, "status": view["status"], "routes": routes,
                     "inputs": session.launch_inputs or {}})
    return render(request, "kit/sessions.html", {"rows": rows})
