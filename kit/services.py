"""Writes of Kit App Streaming: applications, versions and profiles (platform admins; audited), and the
launch and end of streaming sessions, which are workloads of kind "stream" (workloads.services).

A session's spec is a snapshot of its application version and profile at launch (kit.streams.stream_spec):
changing or deleting either afterwards leaves running sessions as they are."""

from django.db import transaction
from rest_framework.exceptions import ValidationError

from kit import errors
from kit.matching import LATEST, matches, newest
from kit.models import Application, ApplicationProfile, ApplicationVersion
from kit.streams import DEFAULT_PORTS, SETTINGS, stream_spec
from sharing.services import sharing_set
from studio.errors import Conflict
from studio.iam.permissions import has_project_role
from studio.models import Level, Project
from studio.services import model_create, model_delete, model_update
from workloads.models import Workload
from workloads.services import workload_delete, workload_submit

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


# --- sessions ----------------------------------------------------------------------------------------

def _launch_project(user, project_id: int | None) -> Project:
    """The body's projectId, else the caller's only project; the caller must be a member or admin there."""
    if project_id is None:
        ids = list(Project.objects.visible_to(user).values_list("id", flat=True)[:2])
        if len(ids) != 1:
            reason = "you belong to several projects" if ids else "you belong to no project"
            raise ValidationError({"projectId": [f"Give the project to launch in: {reason}."]})
        project_id = ids[0]
    project = Project.objects.visible_to(user).filter(pk=project_id).first()
    if project is None:
        raise ValidationError({"projectId": ["No such project, or you are not a member of it."]})
    if not has_project_role(user, project, Level.MEMBER):
        raise errors.forbidden(errors.LAUNCH_FORBIDDEN)
    return project


def _version(app: Application, version: str | None) -> ApplicationVersion:
    rows = {row.version: row for row in app.versions.all()}
    if version in (None, "", LATEST):
        if not rows:
            raise errors.not_found(errors.VERSION_NOT_FOUND)
        return rows[newest(rows)]
    if version not in rows:
        raise errors.not_found(errors.VERSION_NOT_FOUND)
    return rows[version]


def session_launch(*, user, app_id: str, profile_id: str, version: str | None = None,
                   arguments: dict | None = None, project_id: int | None = None) -> Workload:
    """Launch `app_id` at `version` (default: the newest) with the profile, as a stream workload of the
    project. The profile must be one the project may use (owned or shared) and must serve that version;
    otherwise it is "not found", as for any profile the caller cannot see."""
    project = _launch_project(user, project_id)
    app = Application.objects.filter(pk=app_id).first()
    if app is None:
        raise errors.not_found(errors.APPLICATION_NOT_FOUND)
    chosen = _version(app, version)
    profile = ApplicationProfile.objects.for_project(project).filter(slug=profile_id).first()
    if profile is None or not matches(profile.supported_applications, app.id, chosen.version):
        raise errors.not_found(errors.PROFILE_NOT_FOUND)
    arguments = dict(arguments or {})
    spec = stream_spec(image=chosen.image, settings={f: getattr(profile, f) for f in SETTINGS}, arguments=arguments)
    request = {"name": app.id, "useGivenNameAsPrefix": True, "projectId": project.pk,
               "clusterId": str(project.cluster_id), "spec": spec}
    provenance = {
        "profile_id": profile.pk, "profile_name": profile.slug, "profile_revision": profile.revision,
        "launch_inputs": {"application": app.id, "version": chosen.version, "profile": profile.slug,
                          "arguments": arguments},
    }
    return workload_submit(kind=Workload.Kind.STREAM, request=request, user=user, source=Workload.Source.STREAM,
                           provenance=provenance)


def session_end(*, user, session: Workload) -> Workload:
    """Remove the session's cluster objects (the workload row is kept as deleted)."""
    if not has_project_role(user, session.project_id, Level.MEMBER):
        raise errors.forbidden(errors.SESSION_FORBIDDEN)
    return workload_delete(workload=session, user=user)
