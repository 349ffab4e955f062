"""Writes of streaming sessions: request (launch now, or wait in the project's queue, or refuse over the cap),
end, admit queued requests as room frees, end idle sessions, note a client's activity.

A launched session is a workload of kind "stream" (workloads.services.workload_submit) whose spec is a snapshot
of the application version and profile (kit.streams.stream_spec). A project's `StreamLimit` caps its running
sessions; over it, the profile says whether a request waits (FIFO, its position answered) or is refused (429).
Admission runs under a lock on the project's row, so two requests never both take the last slot."""

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from rest_framework import exceptions, status
from rest_framework.exceptions import ValidationError

from kit import client_urls, errors
from kit.governance import idle_verdict
from kit.matching import LATEST, matches, newest
from kit.models import (
    Application,
    ApplicationProfile,
    ApplicationVersion,
    ClientUrl,
    StreamLimit,
    StreamSession,
)
from kit.signals import announce_ended
from kit.streams import SETTINGS, stream_spec
from studio.iam.permissions import has_project_role, projects_with_level
from studio.models import Level, Project, is_platform_admin
from studio.services import model_create, model_update
from workloads.models import MetricSample, Workload
from workloads.services import workload_delete, workload_delete_by_system, workload_submit

State, ChosenBy = StreamSession.State, StreamSession.ChosenBy
IDLE_REASON = "StreamIdle"
TOUCH_EVERY = timedelta(seconds=10)  # a polling client writes its activity at most this often


class CapacityReached(exceptions.APIException):
    status_code = status.HTTP_429_TOO_MANY_REQUESTS
    default_code = "capacity_reached"


# --- the project ---------------------------------------------------------------------------------------

def _launchable(user) -> list[Project]:
    """The projects where the caller may launch (member or admin), by name."""
    projects = Project.objects.order_by("name")
    return list(projects if is_platform_admin(user) else projects.filter(pk__in=projects_with_level(user, Level.MEMBER)))


def choose_project(*, user, profile_id: str, project_id: int | None,
                   client_url: ClientUrl | None = None) -> tuple[Project, str]:
    """(project, how it was chosen): the client URL's project; else the request's projectId; else the profile's
    own project when the caller may launch there; else the caller's only project where they may launch."""
    if client_url is not None:
        if project_id is not None and project_id != client_url.project_id:
            raise ValidationError({"projectId": [f"This client URL launches in project {client_url.project.name} "
                                                 f"(id {client_url.project_id}) only."]})
        return client_url.project, ChosenBy.CLIENT_URL
    if project_id is not None:
        project = Project.objects.visible_to(user).filter(pk=project_id).first()
        if project is None:
            raise ValidationError({"projectId": ["No such project, or you are not a member of it."]})
        if not has_project_role(user, project, Level.MEMBER):
            raise errors.forbidden(errors.LAUNCH_FORBIDDEN)
        return project, ChosenBy.REQUEST
    profile = ApplicationProfile.objects.visible_to(user).select_related("owner_project").filter(slug=profile_id).first()
    if profile is not None and profile.owner_project_id and has_project_role(user, profile.owner_project_id,
                                                                             Level.MEMBER):
        return profile.owner_project, ChosenBy.PROFILE
    launchable = _launchable(user)
    if len(launchable) == 1:
        return launchable[0], ChosenBy.ONLY_PROJECT
    if not launchable:
        if Project.objects.visible_to(user).exists():  # a viewer
            raise errors.forbidden(errors.LAUNCH_FORBIDDEN)
        raise ValidationError({"projectId": ["Give the project to launch in: you belong to no project."]})
    names = ", ".join(f"{p.name} ({p.pk})" for p in launchable[:10]) + (", …" if len(launchable) > 10 else "")
    raise ValidationError({"projectId": [
        f"Give the project to launch in: you belong to several projects where you may launch ({names}), and the "
        f"profile's own project is not one of them."]})


# --- what to launch ------------------------------------------------------------------------------------

def _version(app: Application, version: str | None) -> ApplicationVersion:
    rows = {row.version: row for row in app.versions.all()}
    if version in (None, "", LATEST):
        if not rows:
            raise errors.not_found(errors.VERSION_NOT_FOUND)
        return rows[newest(rows)]
    if version not in rows:
        raise errors.not_found(errors.VERSION_NOT_FOUND)
    return rows[version]


def _resolve(project: Project, app_id: str, version: str | None, profile_id: str):
    """(application, version row, profile) for a launch in the project; the profile must be one the project may
    use (owned or shared) and must serve that version, else it is "not found", as any profile one cannot see."""
    app = Application.objects.filter(pk=app_id).first()
    if app is None:
        raise errors.not_found(errors.APPLICATION_NOT_FOUND)
    chosen = _version(app, version)
    profile = ApplicationProfile.objects.for_project(project).filter(slug=profile_id).first()
    if profile is None or not matches(profile.supported_applications, app.id, chosen.version):
        raise errors.not_found(errors.PROFILE_NOT_FOUND)
    return app, chosen, profile


def _submit(*, user, project: Project, app: Application, version: ApplicationVersion,
            profile: ApplicationProfile, arguments: dict) -> Workload:
    spec = stream_spec(image=version.image, settings={f: getattr(profile, f) for f in SETTINGS}, arguments=arguments)
    request = {"name": app.id, "useGivenNameAsPrefix": True, "projectId": project.pk,
               "clusterId": str(project.cluster_id), "spec": spec}
    provenance = {
        "profile_id": profile.pk, "profile_name": profile.slug, "profile_revision": profile.revision,
        "launch_inputs": {"application": app.id, "version": version.version, "profile": profile.slug,
                          "arguments": arguments},
    }
    return workload_submit(kind=Workload.Kind.STREAM, request=request, user=user, source=Workload.Source.STREAM,
                           provenance=provenance)


# --- counting and admitting ----------------------------------------------------------------------------

def running_count(project_id) -> int:
    """Sessions of the project that hold a stream: launched, their workload neither deleted nor finished."""
    return (StreamSession.objects.filter(project_id=project_id, state=State.LAUNCHED, workload__deleted_at__isnull=True)
            .exclude(workload__actual_phase__in=Workload.FINISHED).count())


def cap_of(project_id) -> int | None:
    return StreamLimit.objects.filter(project_id=project_id).values_list("max_sessions", flat=True).first()


def _lock(project_id) -> None:
    Project.objects.select_for_update().filter(pk=project_id).first()


def _launch_queued(session: StreamSession, now: datetime) -> None:
    """Launch a queued request as the user who made it; one that can no longer launch fails with the reason. A
    request made through a client URL needs the URL still valid: what its credential gave ends with it."""
    user = session.requested_by
    try:
        if user is None or not user.is_active or not has_project_role(user, session.project_id, Level.MEMBER):
            raise errors.forbidden(errors.LAUNCH_FORBIDDEN)
        if session.client_url is not None and not client_urls.is_active(session.client_url, now):
            raise errors.forbidden(errors.CLIENT_URL_GONE)
        app, version, profile = _resolve(session.project, session.application, session.version, session.profile)
        with transaction.atomic():
            workload = _submit(user=user, project=session.project, app=app, version=version, profile=profile,
                               arguments=session.arguments)
    except (exceptions.APIException, ValidationError) as exc:
        session.state, session.message, session.ended_at = State.FAILED, f"Not started: {errors.text_of(exc)}", now
        session.save(update_fields=["state", "message", "ended_at"])
        return
    session.state, session.workload, session.launched_at, session.last_activity_at = State.LAUNCHED, workload, now, now
    session.message = ""
    session.save(update_fields=["state", "workload", "launched_at", "last_activity_at", "message"])


def _admit_locked(project_id, now: datetime) -> int:
    """Launch queued requests, oldest first, while the project is under its cap; the caller holds the lock."""
    cap = cap_of(project_id)
    running, admitted = running_count(project_id), 0
    for session in StreamSession.objects.filter(project_id=project_id, state=State.QUEUED).order_by(
            "requested_at").select_related("project", "requested_by", "client_url__created_by"):
        if cap is not None and running >= cap:
            break
        _launch_queued(session, now)
        if session.state == State.LAUNCHED:
            running, admitted = running + 1, admitted + 1
    return admitted


def sessions_admit(*, project_id, now: datetime | None = None) -> int:
    """Launch what the project's queue may launch now; the number launched."""
    with transaction.atomic():
        _lock(project_id)
        return _admit_locked(project_id, now or timezone.now())


def queue_position(session: StreamSession) -> int:
    return StreamSession.objects.filter(project_id=session.project_id, state=State.QUEUED,
                                        requested_at__lte=session.requested_at).count()


# --- requests and ends ---------------------------------------------------------------------------------

def session_request(*, user, app_id: str, profile_id: str, version: str | None = None, arguments: dict | None = None,
                    project_id: int | None = None, client_url: ClientUrl | None = None) -> StreamSession:
    """Launch `app_id` at `version` (default: the newest) with the profile, in the chosen project: at once when
    the project is under its cap of streams (and nobody waits before it), else queued or refused as the profile
    says."""
    project, chosen_by = choose_project(user=user, profile_id=profile_id, project_id=project_id, client_url=client_url)
    app, chosen, profile = _resolve(project, app_id, version, profile_id)
    arguments = dict(arguments or {})
    now = timezone.now()
    fields = {"project": project, "project_chosen_by": chosen_by, "requested_by": user, "client_url": client_url,
              "application": app.id, "version": chosen.version, "profile": profile.slug, "arguments": arguments,
              "idle_timeout_seconds": profile.idle_timeout_seconds}
    with transaction.atomic():
        _lock(project.pk)
        _admit_locked(project.pk, now)  # those who waited go first
        cap = cap_of(project.pk)
        running = running_count(project.pk)
        waiting = StreamSession.objects.filter(project=project, state=State.QUEUED).count()
        if cap is not None and (running >= cap or waiting):
            if profile.over_capacity == ApplicationProfile.OverCapacity.REFUSE:
                raise CapacityReached(
                    f"Project {project.name} already runs {running} of its {cap} concurrent streams"
                    f"{f' and {waiting} wait' if waiting else ''}; profile {profile.slug} refuses requests over the "
                    f"cap. End a session or try again later.")
            return StreamSession.objects.create(state=State.QUEUED, **fields)
        workload = _submit(user=user, project=project, app=app, version=chosen, profile=profile, arguments=arguments)
        return StreamSession.objects.create(id=workload.pk, state=State.LAUNCHED, workload=workload, launched_at=now,
                                            last_activity_at=now, **fields)


def _ended(session: StreamSession, message: str, now: datetime, *, idle: bool = False) -> None:
    session.state, session.message, session.ended_at = State.ENDED, message, now
    session.save(update_fields=["state", "message", "ended_at"])
    announce_ended(StreamSession, session_id=str(session.pk), idle=idle, message=message)


def session_end(*, user, session: StreamSession) -> StreamSession:
    """End a session: a queued one leaves the queue, a launched one's cluster objects are removed (its workload
    row is kept as deleted); the project's queue moves on."""
    if not has_project_role(user, session.project_id, Level.MEMBER):
        raise errors.forbidden(errors.SESSION_FORBIDDEN)
    now = timezone.now()
    with transaction.atomic():
        _lock(session.project_id)
        session = StreamSession.objects.select_related("workload").get(pk=session.pk)
        if session.workload is not None and session.workload.deleted_at is None:
            workload_delete(workload=session.workload, user=user)
        _ended(session, f"Ended by {user.get_username()}.", now)
        _admit_locked(session.project_id, now)
    return session


def session_touch(*, session: StreamSession, now: datetime | None = None) -> None:
    """A client asked about the session: it is in use. One UPDATE, at most every TOUCH_EVERY."""
    now = now or timezone.now()
    if session.last_activity_at is None or now - session.last_activity_at >= TOUCH_EVERY:
        StreamSession.objects.filter(pk=session.pk).update(last_activity_at=now)
        session.last_activity_at = now


def sessions_govern(now: datetime | None = None) -> dict:
    """The round (beat): sessions whose workload went away end; running sessions idle past their profile's
    idle time end; every project's queue is admitted. Returns what it did, for the log and the tests."""
    now = now or timezone.now()
    gone = StreamSession.objects.filter(state=State.LAUNCHED, workload__deleted_at__isnull=False)
    gone_count = gone.update(state=State.ENDED, ended_at=now, message="Its workload was deleted.")
    ended = []
    candidates = list(StreamSession.objects.filter(
        state=State.LAUNCHED, idle_timeout_seconds__isnull=False, workload__deleted_at__isnull=True,
        workload__actual_phase=Workload.Phase.RUNNING).select_related("workload"))
    busy = dict(MetricSample.objects.filter(
        workload_id__in=[s.workload_id for s in candidates], type="GPU_UTILIZATION", pod_name="",
        value__gte=settings.GPU_IDLE_THRESHOLD_PERCENT).values("workload_id").annotate(at=Max("timestamp"))
        .values_list("workload_id", "at")) if candidates else {}
    for session in candidates:
        verdict = idle_verdict(timeout=session.idle_timeout_seconds, now=now,
                               running_since=session.workload.phase_updated_at or session.launched_at,
                               last_activity=session.last_activity_at, busy_at=busy.get(session.workload_id))
        if verdict is None:
            continue
        with transaction.atomic():
            _lock(session.project_id)
            session = StreamSession.objects.select_related("workload").get(pk=session.pk)
            if session.state != State.LAUNCHED or session.workload is None or session.workload.deleted_at:
                continue  # ended meanwhile
            workload_delete_by_system(workload=session.workload, reason=IDLE_REASON, message=verdict)
            _ended(session, verdict, now, idle=True)
        ended.append(str(session.pk))
    admitted = 0
    for project_id in StreamSession.objects.filter(state=State.QUEUED).values_list("project_id", flat=True).distinct():
        admitted += sessions_admit(project_id=project_id, now=now)
    return {"ended_idle": ended, "ended_gone": gone_count, "admitted": admitted}


def limit_set(*, actor, project: Project, max_sessions: int | None) -> StreamLimit:
    """Set the project's cap (None: none; audited); a raised cap admits waiting requests at once."""
    with transaction.atomic():
        _lock(project.pk)
        limit = StreamLimit.objects.filter(project=project).first()
        if limit is None:
            limit = model_create(StreamLimit, actor=actor, project=project, max_sessions=max_sessions)
        elif limit.max_sessions != max_sessions:
            limit = model_update(limit, actor=actor, max_sessions=max_sessions)
        _admit_locked(project.pk, timezone.now())
    return limit
