"""Pages of PaaS Studio (service profiles and their wizard, environment templates and versions) and of the
catalog (cards). Thin views: reads go through the API's selectors and FilterSets, writes through the
API's serializers and services, so a page answers with the API's errors, shown next to the fields they name.

The launch pages (the wizard's "Try it", the catalog's launch form) are workloads' (workloads.launch_views).

The wizard saves every step: step 1 creates the profile as a draft (`draft_step`, the step to resume at), each
later step is an update of the profile, and the last one clears the draft, which puts it in the catalogs of the
projects it is shared with. Editing a profile goes through the same steps."""

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST
from rest_framework.exceptions import APIException
from rest_framework.exceptions import ValidationError as DRFValidationError

from assets.skus import catalog_templates, compute_skus
from profiles import forms, selectors, services
from profiles.filtersets import ServiceProfileFilterSet
from profiles.forms import api_errors, write_errors
from profiles.inputs import effective_inputs
from profiles.models import ServiceProfile, TemplateVersion
from profiles.rendering import readme_html
from profiles.resources import default_resources
from profiles.serializers import (
    CloneSerializer,
    EnvironmentTemplateSerializer,
    ServiceProfileSerializer,
    TemplateVersionSerializer,
)
from profiles.tables import ProfileTable, TemplateTable, profile_rows, template_rows
from profiles.validation import version_problems
from profiles.version_editor import VersionEditor
from profiles.wizard import STEP_NAMES, STEPS
from studio.audit_words import history_of
from studio.context import navigation
from studio.errors import flatten_errors
from studio.iam.permissions import has_project_role
from studio.models import Level, Project, is_platform_admin
from studio.pages import paged

WRITE_ERRORS = (DjangoValidationError, APIException)


def _admin_only(request):
    if not is_platform_admin(request.user):
        raise PermissionDenied


def _message(exc) -> str:
    return " ".join(error["message"] for error in api_errors(exc))


# --- service profiles ------------------------------------------------------------------------------------

def _profile(request, pk) -> ServiceProfile:
    return get_object_or_404(selectors.profiles_visible_to(request.user).select_related("owner_project"), pk=pk)


@login_required
def profile_list(request):
    _admin_only(request)
    table = ProfileTable(request, profile_rows(selectors.profiles_visible_to(request.user)))
    return render(request, "profiles/profile_list.html", {
        **table.context(),
        "search": request.GET.get("search", ""), "service_type": request.GET.get("serviceType", ""),
        "service_types": forms.SERVICE_TYPES, "system_only": "system==true" in request.GET.getlist("filterBy"),
    })


@login_required
def system_profiles(request):
    """The profiles PaaS Studio ships (the "System Profiles" page): cards to launch from the current
    project's catalog, or to clone into a project's own editable copy."""
    _admin_only(request)
    project = _current_project(request)
    in_catalog = set(selectors.catalog_for(project).filter(system=True).values_list("pk", flat=True)) if project else set()
    profiles = selectors.profiles_visible_to(request.user).filter(system=True).order_by("service_type", "name")
    return render(request, "profiles/system_profiles.html", {
        "profiles": profiles, "in_catalog": in_catalog, "project": project,
        "may_launch": project is not None and has_project_role(request.user, project, Level.MEMBER),
    })


def _detail_context(request, profile, clone_form=None) -> dict:
    version = profile.template_version
    expressions = {output["name"]: output for output in version.outputs}
    outputs = [{**setting, "expression": expressions.get(setting["name"], {}).get("expression", "")}
               for setting in profile.outputs]
    metadata = [("Labels", profile.labels), ("Annotations", profile.annotations),
                ("Extra configuration", profile.extra_config)]
    return {"profile": profile, "version": version, "outputs": outputs, "metadata": metadata,
            "inputs": effective_inputs(version.variables, profile.inputs),
            "clone_form": clone_form or forms.CloneForm(projects=Project.objects.order_by("name"), initial={
                "name": f"{profile.name}-copy"[:63], "displayName": f"{profile.display_name} (copy)",
                "projectId": str(profile.owner_project_id or getattr(_current_project(request), "pk", "") or "")})}


@login_required
def profile_detail(request, pk):
    _admin_only(request)
    profile = _profile(request, pk)
    return render(request, "profiles/profile_detail.html",
                  {**_detail_context(request, profile), "history": history_of(profile)})


def _version_choices(user, current: TemplateVersion | None):
    """Options of the version select for a template: its active versions (and the profile's own)."""
    templates = selectors.templates_visible_to(user)

    def choices(template_name: str) -> list[tuple[str, str, str]]:
        """(value, label, the version's workload kind) of each option."""
        versions = TemplateVersion.objects.filter(template__in=templates, template__name=template_name)
        options = [("", "Choose a version", "")]
        for version in versions.order_by("-created_at", "-id"):
            if version.state == TemplateVersion.State.ACTIVE or version == current:
                options.append((version.version, f"{version.version} ({version.kind}, {version.state})", version.kind))
        return options

    return choices


@login_required
@require_GET
def version_options(request):
    """The version options of the chosen template (htmx swaps them into the general step's select)."""
    _admin_only(request)
    choices = _version_choices(request.user, None)(request.GET.get("environmentTemplate", ""))
    return render(request, "profiles/_version_options.html", {"choices": choices})


@login_required
@require_POST
def readme_preview(request):
    _admin_only(request)
    html = readme_html(request.POST.get("readme", ""))  # nh3-cleaned, as the catalog shows it
    return HttpResponse(html or '<p class="muted">Nothing to preview.</p>')


def _save_step(user, profile: ServiceProfile | None, step: str, body: dict, *, advance: bool = True) -> ServiceProfile:
    """One step through the API's serializer and service: a create for step 1 of a new profile, else a PATCH.
    `advance=False` (Try it) saves the step and leaves a draft where it is."""
    serializer = ServiceProfileSerializer(profile, data=body, partial=profile is not None)
    serializer.is_valid(raise_exception=True)
    fields = serializer.service_fields()
    following = STEP_NAMES[STEP_NAMES.index(step) + 1] if step != STEP_NAMES[-1] else ""
    if profile is None:
        return services.profile_create(actor=user, draft_step=following, **fields)
    if advance and profile.is_draft and STEP_NAMES.index(step) >= STEP_NAMES.index(profile.draft_step):
        fields["draft_step"] = following  # a draft moves on; going back to an earlier step keeps its place
    return services.profile_update(actor=user, profile=profile, **fields)


def _after_step(request, profile: ServiceProfile, step: str):
    if request.POST.get("then") == "try":  # what this step chose is saved, then tried
        return redirect("profile-try", profile.pk)
    finished = step == STEP_NAMES[-1] or request.POST.get("then") == "done"
    if not finished:
        return redirect("profile-step", profile.pk, STEP_NAMES[STEP_NAMES.index(step) + 1])
    if profile.is_draft:
        messages.success(request, f"Saved {profile.name} as a draft; continue its setup from the list.")
    else:
        messages.success(request, f"Saved {profile.name}.")
    return redirect("profile-detail", profile.pk)


@login_required
def profile_step(request, pk=None, step="general"):
    _admin_only(request)
    profile = _profile(request, pk) if pk is not None else None
    if step not in STEPS or (profile is None and step != "general"):
        raise Http404
    if profile is not None and profile.system:
        messages.error(request, services.SYSTEM_MESSAGES[ServiceProfile])
        return redirect("profile-detail", profile.pk)
    title, step_class = STEPS[step]
    page = step_class(request.POST if request.method == "POST" else None, profile=profile,
                      templates=selectors.templates_visible_to(request.user), projects=Project.objects.all(),
                      version_choices=_version_choices(request.user, profile and profile.template_version))
    if request.method == "POST":
        body = page.payload()
        if body is not None:
            try:
                saved = _save_step(request.user, profile, step, body,
                                   advance=request.POST.get("then") != "try" or profile is None)
                return _after_step(request, saved, step)
            except WRITE_ERRORS as exc:
                page.file(write_errors(exc, conflict_field="name"))
    reached = STEP_NAMES.index(profile.draft_step) if profile is not None and profile.is_draft else (
        len(STEP_NAMES) if profile is not None else 0)
    return render(request, "profiles/wizard.html", {
        "profile": profile, "step": step, "title": title, "page": page,
        "steps": [{"name": name, "title": STEPS[name][0], "reachable": index <= reached}
                  for index, name in enumerate(STEP_NAMES)],
        "number": STEP_NAMES.index(step) + 1, "last": step == STEP_NAMES[-1],
        "previous": STEP_NAMES[STEP_NAMES.index(step) - 1] if step != STEP_NAMES[0] else None,
    })


@login_required
@require_POST
def profile_delete(request, pk):
    _admin_only(request)
    profile = _profile(request, pk)
    try:
        services.profile_delete(actor=request.user, profile=profile)
    except WRITE_ERRORS as exc:
        messages.error(request, _message(exc))
        return redirect("profile-detail", profile.pk)
    messages.success(request, f"Deleted {profile.name}.")
    return redirect("profile-list")


@login_required
@require_POST
def profile_clone(request, pk):
    _admin_only(request)
    source = _profile(request, pk)
    form = forms.CloneForm(request.POST, projects=Project.objects.order_by("name"))
    body = form.payload()
    try:
        fields = {"name": body["name"], "projectId": body["projectId"] or None}
        if body.get("displayName"):
            fields["displayName"] = body["displayName"]
        serializer = CloneSerializer(data=fields)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        owner = Project.objects.filter(pk=data.get("projectId")).first() if data.get("projectId") else None
        if owner is None:
            raise DRFValidationError({"projectId": ["Choose the project that owns the copy."]})
        copy = services.profile_clone(actor=request.user, profile=source, name=data["name"], owner_project=owner,
                                      display_name=data.get("displayName"))
    except WRITE_ERRORS as exc:
        form.file_all(write_errors(exc, conflict_field="name"))
        return render(request, "profiles/profile_detail.html", _detail_context(request, source, form))
    messages.success(request, f"Cloned {source.name} as {copy.name} in project {owner.name}: it is in that "
                              "project's catalog, and shared with no other yet.")
    return redirect("profile-detail", copy.pk)


# --- environment templates and versions ------------------------------------------------------------------

@login_required
def template_list(request):
    _admin_only(request)
    form = forms.TemplateForm(request.POST or None)
    if request.method == "POST":
        try:
            serializer = EnvironmentTemplateSerializer(data=form.payload())
            serializer.is_valid(raise_exception=True)
            template = services.template_create(actor=request.user, **serializer.service_fields())
            messages.success(request, f"Created {template.name}; add a version to it.")
            return redirect("template-detail", template.pk)
        except WRITE_ERRORS as exc:
            form.file_all(write_errors(exc, conflict_field="name"))
    table = TemplateTable(request, template_rows(selectors.templates_visible_to(request.user)))
    return render(request, "profiles/template_list.html", {
        **table.context(), "form": form, "search": request.GET.get("search", "")})


def _version_problems(draft: dict | None, found: list[dict]) -> list[dict]:
    """The problems of the spec, variables and outputs as typed, at paths the save has not named yet: the API's
    serializer's (with the version number set aside), then, when it accepts them, the version check's."""
    if draft is None:
        return []
    serializer = TemplateVersionSerializer(data={
        "version": "0.0.0", "kind": draft["kind"], "specTemplate": draft["spec_template"],
        "variables": draft["variables"], "outputs": draft["outputs"]})
    if serializer.is_valid():
        fields = serializer.service_fields()
        *_, problems = version_problems(kind=fields["kind"], spec_template=fields["spec_template"],
                                        variables=fields.get("variables", []), outputs=fields.get("outputs", []))
        problems = flatten_errors(problems)
    else:
        problems = flatten_errors(serializer.errors)
    named = {error["field"] for error in found}
    return [error for error in problems if error["field"] not in named]


@login_required
def template_detail(request, pk):
    _admin_only(request)
    template = get_object_or_404(selectors.templates_visible_to(request.user), pk=pk)
    latest = template.versions.order_by("-created_at", "-id").first()
    initial = {"state": TemplateVersion.State.DRAFT}  # a new version starts as a copy of the newest one
    if latest is not None:
        initial.update(kind=latest.kind, specTemplate=json.dumps(latest.spec_template, indent=2))
    if request.method != "POST":
        editor = VersionEditor(initial=initial, variables=latest.variables if latest else (),
                               outputs=latest.outputs if latest else ())
    elif "switch" in request.POST or "more" in request.POST:  # a change of view or a new row: nothing saved
        editor = VersionEditor.rebuilt(request.POST, initial=initial)
    else:
        editor = VersionEditor(request.POST, initial=initial)
        body, found = editor.payload(), []
        if body is not None:
            try:
                services.ensure_editable(template)
                serializer = TemplateVersionSerializer(data=body)
                serializer.is_valid(raise_exception=True)
                version = services.version_create(actor=request.user, template=template,
                                                  **serializer.service_fields())
                messages.success(request, f"Added version {version.version} ({version.state}).")
                return redirect("template-detail", template.pk)
            except WRITE_ERRORS as exc:
                found = write_errors(exc, conflict_field="version")
        # The version's own fields refused (a missing version, a bad state): the spec, variables and outputs are
        # checked too, so that one save names every problem (not one round for each).
        editor.file(found + _version_problems(editor.draft(), found))
    profiles = list(ServiceProfile.objects.filter(template_version__template=template).order_by("name"))
    versions = list(template.versions.order_by("-created_at", "-id"))
    for version in versions:
        version.spec_json = json.dumps(version.spec_template, indent=2)
        version.used_by = [p.name for p in profiles if p.template_version_id == version.pk]
    return render(request, "profiles/template_detail.html", {
        "template": template, "versions": versions, "editor": editor, "form": editor.form, "profiles": profiles,
    })


@login_required
@require_POST
def version_state(request, pk, version):
    """Activate a draft version, disable an active one or enable a disabled one again (versions are never edited
    once active)."""
    _admin_only(request)
    template = get_object_or_404(selectors.templates_visible_to(request.user), pk=pk)
    row = get_object_or_404(template.versions, version=version)
    try:
        serializer = TemplateVersionSerializer(row, data={"state": request.POST.get("state", "")}, partial=True)
        serializer.is_valid(raise_exception=True)
        row = services.version_update(actor=request.user, template_version=row, **serializer.service_fields())
        messages.success(request, f"Version {row.version} is {row.state}.")
    except WRITE_ERRORS as exc:
        messages.error(request, _message(exc))
    return redirect("template-detail", template.pk)


@login_required
@require_POST
def template_delete(request, pk):
    _admin_only(request)
    template = get_object_or_404(selectors.templates_visible_to(request.user), pk=pk)
    try:
        services.template_delete(actor=request.user, template=template)
    except WRITE_ERRORS as exc:
        messages.error(request, _message(exc))
        return redirect("template-detail", template.pk)
    messages.success(request, f"Deleted {template.name}.")
    return redirect("template-list")


# --- the catalog --------------------------------------------------------------------------------------------

def _current_project(request) -> Project | None:
    return navigation(request).get("current_project")


@login_required
def catalog(request):
    project = _current_project(request)
    profiles, errors, page = [], [], None
    if project is not None:  # a page of entries, grouped by service type on the page
        profiles, errors, page = paged(request, ServiceProfileFilterSet, selectors.catalog_for(project), size=24)
    for profile in profiles:  # what each asks of the cluster with its defaults, on its card
        version = profile.template_version
        profile.resources = default_resources(version.spec_template, version.variables, profile.inputs)
    groups = [{"type": value, "title": title, "profiles": [p for p in profiles if p.service_type == value]}
              for value, title in forms.SERVICE_TYPES]
    return render(request, "profiles/catalog.html", {
        "project": project, "groups": [g for g in groups if g["profiles"]], "search": request.GET.get("search", ""),
        "errors": errors, "page": page,
        "service_type": request.GET.get("serviceType", ""), "service_types": forms.SERVICE_TYPES,
        "may_launch": project is not None and has_project_role(request.user, project, Level.MEMBER),
        "skus": compute_skus(user=request.user, project=project),  # compute resources, shown as SKUs
        "asset_templates": catalog_templates(user=request.user, project=project),  # Run:ai's templates
    })
