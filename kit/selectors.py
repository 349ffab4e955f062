"""Reads of Kit apps, versions, profiles and sessions, each scoped to what the caller may see.

Applications and versions are readable by every authenticated caller. A profile is visible through `sharing`:
to the members of its owner project and of the projects it is shared with; platform admins see every profile.
A caller who belongs to no project (and is no platform admin) may see no profile at all: the profile reads
answer 403, while an unshared profile is a 404 (CONTRACT §1: never leak another project's objects)."""

import uuid

from django.db.models import QuerySet
from rest_framework.exceptions import ValidationError

from kit import errors
from kit.matching import WILDCARD, is_version, matching, newest_first
from kit.models import Application, ApplicationProfile, ApplicationVersion
from studio.models import Project, is_platform_admin
from workloads.models import Workload


def _invalid_version(version: str) -> None:
    if version != WILDCARD and not is_version(version):
        raise ValidationError({"version": ["Must be a semantic version such as 1.2.3, or '*'."]})


def applications() -> QuerySet[Application]:
    return Application.objects.all()


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


def may_see_profiles(user) -> bool:
    return is_platform_admin(user) or Project.objects.visible_to(user).exists()


def profiles_visible(*, user) -> QuerySet[ApplicationProfile]:
    return ApplicationProfile.objects.visible_to(user)


def profile_get(*, user, profile_id: str) -> ApplicationProfile:
    """A profile by id, for `/cfg/profiles/{profile}`: 403 without any project, 404 when not visible."""
    if not may_see_profiles(user):
        raise errors.forbidden(errors.PROFILE_FORBIDDEN)
    profile = profiles_visible(user=user).prefetch_related("shared_with").filter(slug=profile_id).first()
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


def profiles_for_path(*, user, app_id: str, version: str) -> list[ApplicationProfile]:
    """Visible profiles that serve `app_id` at `version` (either may be `*`), ordered by id."""
    if not may_see_profiles(user):
        raise errors.forbidden(errors.RESOURCE_FORBIDDEN)
    _check_path(app_id, version, errors.PROFILES_NOT_FOUND)
    rows = profiles_visible(user=user).only("slug", "name", "description", "supported_applications")
    return matching(rows, app_id, version, supported=lambda p: p.supported_applications)


def profile_for_path(*, user, app_id: str, version: str, profile_id: str) -> ApplicationProfile:
    if not may_see_profiles(user):
        raise errors.forbidden(errors.PROFILE_FORBIDDEN)
    _check_path(app_id, version, errors.PROFILE_NOT_FOUND)
    rows = profiles_visible(user=user).filter(slug=profile_id)
    found = matching(rows, app_id, version, supported=lambda p: p.supported_applications)
    if not found:
        raise errors.not_found(errors.PROFILE_NOT_FOUND)
    return found[0]


def sessions_visible(*, user) -> QuerySet[Workload]:
    """Live streaming sessions of the caller's projects (every project for platform admins), newest first."""
    return (
        Workload.objects.visible_to(user).live().filter(kind=Workload.Kind.STREAM)
        .select_related("project").order_by("-created_at", "-id")
    )


def session_get(*, user, session_id: str) -> Workload:
    try:
        session_id = uuid.UUID(str(session_id))
    except ValueError:
        raise errors.not_found(errors.SESSION_NOT_FOUND) from None
    session = sessions_visible(user=user).filter(pk=session_id).first()
    if session is None:
        raise errors.not_found(errors.SESSION_NOT_FOUND)
    return session
