"""Reads of profiles and templates, each starting from what the caller or project may see; the outputs of a
launched workload; the Kubernetes Secret of a launch, for the pipeline."""

import base64
import json
from functools import lru_cache

from django.db.models import OuterRef, Prefetch, QuerySet, Subquery, TextField
from django.db.models.functions import Cast

from perf import keyed_rows
from profiles.compose import MASK
from profiles.models import EnvironmentTemplate, LaunchSecret, ServiceProfile, TemplateVersion
from profiles.rendering import evaluate
from studio.iam.permissions import has_project_role
from studio.models import Level, Project


def profiles_visible_to(user) -> QuerySet:
    return (ServiceProfile.objects.visible_to(user)
            .select_related("template_version__template").prefetch_related("shared_with"))


def catalog_for(project: Project) -> QuerySet:
    """What the project's members may launch: profiles it owns or that are shared with it, set up (no draft), on
    an active version. One query however many profiles (sharing is an EXISTS, the version a join)."""
    return (ServiceProfile.objects.for_project(project)
            .filter(template_version__state=TemplateVersion.State.ACTIVE, draft_step="")
            .select_related("template_version__template"))


# The columns a catalog entry shows (profiles.serializers.CatalogEntrySerializer); labels, annotations, extra
# config and the readme's source stay in the database.
CATALOG_COLUMNS = ("id", "name", "display_name", "description", "service_type", "icon_url", "readme_html",
                   "revision", "inputs", "outputs", "template_version_id")


def catalog_entries_for(project: Project) -> QuerySet:
    """The catalog as its API shows it: the shown columns only. Its template versions are read by
    `with_versions` once the page is cut."""
    return catalog_for(project).select_related(None).only(*CATALOG_COLUMNS)


_JSON_COLUMNS = ("inputs", "outputs")


def catalog_rows_for(project: Project) -> QuerySet:
    """`catalog_entries_for` as rows (values() of the shown columns) for a page of the list: `listed_profiles`
    makes them what the entry serializer reads. Building 100 model instances with deferred fields was a tenth of
    the page's CPU. The JSON columns come as their text, decoded by `listed_profiles` with orjson (json's
    decoding of a page's inputs and outputs was a seventh of its CPU)."""
    shown = [name for name in CATALOG_COLUMNS if name not in _JSON_COLUMNS]
    return catalog_entries_for(project).values(
        *shown, **{f"{name}_text": Cast(name, TextField()) for name in _JSON_COLUMNS})


class ListedProfile:
    """A catalog page's row with what CatalogEntrySerializer reads of a profile: its columns, its template
    version (set by `listed_profiles`) and the icon the model's property derives from them."""

    icon_src = ServiceProfile.icon_src

    def __init__(self, row: dict):
        self.__dict__.update(row)


# What a catalog entry shows of its template version, and of the template (which names a system icon).
VERSION_COLUMNS = ("id", "kind", "variables", "outputs", "template__name", "template__system")


def _versions(profiles) -> dict:
    """The template versions of these profiles by id: the shown columns, each version read (and its JSON decoded)
    once however many profiles use it, in one query (keyed_rows: a prefetch's machinery and its compiled query
    were a third of a page's CPU), where a join repeated the version's columns on every row."""
    ids = sorted({profile.template_version_id for profile in profiles})
    return {version.pk: version for version in keyed_rows.rows(
        TemplateVersion, related=("template",), only=VERSION_COLUMNS, id=ids)} if ids else {}


def with_versions(profiles: list[ServiceProfile]) -> list[ServiceProfile]:
    """The profiles with their template versions cached on them (`_versions`)."""
    versions, field = _versions(profiles), ServiceProfile._meta.get_field("template_version")
    for profile in profiles:
        field.set_cached_value(profile, versions.get(profile.template_version_id))
    return profiles


@lru_cache(maxsize=2048)
def _shown_json(text: str):
    """A profile's inputs or outputs decoded, kept per process by their text for the next pages that show them
    (a catalog is read again and again; its profiles seldom change, and a changed one has a new text): decoding was
    a tenth of a page's CPU. Shared between pages, so read only: CatalogEntrySerializer copies what it shows."""
    return json.loads(text)


def listed_profiles(rows: list[dict]) -> list[ListedProfile]:
    """A page of `catalog_rows_for` as ListedProfiles with their template versions (`_versions`)."""
    profiles = [ListedProfile(row) for row in rows]
    for profile in profiles:
        for name in _JSON_COLUMNS:
            text = profile.__dict__.pop(f"{name}_text")
            setattr(profile, name, None if text is None else _shown_json(text))
    versions = _versions(profiles)
    for profile in profiles:
        profile.template_version = versions.get(profile.template_version_id)
    return profiles


def templates_visible_to(user) -> QuerySet:
    versions = TemplateVersion.objects.only("id", "template_id", "version", "kind", "state", "created_at")
    return (EnvironmentTemplate.objects.visible_to(user)
            .prefetch_related("shared_with", Prefetch("versions", queryset=versions)))


def workload_outputs(*, workload, user) -> list[dict]:
    """The workload's outputs from the snapshot taken at launch: `{name, label, sensitive, value}`, value null
    while an endpoint it needs is not yet known. Sensitive values (a notebook's token, a secret input) only for
    whoever launched the workload, the project's admins and platform admins; other members and viewers, who
    may see the workload, read "***"."""
    snapshot = workload.outputs or []
    if not snapshot:
        return []
    member = sensitive_outputs_visible(workload=workload, user=user)
    endpoints = workload.endpoints or {}
    context = {
        "workload.name": workload.name,
        "project.name": workload.project.name,
        "workload.url": endpoints.get("url") or None,
        "workload.serviceAddress": endpoints.get("serviceAddress") or None,
        **{f"inputs.{name}": value for name, value in (workload.launch_inputs or {}).items()},
    }
    if member and any(output.get("sensitive") for output in snapshot):
        row = LaunchSecret.objects.filter(workload_id=workload.pk).first()
        for key, value in (row.data if row else {}).items():
            context[key if key.startswith("generated.") else f"inputs.{key}"] = value
    return [{"name": output["name"], "label": output["label"], "sensitive": bool(output.get("sensitive")),
             "value": MASK if output.get("sensitive") and not member else evaluate(output["expression"], context)}
            for output in snapshot]


def sensitive_outputs_visible(*, workload, user) -> bool:
    submitter = workload.created_by_id is not None and workload.created_by_id == getattr(user, "pk", None)
    return submitter or has_project_role(user, workload.project_id, Level.ADMIN)  # platform admins act as admins


def launch_secret_manifest(workload_id, *, namespace: str, labels: dict[str, str]) -> dict | None:
    """The v1 Secret that a catalog workload's environment variables reference, or None when it has none.
    The pipeline creates it (create-or-adopt) before the workload's own objects."""
    row = LaunchSecret.objects.filter(workload_id=workload_id).first()
    if row is None:
        return None
    data = {key: base64.b64encode(value.encode()).decode() for key, value in row.data.items()}
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": row.name, "namespace": namespace, "labels": dict(labels)}, "data": data}


def profile_revision_subquery():
    """The current revision of the profile a workload was launched from (null when none or deleted): one
    correlated subquery, so that lists can say `outdated` without a query per row (workloads.launch.upgrades)."""
    return Subquery(ServiceProfile.objects.filter(pk=OuterRef("profile_id")).values("revision")[:1])
