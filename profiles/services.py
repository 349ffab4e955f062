"""Writes of environment templates, their versions and service profiles: validated, audited, atomic.

System rows (shipped by `manage.py system_profiles`) are read-only to everyone else: each write refuses them
with a 403 unless the command passes `allow_system=True`. A profile's `revision` goes up by one on every
change that changes something; a launched workload keeps the revision it came from."""

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from rest_framework.exceptions import PermissionDenied

from profiles.models import EnvironmentTemplate, ServiceProfile, TemplateVersion
from profiles.rendering import readme_html
from profiles.validation import check_profile, check_version, clean_outputs, clean_variables
from sharing.models import SharingMode
from sharing.services import sharing_set
from studio.audit import audit_record, diff, snapshot
from studio.errors import Conflict
from studio.models import AuditEvent, Project
from studio.services import model_delete

SYSTEM_MESSAGES = {
    ServiceProfile: "System profiles are read-only; clone one to make an editable copy.",
    EnvironmentTemplate: "System environment templates are read-only; create a template of your own.",
}
# Derived or bookkeeping columns: a write that changes only these changes nothing.
UNTRACKED = {"revision", "updated_at", "readme_html"}
API_NAMES = {"spec_template": "specTemplate"}


def ensure_editable(obj) -> None:
    """403 for a system row: the views call it before reading the body, the services again before writing."""
    if getattr(obj, "system", False):
        raise PermissionDenied(SYSTEM_MESSAGES[type(obj)])


def _author(actor) -> dict:
    if actor is not None and getattr(actor, "is_authenticated", False):
        return {"created_by": actor, "created_by_name": actor.email or actor.get_username()}
    return {"created_by": None, "created_by_name": "system"}


def _share(*, actor, obj, sharing: dict | None) -> bool:
    """Apply {"mode", "projectIds"} when it changes the sharing; True if it did. Errors as `sharing.<field>`."""
    if sharing is None:
        return False
    mode, ids = sharing.get("mode", SharingMode.NONE), sorted(set(sharing.get("projectIds") or []))
    if obj.pk is not None and obj.sharing() == {"mode": mode, "projectIds": ids}:
        return False
    try:
        sharing_set(actor=actor, obj=obj, mode=mode, project_ids=ids)
    except ValidationError as exc:
        raise ValidationError({f"sharing.{field}": messages for field, messages in exc.message_dict.items()}) from exc
    return True


def _insert(instance, *, actor, sharing: dict | None):
    instance.full_clean(validate_unique=False)  # a taken name is a 409, from the database
    try:
        with transaction.atomic():
            instance.save()
            audit_record(actor=actor, action=AuditEvent.Action.CREATE, instance=instance)
            _share(actor=actor, obj=instance, sharing=sharing)
    except IntegrityError as exc:
        raise Conflict(f"A {instance._meta.verbose_name} named {instance.name!r} already exists.") from exc
    return instance


def _immutable_name(obj, changes: dict) -> None:
    if "name" in changes and changes["name"] != obj.name:
        raise ValidationError({"name": "The unique name cannot be changed once created."})


# --- environment templates -----------------------------------------------------------------------------

def template_create(*, actor, name: str, display_name: str = "", description: str = "",
                    owner_project: Project | None = None, sharing: dict | None = None,
                    system: bool = False) -> EnvironmentTemplate:
    template = EnvironmentTemplate(name=name, display_name=display_name, description=description,
                                   owner_project=owner_project, system=system, **_author(actor))
    return _insert(template, actor=actor, sharing=sharing)


def template_update(*, actor, template: EnvironmentTemplate, allow_system: bool = False,
                    **changes) -> EnvironmentTemplate:
    if not allow_system:
        ensure_editable(template)
    _immutable_name(template, changes)
    sharing = changes.pop("sharing", None)
    with transaction.atomic():
        before = snapshot(template)
        for field, value in changes.items():
            setattr(template, field, value)
        template.full_clean(validate_unique=False)
        _share(actor=actor, obj=template, sharing=sharing)
        if diff(before, snapshot(template)).keys() - UNTRACKED:
            template.save()
            audit_record(actor=actor, action=AuditEvent.Action.UPDATE, instance=template, before=before)
    return template


def template_delete(*, actor, template: EnvironmentTemplate) -> None:
    ensure_editable(template)
    model_delete(template, actor=actor)  # 409 while a version of it backs a profile


def version_create(*, actor, template: EnvironmentTemplate, version: str, kind: str, spec_template: dict,
                   variables: list[dict] | None = None, outputs: list[dict] | None = None,
                   state: str = TemplateVersion.State.DRAFT, allow_system: bool = False) -> TemplateVersion:
    if not allow_system:
        ensure_editable(template)
    variables, outputs = check_version(kind=kind, spec_template=spec_template, variables=variables or [],
                                       outputs=outputs or [])
    row = TemplateVersion(template=template, version=version, kind=kind, spec_template=spec_template,
                          variables=variables, outputs=outputs, state=state)
    row.full_clean(validate_unique=False, validate_constraints=False)
    try:
        with transaction.atomic():
            row.save()
            audit_record(actor=actor, action=AuditEvent.Action.CREATE, instance=row)
    except IntegrityError as exc:
        raise Conflict(f"Template {template.name} already has a version {version}.") from exc
    return row


def version_update(*, actor, template_version: TemplateVersion, allow_system: bool = False,
                   **changes) -> TemplateVersion:
    """A draft takes any change; an active or disabled version only a change of state (a new version is made
    for anything else), and never goes back to draft."""
    version = template_version
    if not allow_system:
        ensure_editable(version.template)
    state = changes.pop("state", version.state)
    if version.state != TemplateVersion.State.DRAFT:
        frozen = {API_NAMES.get(f, f): f"This version is {version.state} and cannot be edited; create a new version."
                  for f, value in _comparable(changes, version).items() if getattr(version, f) != value}
        if state == TemplateVersion.State.DRAFT:
            frozen["state"] = f"This version is {version.state} and cannot go back to draft."
        if frozen:
            raise ValidationError(frozen)
    before = snapshot(version)
    for field, value in changes.items():
        setattr(version, field, value)
    version.state = state
    if before["state"] == TemplateVersion.State.DRAFT:
        version.variables, version.outputs = check_version(
            kind=version.kind, spec_template=version.spec_template, variables=version.variables,
            outputs=version.outputs)
    version.full_clean(validate_unique=False, validate_constraints=False)
    if not diff(before, snapshot(version)).keys() - UNTRACKED:
        return version
    try:
        with transaction.atomic():
            version.save()
            audit_record(actor=actor, action=AuditEvent.Action.UPDATE, instance=version, before=before)
    except IntegrityError as exc:
        raise Conflict(f"Template {version.template.name} already has a version {version.version}.") from exc
    return version


def _comparable(changes: dict, version: TemplateVersion) -> dict:
    """Changes with variables and outputs in their stored (cleaned) form, so that sending a version back
    unchanged is no edit."""
    out = dict(changes)
    if "variables" in out:
        out["variables"] = clean_variables(out["variables"])[0]
    if "outputs" in out:
        out["outputs"] = clean_outputs(out["outputs"], out.get("variables", version.variables))[0]
    return out


def version_delete(*, actor, template_version: TemplateVersion) -> None:
    ensure_editable(template_version.template)
    model_delete(template_version, actor=actor)  # 409 while it backs a profile


# --- service profiles ----------------------------------------------------------------------------------

def _require_active(version: TemplateVersion) -> None:
    if version.state != TemplateVersion.State.ACTIVE:
        raise ValidationError({"environmentTemplateVersion": (
            f"Only an active version can back a profile; {version.template.name} {version.version} is "
            f"{version.state}.")})


def profile_create(*, actor, name: str, template_version: TemplateVersion, service_type: str,
                   owner_project: Project | None = None, display_name: str = "", description: str = "",
                   icon_url: str = "", readme: str = "", labels: dict | None = None,
                   annotations: dict | None = None, extra_config: dict | None = None,
                   inputs: list[dict] | None = None, outputs: list[dict] | None = None,
                   sharing: dict | None = None, system: bool = False, draft_step: str = "") -> ServiceProfile:
    _require_active(template_version)
    labels, annotations, extra_config = labels or {}, annotations or {}, extra_config or {}
    input_settings, output_settings = check_profile(
        version=template_version, labels=labels, annotations=annotations, extra_config=extra_config,
        inputs=inputs or [], outputs=outputs or [])
    profile = ServiceProfile(
        name=name, display_name=display_name or name, description=description, owner_project=owner_project,
        template_version=template_version, service_type=service_type, icon_url=icon_url, readme=readme,
        readme_html=readme_html(readme), labels=labels, annotations=annotations, extra_config=extra_config,
        inputs=input_settings, outputs=output_settings, system=system, draft_step=draft_step, **_author(actor))
    return _insert(profile, actor=actor, sharing=sharing)


def _carried(settings: list[dict], names) -> list[dict]:
    names = set(names)
    return [setting for setting in settings if setting.get("name") in names]


def profile_update(*, actor, profile: ServiceProfile, allow_system: bool = False, **changes) -> ServiceProfile:
    """Change any field but the name; settings of variables the new version still has are carried over when
    the version changes and no new settings are given."""
    if not allow_system:
        ensure_editable(profile)
    _immutable_name(profile, changes)
    sharing = changes.pop("sharing", None)
    with transaction.atomic():
        profile = ServiceProfile.objects.select_for_update().select_related("template_version").get(pk=profile.pk)
        before = snapshot(profile)
        version = changes.get("template_version", profile.template_version)
        if version.pk != profile.template_version_id:
            _require_active(version)
            changes.setdefault("inputs", _carried(profile.inputs, (v["name"] for v in version.variables)))
            changes.setdefault("outputs", _carried(profile.outputs, (o["name"] for o in version.outputs)))
        for field, value in changes.items():
            setattr(profile, field, value)
        if "display_name" in changes and not profile.display_name:
            profile.display_name = profile.name
        profile.inputs, profile.outputs = check_profile(
            version=version, labels=profile.labels, annotations=profile.annotations,
            extra_config=profile.extra_config, inputs=profile.inputs, outputs=profile.outputs)
        profile.readme_html = readme_html(profile.readme)
        profile.full_clean(validate_unique=False)
        shared = _share(actor=actor, obj=profile, sharing=sharing)
        changed = bool(diff(before, snapshot(profile)).keys() - UNTRACKED)
        if changed or shared:
            profile.revision += 1
            profile.save()
            audit_record(actor=actor, action=AuditEvent.Action.UPDATE, instance=profile, before=before)
    return profile


def profile_delete(*, actor, profile: ServiceProfile) -> None:
    """Gone from every catalog; workloads launched from it keep their spec and provenance (no foreign key)."""
    ensure_editable(profile)
    model_delete(profile, actor=actor)


def profile_clone(*, actor, profile: ServiceProfile, name: str, owner_project: Project | None = None,
                  display_name: str | None = None) -> ServiceProfile:
    """An editable copy (not shared, revision 1) of any profile, system ones included. Its display name is the
    given one, else the source's marked "(copy)", so that a catalog never shows two entries of the same name."""
    return profile_create(
        actor=actor, name=name, owner_project=owner_project, template_version=profile.template_version,
        service_type=profile.service_type, display_name=display_name or f"{profile.display_name} (copy)"[:200],
        description=profile.description,
        icon_url=profile.icon_url, readme=profile.readme, labels=dict(profile.labels),
        annotations=dict(profile.annotations), extra_config=dict(profile.extra_config),
        inputs=[dict(s) for s in profile.inputs], outputs=[dict(s) for s in profile.outputs])


def profile_share(*, actor, profile: ServiceProfile, mode: str, project_ids: list[int]) -> ServiceProfile:
    return profile_update(actor=actor, profile=profile, sharing={"mode": mode, "projectIds": project_ids})
