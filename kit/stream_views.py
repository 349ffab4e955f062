"""Portal pages of Kit streams: the sessions (start, stop), one session (its status, routes, how to connect a
client, a Stop button), the client URLs of the user's projects (make one: shown once; revoke), and a project's cap
on concurrent streams. The same selectors and services as `/streaming` and the client URL API."""

from datetime import timedelta

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_POST
from rest_framework.exceptions import APIException, ValidationError

from kit import client_urls, errors, selectors, sessions
from kit.matching import newest_first
from kit.models import StreamSession
from kit.serializers import session_data
from kit.tables import SessionTable
from studio.context import navigation
from studio.iam.permissions import has_project_role, projects_with_level
from studio.ids import is_uuid
from studio.models import Level, Project, is_platform_admin
from studio.tables import bulk_run, bulk_target


class ClientUrlForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="Where it is used, e.g. the team's web viewer.")
    project = forms.TypedChoiceField(coerce=int, help_text="Its streams run here, as you.")
    days = forms.IntegerField(label="Expires after (days)", min_value=1, max_value=90, initial=7)

    def __init__(self, *args, projects=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["project"].choices = [(p.pk, p.name) for p in projects]


class StreamLimitForm(forms.Form):
    max_sessions = forms.IntegerField(label="At most this many streams at once", min_value=1, max_value=10_000,
                                      required=False, help_text="Empty: no cap.")


def _launchable(user) -> list[Project]:
    projects = Project.objects.order_by("name")
    return list(projects if is_platform_admin(user) else projects.filter(pk__in=projects_with_level(user, Level.MEMBER)))


def _routes(view: dict) -> list[tuple[str, dict]]:
    return [(address, route) for address, entry in view["routes"].items() for route in entry["routes"]]


def _limit(project: Project | None) -> dict | None:
    if project is None:
        return None
    return {"project": project, "cap": sessions.cap_of(project.pk), "running": sessions.running_count(project.pk),
            "queued": StreamSession.objects.filter(project=project, state=StreamSession.State.QUEUED).count()}


@login_required
def session_list(request):
    """The sessions of the user's projects, re-read every 2 s (htmx), with a form to start one (the same service
    as POST /streaming/stream), the current project's cap, and the user's client URLs (one made here is shown in
    this answer only)."""
    project = navigation(request).get("current_project")
    created = None
    form = ClientUrlForm(projects=_launchable(request.user), initial={"project": project.pk if project else None})
    if request.method == "POST":
        if "application" in request.POST:
            return _start(request, project)
        form = ClientUrlForm(request.POST, projects=_launchable(request.user))
        if form.is_valid():
            target = Project.objects.get(pk=form.cleaned_data["project"])
            try:
                link, token = client_urls.client_url_create(user=request.user, project=target,
                                                            name=form.cleaned_data["name"],
                                                            lifetime=timedelta(days=form.cleaned_data["days"]))
                created = {"link": link, "url": client_urls.base_url(request, token),
                           "title": f"Client URL {link.name} for project {target.name}",
                           "text": f"Give it to the Kit client as both its App Server and its Stream Server; it "
                                   f"expires {link.expires_at:%Y-%m-%d %H:%M} UTC:"}
                form = ClientUrlForm(projects=_launchable(request.user), initial={"project": target.pk})
            except APIException as exc:
                form.add_error(None, errors.text_of(exc))
    table = SessionTable(request, selectors.sessions_visible(user=request.user))
    context = {**table.context(), "project": project}
    if request.htmx:
        return render(request, "studio/_table_rows.html", context)
    apps = list(selectors.applications().prefetch_related("versions"))
    profiles = list(selectors.profiles_visible(user=request.user)) if selectors.may_see_profiles(request.user) else []
    links = list(client_urls.client_urls_visible(user=request.user).filter(revoked_at__isnull=True)[:50])
    context.update({
        "apps": [(app, newest_first(v.version for v in app.versions.all())) for app in apps], "profiles": profiles,
        "links": links, "link_form": form, "created": created, "limit": _limit(project),
        "limit_form": StreamLimitForm(initial={"max_sessions": (_limit(project) or {}).get("cap")}),
        "may_set_limit": project is not None and has_project_role(request.user, project, Level.ADMIN),
        # as sessions.choose_project decides for the project this form launches in (the top bar's)
        "may_start": has_project_role(request.user, project, Level.MEMBER) if project is not None
        else bool(_launchable(request.user)),
    })
    return render(request, "kit/sessions.html", context)


def _start(request, project):
    try:
        session = sessions.session_request(
            user=request.user, app_id=request.POST.get("application", ""),
            profile_id=request.POST.get("profile", ""), version=request.POST.get("version") or None,
            project_id=project.pk if project else None)
        messages.success(request, f"Requested a {session.application} stream in {session.project.name}.")
        return HttpResponseRedirect(reverse("kit-session", args=[session.pk]))
    except (APIException, ValidationError) as exc:
        messages.error(request, f"Not started: {errors.text_of(exc)}")
    return HttpResponseRedirect(reverse("kit-sessions"))


def _session(request, session_id, *, ended_too: bool = False) -> StreamSession:
    try:
        return selectors.session_get(user=request.user, session_id=str(session_id), ended_too=ended_too)
    except APIException:
        raise Http404("No such streaming session.") from None


@login_required
def session_detail(request, session_id):
    """One session: its status and routes (re-read every 2 s), how to connect NVIDIA's web-viewer-sample or any
    WebRTC client to it, and Stop; an ended one says why it ended (an idle end, a stop)."""
    session = _session(request, session_id, ended_too=True)
    ended = session.state in (StreamSession.State.ENDED, StreamSession.State.FAILED)
    if not ended:
        sessions.session_touch(session=session)
    view = session_data(session, position=selectors.queue_positions([session]).get(session.pk))
    routes = _routes(view)
    by_name = {route["description"]: (address, route) for address, route in routes}
    links = client_urls.client_urls_visible(user=request.user).filter(
        project_id=session.project_id, revoked_at__isnull=True)
    context = {"session": session, "view": view, "routes": routes, "signaling": by_name.get("signaling"),
               "media": by_name.get("media"), "links": list(links[:20]),
               "may_stop": not ended and has_project_role(request.user, session.project_id, Level.MEMBER),
               "ended": ended}
    if request.htmx:  # 286: htmx stops polling a session that is over
        return render(request, "kit/_session_detail.html", context, status=286 if ended else 200)
    return render(request, "kit/session.html", context)


@login_required
@require_POST
def session_stop(request, session_id):
    session = _session(request, session_id)
    try:
        sessions.session_end(user=request.user, session=session)
        messages.success(request, f"Stopped the {session.application} stream.")
    except APIException as exc:
        messages.error(request, f"Not stopped: {errors.text_of(exc)}")
    return HttpResponseRedirect(reverse("kit-sessions"))


@login_required
def session_export(request):
    """The sessions of the user's projects as CSV (state and routes as the page shows them)."""
    try:
        return SessionTable(request, selectors.sessions_visible(user=request.user)).export()
    except ValidationError as exc:
        return JsonResponse(exc.detail, status=400)


@login_required
@require_POST
def session_bulk(request):
    """Stop the selected sessions, each through the same service as its Stop (refusals named)."""
    ids = [i for i in request.POST.getlist("ids") if is_uuid(i)]
    if request.POST.get("action") == "stop" and ids:
        rows = {str(s.pk): s for s in selectors.sessions_visible(user=request.user).filter(pk__in=ids)}
        bulk_run(request, rows=rows, ids=ids, done_text="Stopped", nouns=("stream", "streams"),
                 label=lambda s: f"{s.application} ({s.pk})",
                 problem=lambda exc: errors.text_of(exc) if isinstance(exc, APIException) else None,
                 act=lambda s: sessions.session_end(user=request.user, session=s))
    return HttpResponseRedirect(bulk_target(request, reverse("kit-sessions")))


@login_required
@require_POST
def client_url_revoke(request, link_id):
    try:
        link = client_urls.client_url_get(user=request.user, client_url_id=link_id)
        client_urls.client_url_revoke(user=request.user, link=link)
        messages.success(request, f"Revoked the client URL {link.name}: clients using it are refused from now on.")
    except APIException as exc:
        messages.error(request, f"Not revoked: {errors.text_of(exc)}")
    return HttpResponseRedirect(reverse("kit-sessions"))


@login_required
@require_POST
def stream_limit(request):
    project = navigation(request).get("current_project")
    if project is None or not has_project_role(request.user, project, Level.ADMIN):
        raise Http404("No project you administer is selected.")
    form = StreamLimitForm(request.POST)
    if form.is_valid():
        cap = form.cleaned_data["max_sessions"]
        sessions.limit_set(actor=request.user, project=project, max_sessions=cap)
        messages.success(request, f"Project {project.name}: " + (f"at most {cap} streams at once." if cap else
                                                                 "no cap on concurrent streams."))
    else:
        messages.error(request, "Not saved: " + " ".join(e for errs in form.errors.values() for e in errs))
    return HttpResponseRedirect(reverse("kit-sessions"))

