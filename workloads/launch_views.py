"""Pages that launch a service profile: the wizard's "Try it" (a platform admin previews a launch in a project
of their choice) and the catalog's launch form. Thin: the forms are profiles', the launch and its preview are
workloads.launch.launch's, so a page answers with the API's errors, shown next to the fields they name."""

import yaml
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from rest_framework.exceptions import APIException
from rest_framework.exceptions import ValidationError as DRFValidationError

from profiles import forms, selectors
from profiles.forms import write_errors
from profiles.serializers import CatalogEntrySerializer, LaunchSerializer
from studio.context import navigation
from studio.iam.permissions import has_project_role
from studio.models import Level, Project, is_platform_admin
from workloads.launch import launch

WRITE_ERRORS = (DjangoValidationError, APIException)


def _preview_shown(preview: dict) -> dict:
    """A launch preview for the page: each manifest as YAML, and how many objects the cluster would take."""
    objects = [{**obj, "yaml": yaml.safe_dump(obj["manifest"], sort_keys=False)} for obj in preview["objects"]]
    refused = sum(1 for obj in objects if obj["verdict"]["allowed"] is False)
    return {**preview, "objects": objects, "refused": refused,
            "ready": not refused and preview["quota"]["allowed"] and preview["policy"]["allowed"]}


@login_required
def profile_try(request, pk):
    """The wizard's "Try it": a platform admin previews a launch of the profile (a draft too) in a project of
    their choice, with the launch preview of the catalog (`?dryRun=true`): nothing is created."""
    if not is_platform_admin(request.user):
        raise PermissionDenied
    profile = get_object_or_404(selectors.profiles_visible_to(request.user).select_related("owner_project"), pk=pk)
    entry = CatalogEntrySerializer(profile).data
    projects = list(Project.objects.select_related("cluster").order_by("name"))
    form = forms.TryForm(request.POST or None, inputs=entry["inputs"],
                         projects=[(str(p.pk), f"{p.name} (cluster {p.cluster.name})") for p in projects],
                         initial_project=str(profile.owner_project_id or (projects[0].pk if projects else "")))
    preview = None
    if request.method == "POST":
        project = next((p for p in projects if str(p.pk) == request.POST.get("projectId")), None)
        try:
            if project is None:
                raise DjangoValidationError({"projectId": "Choose a project."})
            body = form.payload(project.pk)
            serializer = LaunchSerializer(data=body)
            if not serializer.is_valid():  # the name's problems and the inputs', at once
                raise DRFValidationError({**serializer.errors, **launch.input_errors(
                    profile=profile, project=project, user=request.user, inputs=body.get("inputs"),
                    allow_draft=True)})
            data = serializer.validated_data
            preview = _preview_shown(launch.profile_launch_preview(
                profile=profile, project=project, user=request.user, name=data["name"],
                inputs=dict(data["inputs"]), allow_draft=True))
        except WRITE_ERRORS as exc:
            form.file_all(write_errors(exc, conflict_field="name"))
    return render(request, "profiles/try.html", {"profile": profile, "entry": entry, "form": form,
                                                 "preview": preview})


@login_required
def catalog_launch(request, pk):
    """The launch form of a catalog entry, built from its input settings; the launch is the API's."""
    project = navigation(request).get("current_project")
    if project is None:
        raise Http404
    profile = get_object_or_404(selectors.catalog_for(project), pk=pk)
    entry = CatalogEntrySerializer(profile).data
    form = forms.LaunchForm(request.POST or None, inputs=entry["inputs"],
                            default_name=forms.default_workload_name(profile.name))
    may_launch = has_project_role(request.user, project, Level.MEMBER)
    if request.method == "POST":
        try:
            if not may_launch:
                raise PermissionDenied("Viewers may not launch workloads.")
            body = form.payload(project.pk)
            serializer = LaunchSerializer(data=body)
            if not serializer.is_valid():  # the name's problems and the inputs', at once
                raise DRFValidationError({**serializer.errors, **launch.input_errors(
                    profile=profile, project=project, user=request.user, inputs=body.get("inputs"))})
            data = serializer.validated_data
            if request.POST.get("action") == "preview":  # the launch's dry run: nothing created
                preview = launch.profile_launch_preview(profile=profile, project=project, user=request.user,
                                                        name=data["name"], inputs=dict(data["inputs"]))
                return render(request, "profiles/launch.html", {
                    "profile": profile, "entry": entry, "project": project, "form": form,
                    "may_launch": may_launch, "preview": _preview_shown(preview)})
            workload = launch.profile_launch(profile=profile, project=project, user=request.user,
                                             name=data["name"], inputs=dict(data["inputs"]))
            messages.success(request, f"Launched {workload.name} from {profile.display_name}.")
            return redirect("workload-detail", workload.pk)
        except PermissionDenied as exc:
            form.add_error(None, str(exc) or "You may not launch workloads in this project.")
        except WRITE_ERRORS as exc:
            form.file_all(write_errors(exc, conflict_field="name"))
    return render(request, "profiles/launch.html", {
        "profile": profile, "entry": entry, "project": project, "form": form, "may_launch": may_launch,
    })
