"""Reads of Kit apps, versions, profiles and sessions, each scoped to what the caller may see.

Applications and versions are readable by every authenticated caller. A profile is visible through `sharing`:
to the members of its owner project and of the projects it is shared with; platform admins see every profile.
A caller who belongs to no project (and is no platform admin) may see no profile at all: the profile reads
answer 403, while an unshared profile is a 404 (never leak another project's objects)."""

import uuid

from django.db.models import Q, QuerySet
from rest_framework.exceptions import ValidationError

from kit import errors
from kit.matching import WILDCARD, is_version, matching, newest_first
from kit.models import Application, ApplicationProfile, ApplicationVersion, StreamSession
from studio.iam.permissions import visible_project_ids
from studio.models import Project, is_platform_admin


def _invalid_version(version: str) -> None:
    if version != WILDCARD and not is_version(version):
        raise ValidationError({"version": ["Must be a semantic version such as 1.2.3, or '*'."]})


def applications(*, tags: list[str] | None = None) -> QuerySet[Application]:
    """Every application; with `tags`, those that carry every one of them."""
    rows = Application.objects.all()
    if tags:
        wanted = set(tags)
        rows = rows.filter(pk__in=[pk for pk, have in Application.objects.values_list("pk", "tags")
                                   if wanted <= set(have or ())])
    return rows


def application_get(*, app_id: str, message: str = errors.APPLICATION_NOT_FOUND) -> Application:
    app = Application.objects.filter(pk=app_id).first()
    if app is None:
        raise errors.not_found(message)
    return app


def versions_newest_first(*, app: Application) -> list[ApplicationVersion]:
    rows = {row.version: row for row in app.versions.all()}
    return [rows[v] for v in newest_first(rows)]


def version_get(*, app: Application, version: str, message: str = errors.VERSION_NOT_FOUND) -> ApplicationVersion:
    row = app.versions.filter(version=version).first()
    if row is None:
        raise errors.not_found(message)
    return row


def may_see_profiles(user, client_url=None) -> bool:
    return client_url is not None or is_platform_admin(user) or Project.objects.visible_to(user).exists()


def profiles_visible(*, user, client_url=None) -> QuerySet[ApplicationProfile]:
    """Through a client URL: the profiles its project may launch with (owned or shared)."""
    if client_url is not None:
        return ApplicationProfile.objects.for_project(client_url.project_id)
    return ApplicationProfile.objects.visible_to(user)


def profile_get(*, user, profile_id: str, client_url=None) -> ApplicationProfile:
    """A profile by id, for `/cfg/profiles/{profile}`: 403 without any project, 404 when not visible."""
    if not may_see_profiles(user, client_url):
        raise errors.forbidden(errors.PROFILE_FORBIDDEN)
    profile = profiles_visible(user=user, client_url=client_url).prefetch_related("shared_with").filter(slug=profile_id).first()
    if profile is None:
        raise errors.not_found(errors.PROFILE_NOT_FOUND)
    return profile


def _check_path(app_id: str, version: str, message: str) -> None:
    """The app and version of a `/cfg/apps/{id}/versions/{version}/profiles` path exist; `*` stands for any."""
    _invalid_version(version)
    if app_id != WILDCARD:
        app = application_get(app_id=app_id, message=message)
        if version != WILDCARD:
            version_get(app=app, version=version, message=message)
    elif version != WILDCARD and not ApplicationVersion.objects.filter(version=version).exists():
        raise errors.not_found(message)


def profiles_for_path(*, user, app_id: str, version: str, client_url=None) -> list[ApplicationProfile]:
    """Visible profiles that serve `app_id` at `version` (either may be `*`), ordered by id."""
    if not may_see_profiles(user, client_url):
        raise errors.forbidden(errors.RESOURCE_FORBIDDEN)
    _check_path(app_id, version, errors.PROFILES_NOT_FOUND)
    rows = profiles_visible(user=user, client_url=client_url).only("slug", "name", "description", "supported_applications")
    return matching(rows, app_id, version, supported=lambda p: p.supported_applications)


def profile_for_path(*, user, app_id: str, version: str, profile_id: str, client_url=None) -> ApplicationProfile:
    if not may_see_profiles(user, client_url):
        raise errors.forbidden(errors.PROFILE_FORBIDDEN)
    _check_path(app_id, version, errors.PROFILE_NOT_FOUND)
    rows = profiles_visible(user=user, client_url=client_url).filter(slug=profile_id)
    found = matching(rows, app_id, version, supported=lambda p: p.supported_applications)
    if not found:
        raise errors.not_found(errors.PROFILE_NOT_FOUND)
    return found[0]


def sessions_visible(*, user, client_url=None) -> QuerySet[StreamSession]:
    """Sessions that are waiting or launched and not ended, of the caller's projects (every project for platform
    admins; through a client URL, those launched through it), newest first."""
    rows = (StreamSession.objects.filter(Q(state=StreamSession.State.QUEUED) | Q(
        state=StreamSession.State.LAUNCHED, workload__deleted_at__isnull=True) | Q(state=StreamSession.State.FAILED))
        .select_related("project", "workload").order_by("-requested_at", "-id"))
    if client_url is not None:
        return rows.filter(client_url=client_url)
    if is_platform_admin(user):
        return rows
    return rows.filter(project_id__in=visible_project_ids(user))


def session_get(*, user, session_id: str, client_url=None, ended_too: bool = False) -> StreamSession:
    """A session the caller sees; an ended one only with `ended_too` (the portal shows why it ended)."""
    try:
        session_id = uuid.UUID(str(session_id))
    except ValueError:
        raise errors.not_found(errors.SESSION_NOT_FOUND) from None
    rows = sessions_visible(user=user, client_url=client_url)
    if ended_too:
        rows = StreamSession.objects.select_related("project", "workload").filter(
            pk__in=StreamSession.objects.filter(pk=session_id).values("pk"))
        if not is_platform_admin(user):
            rows = rows.filter(project_id__in=visible_project_ids(user))
    session = rows.filter(pk=session_id).first()
    if session is None:
        raise errors.not_found(errors.SESSION_NOT_FOUND)
    return session


def queue_positions(rows) -> dict:
    """{session id: its place in its project's queue (1 is next)} for the queued sessions among `rows`: one query."""
    queued = [s for s in rows if s.state == StreamSession.State.QUEUED]
    if not queued:
        return {}
    waiting = StreamSession.objects.filter(project_id__in={s.project_id for s in queued},
                                           state=StreamSession.State.QUEUED).order_by("requested_at", "id")
    places, seen = {}, {}
    for pk, project_id in waiting.values_list("pk", "project_id"):
        seen[project_id] = seen.get(project_id, 0) + 1
        places[pk] = seen[project_id]
    return {s.pk: places[s.pk] for s in queued if s.pk in places}
