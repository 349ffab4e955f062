"""Launch of a service profile from the catalog (AWX's template → launch → job, with the answers snapshotted
on the job): inputs resolved, the spec rendered, the profile's labels, annotations and extra configuration
applied, the body validated by the same `workloads.specs` as the workloads API, and the workload submitted
with its provenance.

Secret inputs and generated values never enter the spec: the spec's environment variables reference a
Kubernetes Secret named per launch, whose values are kept encrypted in a LaunchSecret row; the workload's
`launch_inputs` shows secrets as "***"."""

import json
import secrets

from django.core.exceptions import PermissionDenied as NotAllowed
from django.core.exceptions import ValidationError
from django.db import transaction
from rest_framework.exceptions import PermissionDenied
from rest_framework.exceptions import ValidationError as DRFValidationError

from policies.services import policy_decision
from profiles.compose import GENERATED, MASK, blame, compose
from profiles.inputs import effective_inputs, resolve, secret_names
from profiles.models import LaunchSecret, ServiceProfile, TemplateVersion
from profiles.rendering import RenderError, join, names_in, placeholders
from studio.errors import flatten_errors
from studio.iam.permissions import has_project_role
from studio.models import Level, Project
from workloads.launch.preview import workload_preview
from workloads.models import Workload
from workloads.services import project_for_submit, quota_decision, with_node_pools, workload_submit
from workloads.specs import validate_workload_request, workload_gpus

GENERATORS = {"generated.token": lambda: secrets.token_urlsafe(24)}


def output_snapshot(version: TemplateVersion, settings: list[dict]) -> list[dict]:
    """The outputs the end user sees, with their expressions, frozen on the workload at launch."""
    by_name = {setting["name"]: setting for setting in settings}
    snapshot = []
    for output in version.outputs:
        setting = by_name.get(output["name"], {})
        if setting.get("visible", True):
            snapshot.append({"name": output["name"], "label": setting.get("label") or output["label"],
                             "expression": output["expression"],
                             "sensitive": bool(output["sensitive"] or setting.get("sensitive"))})
    return snapshot


def _secret_name(workload_name: str) -> str:
    # Random per launch: a Secret left behind by a deleted workload of the same name is never adopted.
    return f"{workload_name[:48].rstrip('-')}-in-{secrets.token_hex(4)}"


def _generated(version: TemplateVersion) -> dict[str, str]:
    used = set(placeholders(version.spec_template))
    used.update(name for output in version.outputs for name in names_in(output["expression"]))
    return {name: GENERATORS[name]() for name in GENERATED if name in used}


def _request_errors(detail, sources, given: set[str]) -> dict:
    detail = dict(detail)
    spec = detail.pop("spec", None)
    errors = blame(spec, sources, inputs=given, prefix="spec") if spec is not None else {}
    for error in flatten_errors(detail):
        errors.setdefault(error["field"] or "request", []).append(error["message"])
    return errors


def prepared_launch(*, profile: ServiceProfile, project: Project, user, name: str, inputs: dict,
              allow_draft: bool = False, kept_secret: LaunchSecret | None = None) -> dict:
    """Everything a launch submits, checked as the launch checks it: 403 for viewers, 400 naming each faulty
    input (`inputs.<name>`). `allow_draft`: an admin trying a profile the wizard has not finished (a preview).
    `kept_secret`: an upgrade's (workloads.launch.upgrades) launch Secret, whose name and generated values (a notebook
    token) the re-rendered spec keeps."""
    if not has_project_role(user, project, Level.MEMBER):
        raise PermissionDenied("Viewers may not launch workloads.")
    if profile.is_draft and not allow_draft:
        raise ValidationError({"profile": "This profile is still being set up; it cannot be launched yet."})
    version = profile.template_version
    if version.state != TemplateVersion.State.ACTIVE:
        raise ValidationError({"environmentTemplateVersion": (
            f"The profile's template version {version.version} is {version.state}; it cannot be launched.")})
    values, errors = resolve(effective_inputs(version.variables, profile.inputs), inputs)
    if errors:
        raise ValidationError({f"inputs.{name}": message for name, message in errors.items()})

    hidden = secret_names(version.variables)
    secret_data = {name: values[name] for name in hidden if values.get(name) not in (None, "")}
    generated = _generated(version)
    if kept_secret is not None:
        generated.update({k: v for k, v in kept_secret.data.items() if k in generated})
    secret_data.update(generated)
    secret_name = (kept_secret.name if kept_secret else _secret_name(name)) if secret_data else ""
    try:
        spec, sources = compose(
            version.spec_template, values={k: v for k, v in values.items() if k not in hidden},
            context={"workload.name": name, "project.name": project.name}, secrets={*hidden, *GENERATED},
            secret_ref=lambda key: {"name": secret_name, "key": key} if key in secret_data else None,
            labels=profile.labels, annotations=profile.annotations, extra_config=profile.extra_config)
    except RenderError as exc:  # only a template saved before a rule existed gets here
        raise ValidationError({join("specTemplate", exc.path): str(exc)}) from exc
    body = {"name": name, "projectId": str(project.pk), "clusterId": str(project.cluster_id), "spec": spec}
    given = {key for key, value in inputs.items() if value not in (None, "")}
    try:
        request = validate_workload_request(version.kind, body)
    except DRFValidationError as exc:
        raise ValidationError(_request_errors(exc.detail, sources, given)) from exc
    provenance = {
        "profile_id": profile.pk, "profile_name": profile.name, "profile_revision": profile.revision,
        "launch_inputs": {k: MASK if k in hidden else v for k, v in values.items() if v not in (None, "")},
        "outputs": output_snapshot(version, profile.outputs),
    }
    return {"kind": version.kind, "request": request, "provenance": provenance, "secret_data": secret_data,
            "secret_name": secret_name, "sources": sources, "given": given}


def profile_launch(*, profile: ServiceProfile, project: Project, user, name: str, inputs: dict) -> Workload:
    """Create the workload of one launch; 403 for viewers, 400 naming each faulty input (`inputs.<name>`), and
    the name too when a live workload of the project has it (otherwise a 409 once the inputs are right)."""
    try:
        launch = prepared_launch(profile=profile, project=project, user=user, name=name, inputs=inputs)
    except ValidationError as exc:
        if hasattr(exc, "error_dict") and Workload.objects.live().filter(project=project, name=name).exists():
            raise ValidationError({**exc.message_dict, "name": [
                f"A workload named {name!r} already exists in project {project.name}."]}) from exc
        raise
    secret_data = launch["secret_data"]
    try:
        with transaction.atomic():  # the push is enqueued on commit, so it finds the LaunchSecret row
            workload = workload_submit(kind=launch["kind"], request=launch["request"], user=user,
                                       source=Workload.Source.CATALOG, provenance=launch["provenance"])
            if secret_data:
                LaunchSecret.objects.create(workload_id=workload.pk, name=launch["secret_name"],
                                            data_json=json.dumps(secret_data))
    except DRFValidationError as exc:  # the workload policy or the quota: named by the input that set the field
        detail = every_refusal(exc.detail, kind=launch["kind"], request=launch["request"], user=user)
        raise ValidationError(_request_errors(detail, launch["sources"], launch["given"])) from exc
    return workload


def every_refusal(detail, *, kind: str, request: dict, user) -> dict:
    """A submit stops at its first refusal (the policy's, then the quota's): the launch names them all at once,
    each on its field, so one round trip shows everything to change."""
    detail = dict(detail)
    if not isinstance(detail.get("spec", {}), dict) or "projectId" in detail or "clusterId" in detail:
        return detail
    try:
        project = project_for_submit(user, request)
    except (DRFValidationError, PermissionDenied, NotAllowed):
        return detail
    spec_problems = {key: list(value) if isinstance(value, list) else [value]
                     for key, value in (detail.get("spec") or {}).items()}
    spec, policy = policy_decision(kind=kind, project=project, spec=request["spec"])
    for violation in policy["violations"]:
        messages = spec_problems.setdefault(violation["field"].removeprefix("spec."), [])
        if violation["message"] not in messages:
            messages.append(violation["message"])
    if spec_problems:
        detail["spec"] = spec_problems
    quota = quota_decision(project, kind, workload_gpus(kind, {**request, "spec": with_node_pools(project, spec)}),
                           spec=spec)
    if not quota["allowed"]:
        messages = list(detail.get("spec.compute") or [])
        if quota["message"] not in messages:
            detail["spec.compute"] = [*messages, quota["message"]]
    return detail


STAND_IN_NAME = "launch-check"


def input_errors(*, profile: ServiceProfile, project: Project, user, inputs, allow_draft: bool = False) -> dict:
    """The inputs' problems, checked as the launch checks them under a stand-in name: for a launch body whose
    own fields (its name) are wrong too, so that both are reported at once."""
    if not isinstance(inputs, dict):
        return {}
    try:
        launch = prepared_launch(profile=profile, project=project, user=user, name=STAND_IN_NAME, inputs=inputs,
                                 allow_draft=allow_draft)
    except ValidationError as exc:
        return {field: list(messages) for field, messages in exc.message_dict.items()}
    except (DRFValidationError, PermissionDenied, NotAllowed):
        return {}
    detail = every_refusal({}, kind=launch["kind"], request=launch["request"], user=user)
    return _request_errors(detail, launch["sources"], launch["given"]) if detail else {}


def profile_launch_preview(*, profile: ServiceProfile, project: Project, user, name: str, inputs: dict,
                           allow_draft: bool = False) -> dict:
    """What `profile_launch` would create and decide (workloads.launch.preview), nothing created; secret inputs and
    generated values read as the mask. `allow_draft` for the wizard's "Try it" (platform admins)."""
    launch = prepared_launch(profile=profile, project=project, user=user, name=name, inputs=inputs,
                       allow_draft=allow_draft)
    secret = (launch["secret_name"], list(launch["secret_data"])) if launch["secret_data"] else None
    try:
        return workload_preview(kind=launch["kind"], request=launch["request"], user=user, secret=secret)
    except DRFValidationError as exc:
        raise ValidationError(_request_errors(exc.detail, launch["sources"], launch["given"])) from exc
