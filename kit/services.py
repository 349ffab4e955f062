"""Writes of Kit App Streaming's catalogue: applications, versions and profiles (platform admins; audited).
Sessions are kit.sessions'.

A session's spec is a snapshot of its application version and profile at launch (kit.streams.stream_spec):
changing or deleting either afterwards leaves running sessions as they are."""

from django.db import transaction
from rest_framework.exceptions import ValidationError

from kit.models import Application, ApplicationProfile, ApplicationVersion
from kit.streams import DEFAULT_PORTS
from sharing.services import sharing_set
from studio.errors import Conflict
from studio.models import Project
from studio.services import model_create, model_delete, model_update

# --- applications and versions -----------------------------------------------------------------------

def application_create(*, actor, app_id: str, name: str, description: str = "",
                       tags: list[str] | None = None) -> Application:
    if Application.objects.filter(pk=app_id).exists():
        raise Conflict(f"An application with id {app_id!r} already exists.")
    return model_create(Application, actor=actor, id=app_id, name=name, description=description, tags=tags or [])


def application_update(*, actor, application: Application, **fields) -> Application:
    if "id" in fields:
        raise ValidationError({"id": ["An application's id cannot be changed."]})
    return model_update(application, actor=actor, **fields)


def application_delete(*, actor, application: Application) -> None:
    """Its versions go with it; sessions launched from them keep running (they hold a snapshot)."""
    model_delete(application, actor=actor)


def version_create(*, actor, application: Application, version: str, container: str, container_version: str,
                   helm_chart: str = "", helm_chart_version: str = "") -> ApplicationVersion:
    if application.versions.filter(version=version).exists():
        raise Conflict(f"Application {application.id!r} already has version {version}.")
    return model_create(ApplicationVersion, actor=actor, application=application, version=version,
                        container=container, container_version=container_version, helm_chart=helm_chart,
                        helm_chart_version=helm_chart_version)


def version_delete(*, actor, version: ApplicationVersion) -> None:
    """Allowed while sessions of the version run: they keep running."""
    model_delete(version, actor=actor)


# --- profiles ----------------------------------------------------------------------------------------

def _owner(project_id: int | None) -> Project | None:
    if project_id is None:
        return None
    project = Project.objects.filter(pk=project_id).first()
    if project is None:
        raise ValidationError({"projectId": [f"No such project: {project_id}."]})
    return project


def profile_create(*, actor, profile_id: str, fields: dict, owner_project_id: int | None = None,
                   sharing: dict | None = None) -> ApplicationProfile:
    if ApplicationProfile.objects.filter(slug=profile_id).exists():
        raise Conflict(f"An application profile with id {profile_id!r} already exists.")
    fields = {"ports": [dict(p) for p in DEFAULT_PORTS], **fields}
    with transaction.atomic():
        profile = model_create(ApplicationProfile, actor=actor, slug=profile_id, created_by=actor,
                               owner_project=_owner(owner_project_id), **fields)
        if sharing is not None:
            sharing_set(actor=actor, obj=profile, mode=sharing["mode"], project_ids=sharing.get("projectIds"))
    return profile


KEEP = object()  # profile_update: leave the owner project as it is


def profile_update(*, actor, profile: ApplicationProfile, fields: dict, owner_project_id=KEEP,
                   sharing: dict | None = None) -> ApplicationProfile:
    """Later launches use the new settings; running sessions keep the revision they were launched from.
    `owner_project_id` None removes the owner project."""
    if owner_project_id is not KEEP:
        fields = {**fields, "owner_project": _owner(owner_project_id)}
    with transaction.atomic():
        if fields:
            profile = model_update(profile, actor=actor, revision=profile.revision + 1, **fields)
        if sharing is not None:
            sharing_set(actor=actor, obj=profile, mode=sharing["mode"], project_ids=sharing.get("projectIds"))
    return profile


def profile_delete(*, actor, profile: ApplicationProfile) -> None:
    model_delete(profile, actor=actor)
