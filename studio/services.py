"""Writes of the organisation: one function per change, each validated, audited and atomic."""

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Model, ProtectedError

from studio.audit import audit_record, snapshot
from studio.errors import Conflict
from studio.models import AuditEvent, Cluster, Department, Membership, Project
from studio.queue import enqueue_on_commit


def _save(instance: Model, *, actor, action: str, before: dict | None = None) -> Model:
    instance.full_clean()
    try:
        with transaction.atomic():
            instance.save()
            audit_record(actor=actor, action=action, instance=instance, before=before)
    except IntegrityError as exc:
        raise Conflict(f"A {instance._meta.verbose_name} with these values already exists.") from exc
    return instance


def model_create(model: type[Model], *, actor, **fields) -> Model:
    return _save(model(**fields), actor=actor, action=AuditEvent.Action.CREATE)


def model_update(instance: Model, *, actor, **fields) -> Model:
    before = snapshot(instance)
    for name, value in fields.items():
        setattr(instance, name, value)
    return _save(instance, actor=actor, action=AuditEvent.Action.UPDATE, before=before)


def model_delete(instance: Model, *, actor) -> None:
    before = snapshot(instance)
    try:
        with transaction.atomic():
            instance.delete()
            audit_record(actor=actor, action=AuditEvent.Action.DELETE, instance=instance, before=before)
    except ProtectedError as exc:
        raise Conflict(f"This {instance._meta.verbose_name} is still in use and cannot be deleted.") from exc


def _check_gpu(deserved: Decimal, limit: Decimal | None) -> None:
    if limit is not None and limit < deserved:
        raise ValidationError({"resources.gpu.limit": "Must be at least resources.gpu.deserved."})


def project_create(*, actor, name: str, department: Department, cluster: Cluster,
                   gpu_deserved: Decimal = Decimal(0), gpu_limit: Decimal | None = None) -> Project:
    _check_gpu(gpu_deserved, gpu_limit)
    project = model_create(
        Project, actor=actor, name=name, department=department, cluster=cluster,
        namespace=Project.namespace_for(name), gpu_deserved=gpu_deserved, gpu_limit=gpu_limit,
    )
    enqueue_on_commit("studio.tasks.project_namespace_ensure", project.pk)
    return project


def project_update(project: Project, *, actor, **fields) -> Project:
    if "name" in fields and fields["name"] != project.name:
        raise ValidationError({"name": "A project's name cannot be changed; its namespace is derived from it."})
    if "cluster" in fields and fields["cluster"] != project.cluster:
        raise ValidationError({"clusterId": "A project cannot move to another cluster."})
    _check_gpu(fields.get("gpu_deserved", project.gpu_deserved), fields.get("gpu_limit", project.gpu_limit))
    return model_update(project, actor=actor, **fields)


def membership_set(*, actor, project: Project, user, role: str) -> Membership:
    """Add the user to the project with `role`, or change the role of an existing member."""
    existing = Membership.objects.filter(project=project, user=user).first()
    if existing is None:
        return model_create(Membership, actor=actor, project=project, user=user, role=role)
    return model_update(existing, actor=actor, role=role)
