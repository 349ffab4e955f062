"""Upgrades of catalog workloads: a workload launched from an older revision of its service profile is
outdated; an upgrade re-renders it from its stored inputs against the profile's current revision (template
version, settings, labels, extra configuration) and rolls it, as Rancher's app upgrade and Coder's "update
workspace" do.

- inference: the spec is replaced and the primary object rolled to a new revision (workload_roll, as the
  inference PATCH does): Knative makes a new Revision, a Deployment a new ReplicaSet;
- workspace: the same roll; its Deployment recreates the pod, which mounts the same claims (same names);
- training: refused (400). A Job's pod template is immutable and a re-submit would restart the run from
  zero: launch it again from the catalog instead (what Coder does for a running build too).

Stored inputs: the values saved at launch (`launch_inputs`, secrets from the launch's LaunchSecret) are
given again where the current revision still lets the user set them; where the profile now fixes a value
the profile's applies, and inputs the revision no longer has are dropped. The request may override any
input. `?dryRun=true` answers the changes and each object's verdict from the cluster, changing nothing."""

import json

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.utils import timezone
from rest_framework.exceptions import PermissionDenied, ValidationError

from profiles.compose import MASK
from profiles.inputs import effective_inputs
from profiles.models import LaunchSecret, ServiceProfile
from profiles.selectors import catalog_for
from studio.audit import audit_record, snapshot
from studio.clusters import kube
from studio.iam.permissions import has_project_role
from studio.models import AuditEvent, Level, Project
from studio.queue import enqueue_on_commit
from studio.selectors import node_pool_labels
from workloads import manifests
from workloads.cluster import applied
from workloads.cluster.push import placement_for, pod_spec, workload_ref
from workloads.launch import launch
from workloads.models import Workload, WorkloadEvent
from workloads.services import check_quota, cpu_use, requested_pods, spec_for_project
from workloads.specs import workload_gpus

UPGRADABLE = (Workload.Kind.INFERENCE, Workload.Kind.WORKSPACE)
TRAINING_NOTE = ("A training cannot be upgraded in place: a Kubernetes Job's pod template is immutable and a "
                 "re-submit would start the run again from zero. Launch it again from the catalog instead.")


def spec_changes(before, after, path: str = "") -> list[dict]:
    """Pure: each leaf that differs between two specs, `{"path", "from", "to"}` (a missing side is null);
    lists are compared whole, so that a reordered environment list reads as one change."""
    if isinstance(before, dict) and isinstance(after, dict):
        changes = []
        for key in sorted(set(before) | set(after)):
            changes += spec_changes(before.get(key), after.get(key), f"{path}.{key}" if path else key)
        return changes
    return [] if before == after else [{"path": path, "from": before, "to": after}]


def _profile(workload: Workload) -> ServiceProfile | None:
    if workload.profile_id is None:
        return None
    return ServiceProfile.objects.select_related("template_version__template").filter(pk=workload.profile_id).first()


def upgrade_status(workload: Workload, profile: ServiceProfile | None = None) -> dict:
    """Whether the workload is behind its profile: `{"outdated", "fromRevision", "toRevision", "upgradable",
    "reason"}`; a workload not launched from a profile, or whose profile is gone, is never outdated."""
    profile = profile or _profile(workload)
    status = {"outdated": False, "fromRevision": workload.profile_revision,
              "toRevision": profile.revision if profile else None, "upgradable": False, "reason": ""}
    if profile is None:
        status["reason"] = ("Not launched from a service profile." if workload.profile_id is None
                            else "Its service profile was deleted.")
        return status
    status["outdated"] = (workload.profile_revision or 0) < profile.revision
    if workload.kind not in UPGRADABLE:
        status["reason"] = TRAINING_NOTE
    elif workload.is_finished:
        status["reason"] = f"The workload has finished ({workload.actual_phase})."
    else:
        status["upgradable"] = status["outdated"]
        status["reason"] = "" if status["outdated"] else "Already at the profile's current revision."
    return status


def stored_inputs(workload: Workload, profile: ServiceProfile, secret: LaunchSecret | None) -> dict:
    """The launch's values the current revision still lets the user give (secret ones from the LaunchSecret)."""
    data = secret.data if secret else {}
    kept = {}
    for item in effective_inputs(profile.template_version.variables, profile.inputs):
        name = item["name"]
        if item["override"] == "not-allowed" or not item["visible"] or name not in workload.launch_inputs:
            continue
        value = workload.launch_inputs[name]
        value = data.get(name) if value == MASK else value
        if value not in (None, ""):
            kept[name] = value
    return kept


def _plan(*, workload: Workload, user, overrides) -> dict:
    """The re-rendered launch of `workload` against its profile's current revision, or a 400/403 saying why
    there is none."""
    if not has_project_role(user, workload.project_id, Level.MEMBER):
        raise PermissionDenied("Viewers may not upgrade workloads.")
    if not isinstance(overrides, dict):
        raise ValidationError({"inputs": ["Must be a JSON object of input values."]})
    profile = _profile(workload)
    status = upgrade_status(workload, profile)
    if not status["upgradable"]:
        raise ValidationError({"workloadId": [status["reason"]]})
    project = Project.objects.select_related("cluster").get(pk=workload.project_id)
    # The new revision is rendered (and its diff shown) only where the project could launch it today: a profile
    # unshared from the project since, turned back into a draft, or on a disabled version shows nothing of itself.
    if not catalog_for(project).filter(pk=profile.pk).exists():
        raise ValidationError({"workloadId": [
            f"The service profile {profile.name} is no longer in project {project.name}'s catalog; "
            "it cannot be upgraded from it."]})
    secret = LaunchSecret.objects.filter(workload_id=workload.pk).first()
    inputs = {**stored_inputs(workload, profile, secret), **overrides}
    try:
        prepared = launch.prepared_launch(profile=profile, project=project, user=user, name=workload.name,
                                    inputs=inputs, kept_secret=secret)
    except DjangoValidationError as exc:  # the launch's 400 (inputs.<name>), as the API's
        raise ValidationError(exc.message_dict) from exc
    # The rules of every spec change (the policy, node pools, Secrets the upgrader may not see, exposed URLs).
    spec = spec_for_project(kind=workload.kind, project=project, spec=prepared["request"]["spec"], user=user)
    shown_inputs = prepared["provenance"]["launch_inputs"]  # secret ones already read as the mask
    return {"profile": profile, "status": status, "spec": spec, "prepared": prepared, "secret": secret,
            "inputs": shown_inputs, "changes": spec_changes(workload.spec, spec)}


def upgrade_preview(*, workload: Workload, user, overrides=None) -> dict:
    """What an upgrade would change and the cluster's verdict on each object (dry-run patch of the primary,
    dry-run create of objects the new spec adds), nothing changed."""
    plan = _plan(workload=workload, user=user, overrides=overrides if overrides is not None else {})
    return {"dryRun": True, **_summary(workload, plan), "objects": _verdicts(workload, plan["spec"])}


def _summary(workload: Workload, plan: dict) -> dict:
    profile = plan["profile"]
    return {"workloadId": str(workload.pk), "profile": {"id": profile.pk, "name": profile.name},
            "fromRevision": plan["status"]["fromRevision"], "toRevision": plan["status"]["toRevision"],
            "templateVersion": profile.template_version.version, "inputs": plan["inputs"],
            "changes": plan["changes"]}


def _verdicts(workload: Workload, spec: dict) -> list[dict]:
    ref = workload_ref(workload)
    cluster = workload.cluster
    result, unavailable = [], None
    try:
        conn = kube.connect(cluster)
        knative = bool(cluster.has_knative) if cluster.has_knative is not None else kube.has_api_group(
            conn, "serving.knative.dev")
    except kube.ClusterError as exc:
        conn, knative = None, bool(cluster.has_knative)
        unavailable = {"allowed": None, "code": exc.status, "reason": "ClusterUnavailable", "message": exc.message}
    pools = node_pool_labels(cluster.pk)
    built = manifests.build_manifests(ref, pod_spec(workload, spec), knative=knative,
                                      gpu_scheduler=settings.GPU_SCHEDULER_NAME, node_pools=pools,
                                      placement=placement_for(cluster, workload.project.name, workload.kind, spec,
                                                              pool=workload.node_pool, pools=pools))
    primary = manifests.primary_kind(ref, knative=knative)
    for obj in built:
        meta = obj["metadata"]
        if conn is None:
            verdict, action = unavailable, "unknown"
        elif (live := _live(conn, obj)) is None:
            verdict, action = kube.dry_run_create(conn, obj), "create"
        elif (obj["apiVersion"], obj["kind"]) == primary:  # the very patch workload_roll sends
            verdict, action = kube.dry_run_patch(conn, obj, applied.roll_patch(live, obj)), "roll"
        else:
            verdict, action = {"allowed": True, "code": 200, "reason": "Unchanged",
                               "message": "Exists; kept as it is."}, "keep"
        result.append({"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta["name"],
                       "namespace": meta.get("namespace"), "action": action, "manifest": obj, "verdict": verdict})
    return result


def _live(conn, obj: dict) -> dict | None:
    meta = obj["metadata"]
    try:
        return kube.get(conn, obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])
    except kube.NotFound:
        return None


def workload_upgrade(*, workload: Workload, user, overrides=None) -> dict:
    """Re-render and roll: the spec, inputs and revision replaced in one transaction with an `Upgraded` event
    and an audit entry; the workload_roll task makes the cluster follow."""
    plan = _plan(workload=workload, user=user, overrides=overrides if overrides is not None else {})
    spec, prepared = plan["spec"], plan["prepared"]
    gpus = workload_gpus(workload.kind, {"spec": spec})
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=workload.project_id)
        locked = Workload.objects.select_for_update().get(pk=workload.pk)
        if locked.profile_revision != workload.profile_revision:
            raise ValidationError({"workloadId": ["The workload was upgraded meanwhile; look again."]})
        if gpus > locked.gpu_request:  # only the increase needs room in the quota
            check_quota(project, locked.kind, gpus - locked.gpu_request, spec=spec, total=gpus)
        before = snapshot(locked)
        provenance = prepared["provenance"]
        locked.spec, locked.request = spec, {**locked.request, "spec": spec}
        locked.gpu_request, locked.requested_pods = gpus, requested_pods(locked.kind, locked.request)
        for name, value in cpu_use(locked.kind, locked.request).items():
            setattr(locked, name, value)
        locked.profile_name, locked.profile_revision = provenance["profile_name"], provenance["profile_revision"]
        locked.launch_inputs, locked.outputs = provenance["launch_inputs"], provenance["outputs"]
        if locked.actual_phase not in (Workload.Phase.CREATING, Workload.Phase.PENDING, Workload.Phase.STOPPED):
            locked.actual_phase, locked.phase_updated_at = Workload.Phase.UPDATING, timezone.now()
        locked.save()
        data = prepared["secret_data"]
        if data:
            LaunchSecret.objects.update_or_create(workload_id=locked.pk, defaults={
                "name": prepared["secret_name"], "data_json": json.dumps(data)})
        changed = ", ".join(c["path"] for c in plan["changes"]) or "nothing in the spec"
        WorkloadEvent.objects.create(
            workload=locked, at=timezone.now(), reason="Upgraded", phase=locked.actual_phase,
            message=f"Upgraded by {user.get_username()} from {plan['profile'].name} revision "
                    f"{plan['status']['fromRevision']} to {plan['status']['toRevision']}: {changed} changed."[:2000])
        audit_record(actor=user, action=AuditEvent.Action.UPDATE, instance=locked, before=before)
        enqueue_on_commit("workloads.tasks.workload_roll", str(locked.pk))
    return {"dryRun": False, **_summary(locked, plan)}


def upgrade_preview_changes(*, workload: Workload, user) -> list[dict]:
    """The changes alone (no cluster call): what the workload page and GET .../upgrade show."""
    return _plan(workload=workload, user=user, overrides={})["changes"]
