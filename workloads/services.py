"""Writes of workloads: submit, suspend, resume, delete. Each validates, writes in one transaction, records an
event and enqueues the cluster work on commit."""

import random
import string
from decimal import Decimal

from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import Sum
from django.utils import timezone
from rest_framework.exceptions import ValidationError

from studio.errors import Conflict
from studio.models import Membership, Project
from studio.permissions import has_project_role
from studio.queue import enqueue_on_commit
from workloads.models import Workload, WorkloadEvent
from workloads.specs import gpu_request_of

# Workloads that hold GPUs: not finished, not stopped, not deleted.
HOLDING = dict(deleted_at__isnull=True, desired_phase=Workload.Desired.RUNNING)


def _record(workload: Workload, reason: str, message: str, *, type=WorkloadEvent.Type.NORMAL) -> None:
    WorkloadEvent.objects.create(
        workload=workload, at=timezone.now(), type=type, reason=reason, message=message, phase=workload.actual_phase
    )


def _unique_name(requested: str, as_prefix: bool) -> str:
    if not as_prefix:
        return requested
    suffix = "".join(random.choices(string.ascii_lowercase, k=5))
    return f"{requested[: 63 - 6]}-{suffix}"


def _check_quota(project: Project, kind: str, gpus: Decimal) -> None:
    """Inferences and workspaces stay within the project's deserved GPUs; trainings may use up to its limit."""
    if gpus <= 0:
        return
    used = (
        Workload.objects.filter(project=project, **HOLDING)
        .exclude(actual_phase__in=Workload.FINISHED)
        .aggregate(total=Sum("gpu_request"))["total"]
        or Decimal(0)
    )
    if kind == Workload.Kind.TRAINING:
        if project.gpu_limit is not None and used + gpus > project.gpu_limit:
            raise ValidationError({"spec.compute": [
                f"Project GPU limit exceeded: {used + gpus:g} GPUs requested in total, limit is {project.gpu_limit:g}."
            ]})
    elif used + gpus > project.gpu_deserved:
        raise ValidationError({"spec.compute": [
            f"Project GPU quota (deserved) exceeded: {used + gpus:g} GPUs requested in total, deserved is "
            f"{project.gpu_deserved:g}; only trainings may go over it."
        ]})


def _project_for_submit(user, request: dict) -> Project:
    project = (
        Project.objects.visible_to(user).select_related("department", "cluster")
        .filter(pk=request["projectId"]).first()
    )
    if project is None:
        raise ValidationError({"projectId": ["No such project, or you are not a member of it."]})
    if not has_project_role(user, project, Membership.Role.MEMBER):
        raise PermissionDenied("Viewers may not submit workloads.")
    if str(project.cluster_id) != str(request["clusterId"]):
        raise ValidationError({"clusterId": [f"Project {project.name} runs on cluster {project.cluster_id}."]})
    return project


def workload_submit(*, kind: str, request: dict, user, source: str = Workload.Source.API,
                    provenance: dict | None = None) -> Workload:
    """Create a workload from a validated create body (workloads.specs) and enqueue its push to the cluster."""
    project = _project_for_submit(user, request)
    spec = request["spec"]
    gpus = gpu_request_of(spec)
    name = _unique_name(request["name"], request.get("useGivenNameAsPrefix", False))
    try:
        with transaction.atomic():
            Project.objects.select_for_update().filter(pk=project.pk).first()  # serialise quota checks per project
            if Workload.objects.live().filter(project=project, name=name).exists():
                raise Conflict(f"A workload named {name!r} already exists in project {project.name}.")
            _check_quota(project, kind, gpus)
            workload = Workload.objects.create(
                kind=kind, name=name, requested_name=request["name"], project=project,
                department=project.department, cluster=project.cluster, created_by=user,
                created_by_name=user.email or user.get_username(), request=request, spec=spec,
                gpu_request=gpus, source=source, requested_pods=_requested_pods(kind, spec),
                phase_updated_at=timezone.now(), **(provenance or {}),
            )
            _record(workload, "Submitted", f"Accepted by {user.get_username()}.")
            enqueue_on_commit("workloads.tasks.workload_push", str(workload.pk))
    except IntegrityError as exc:  # a concurrent submit of the same name won the race
        raise Conflict(f"A workload named {name!r} already exists in project {project.name}.") from exc
    return workload


def _requested_pods(kind: str, spec: dict) -> int:
    if kind == Workload.Kind.TRAINING:
        return int(spec.get("parallelism") or 1)
    if kind == Workload.Kind.INFERENCE:
        return max(1, int((spec.get("autoscaling") or {}).get("minReplicas") or 1))
    return 1


def _require_role(user, workload: Workload) -> None:
    if not has_project_role(user, workload.project_id, Membership.Role.MEMBER):
        raise PermissionDenied("Viewers may not change workloads.")


def _transition(workload: Workload, *, desired: str, phase: str, reason: str, message: str, task: str) -> Workload:
    with transaction.atomic():
        locked = Workload.objects.select_for_update().get(pk=workload.pk)
        locked.desired_phase = desired
        if locked.actual_phase != phase:
            locked.actual_phase, locked.phase_updated_at = phase, timezone.now()
        if desired == Workload.Desired.DELETED:
            locked.deleted_at = timezone.now()
        locked.save()
        _record(locked, reason, message)
        enqueue_on_commit(task, str(locked.pk))
    return locked


def workload_suspend(*, workload: Workload, user) -> Workload:
    _require_role(user, workload)
    if workload.kind not in (Workload.Kind.TRAINING, Workload.Kind.WORKSPACE):
        raise ValidationError({"workloadId": ["Only trainings and workspaces can be suspended."]})
    if workload.is_finished:
        raise ValidationError({"workloadId": [f"The workload has finished ({workload.actual_phase}); nothing to suspend."]})
    if workload.desired_phase == Workload.Desired.STOPPED:
        return workload  # already asked: accepting again changes nothing
    return _transition(workload, desired=Workload.Desired.STOPPED, phase=Workload.Phase.STOPPING,
                       reason="Suspend", message=f"Suspended by {user.get_username()}.", task="workloads.tasks.workload_suspend")


def workload_resume(*, workload: Workload, user) -> Workload:
    _require_role(user, workload)
    if workload.kind not in (Workload.Kind.TRAINING, Workload.Kind.WORKSPACE):
        raise ValidationError({"workloadId": ["Only trainings and workspaces can be resumed."]})
    if workload.is_finished:
        raise ValidationError({"workloadId": [f"The workload has finished ({workload.actual_phase}); it cannot resume."]})
    if workload.desired_phase == Workload.Desired.RUNNING:
        return workload
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=workload.project_id)
        _check_quota(project, workload.kind, workload.gpu_request)
        return _transition(workload, desired=Workload.Desired.RUNNING, phase=Workload.Phase.RESUMING,
                           reason="Resume", message=f"Resumed by {user.get_username()}.", task="workloads.tasks.workload_resume")


def workload_delete(*, workload: Workload, user) -> Workload:
    _require_role(user, workload)
    return _transition(workload, desired=Workload.Desired.DELETED, phase=Workload.Phase.DELETING,
                       reason="Delete", message=f"Deleted by {user.get_username()}.", task="workloads.tasks.workload_remove")
