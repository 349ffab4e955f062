"""Run:ai's data volumes (tag Datavolumes): a project's PVC made a data volume, shared read-only with other scopes
(clusters, departments, projects) whose workloads mount it as `storage.dataVolume`.

Reads start from `DataVolume.objects.visible_to(user)` (those who see the origin project or a project it is
shared with; outside it, a 404). Creating, changing, sharing and deleting need the right to manage a PVC data
source of the origin project (assets/access.py): admin-level roles and the Data source administrator whose rule
covers that project. The cluster side (the claim copied into each namespace that may use it) is
assets/datavolumes_cluster.py, run by a task enqueued on commit."""

import re
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Q
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.fields import DateTimeField

from assets import access
from assets.models import Asset, DataVolume, DataVolumeShare, Kind, Scope
from studio.audit import audit_record, snapshot
from studio.errors import Conflict
from studio.ids import is_uuid, parse_id
from studio.models import AuditEvent, Cluster, Department, Project
from studio.queue import enqueue_on_commit

_TIME = DateTimeField()
NAME = re.compile(r"^[a-z][-a-z0-9]{0,62}$")
PVC_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")
CREATE_FIELDS = {"name", "description", "originPvcName", "projectId", "shouldDeleteOriginalVolume",
                 "useOriginalVolume"}
SHARE_TYPES = ("cluster", "department", "project")
REFUSED = "Your roles do not let you manage data volumes of this project."
SYNC_TASK = "assets.tasks.datavolume_sync"


def _raise(problems: dict) -> None:
    if problems:
        raise ValidationError(problems)


def manages(user, project: Project) -> bool:
    """Whether `user` may create, change, share or delete the data volumes of `project` (those of a PVC data
    source of that project, shared)."""
    probe = Asset(kind=Kind.PVC, scope=Scope.PROJECT, project=project, department_id=project.department_id,
                  cluster_id=project.cluster_id, private=False)
    return access.manages(user, probe)


# --- reads ---------------------------------------------------------------------------------------------------

@dataclass
class ListQuery:
    request_type: str = "Originated"
    usable_in: Project | None = None


def usable_in(project: Project):
    """The data volumes a project's workloads may mount: its own, and those shared with it, its department or
    its cluster (a data volume lives on one cluster)."""
    shared = DataVolumeShare.objects.filter(
        Q(scope_type="project", project=project) | Q(scope_type="department", department_id=project.department_id)
        | Q(scope_type="cluster", cluster_id=project.cluster_id))
    return DataVolume.objects.filter(cluster_id=project.cluster_id).filter(
        Q(project=project) | Q(pk__in=shared.values("data_volume_id")))


def datavolume_list(*, user, query: ListQuery):
    rows = DataVolume.objects.visible_to(user)
    if query.request_type == "UsableInProject":
        rows = rows.filter(pk__in=usable_in(query.usable_in).values("pk")) if query.usable_in else rows.none()
    else:
        rows = rows.filter(project__in=Project.objects.visible_to(user).values("pk"))
    return rows.select_related("project")


def datavolume_ids() -> list:
    return list(DataVolume.objects.values_list("pk", flat=True))


def projects_of(data_volume: DataVolume) -> list[Project]:
    """The projects whose namespaces get the data volume's claim: its origin and those its scopes cover, on its
    cluster."""
    shares = list(data_volume.shares.all())
    covered = Q(pk=data_volume.project_id)
    for share in shares:
        covered |= {"project": Q(pk=share.project_id), "department": Q(department_id=share.department_id),
                    "cluster": Q(cluster_id=share.cluster_id)}[share.scope_type]
    return list(Project.objects.filter(covered, cluster_id=data_volume.cluster_id).order_by("pk"))


def shared_scopes_answer(shares) -> list[dict]:
    answer = []
    for share in shares:
        row = share.project or share.department or share.cluster
        answer.append({"scopeType": share.scope_type, "scopeId": share.scope_id, "scopeName": row.name,
                       "createdAt": _TIME.to_representation(share.created_at), "createdBy": share.created_by})
    return answer


def datavolume_answer(dv: DataVolume, *, shares=None) -> dict:
    """Run:ai's Datavolume (with `shares`: its sharedScopes too; the lists answer DatavolumeNoSharedScopes)."""
    answer = {
        "id": str(dv.pk), "name": dv.name, "originPvcName": dv.origin_pvc_name, "projectId": str(dv.project_id),
        "projectName": dv.project.name, "departmentId": str(dv.project.department_id),
        "clusterId": str(dv.cluster_id), "shouldDeleteOriginalVolume": dv.should_delete_original_volume,
        "useOriginalVolume": dv.use_original_volume, "createdAt": _TIME.to_representation(dv.created_at),
        "updatedAt": _TIME.to_representation(dv.updated_at), "createdBy": dv.created_by,
        "updatedBy": dv.updated_by,
        "status": {"phase": dv.phase, "conditions": dv.conditions,
                   "datavolumePvcName": f"data-volume-{dv.pk}"},
    }
    if dv.description:
        answer["description"] = dv.description
    if dv.phase_message:
        answer["status"]["phaseMessage"] = dv.phase_message
    if dv.pv_name:
        answer["status"]["datavolumePvName"] = dv.pv_name
    if shares is not None:
        answer["sharedScopes"] = shared_scopes_answer(shares)
    return answer


def shares_of(dv: DataVolume) -> list[DataVolumeShare]:
    return list(dv.shares.select_related("project", "department", "cluster"))


# --- writes --------------------------------------------------------------------------------------------------

def _flag_problems(body: dict) -> dict:
    return {key: ["Must be true or false."] for key in ("shouldDeleteOriginalVolume", "useOriginalVolume")
            if body.get(key) is not None and not isinstance(body[key], bool)}


def _description_problems(body: dict) -> dict:
    value = body.get("description")
    if value is not None and not (isinstance(value, str) and len(value) <= 127):
        return {"description": ["Must be text of at most 127 characters."]}
    return {}


def datavolume_create(*, actor, body) -> DataVolume:
    """A data volume from Run:ai's DatavolumeCreationFields: `name`, `projectId` (the project whose namespace
    holds the claim) and `originPvcName`."""
    if not isinstance(body, dict):
        raise ValidationError({"body": ["Must be a JSON object."]})
    problems = {key: ["Is not a field of this object."] for key in body if key not in CREATE_FIELDS}
    name, pvc, project_id = body.get("name"), body.get("originPvcName"), body.get("projectId")
    if not (isinstance(name, str) and NAME.match(name)):
        problems["name"] = ["This field is required." if name in (None, "") else
                            "Must be 1-63 lowercase letters, digits and '-', starting with a letter."]
    if not (isinstance(pvc, str) and PVC_NAME.match(pvc)):
        problems["originPvcName"] = ["This field is required." if pvc in (None, "") else
                                     "Must be the name of a PersistentVolumeClaim (a DNS subdomain)."]
    project = None
    if project_id in (None, ""):
        problems["projectId"] = ["This field is required."]
    else:
        pk = parse_id(project_id)
        project = Project.objects.visible_to(actor).select_related("cluster").filter(pk=pk).first() if pk else None
        if project is None:
            problems["projectId"] = ["No such project."]
    problems |= _flag_problems(body) | _description_problems(body)
    _raise(problems)
    if not manages(actor, project):
        raise PermissionDenied(REFUSED)
    dv = DataVolume(name=name, description=body.get("description") or "", project=project,
                    cluster_id=project.cluster_id, origin_pvc_name=pvc,
                    should_delete_original_volume=bool(body.get("shouldDeleteOriginalVolume")),
                    use_original_volume=body.get("useOriginalVolume") is not False,
                    created_by=actor.get_username(), updated_by=actor.get_username())
    try:
        with transaction.atomic():
            dv.save()
            audit_record(actor=actor, action=AuditEvent.Action.CREATE, instance=dv)
    except IntegrityError as exc:
        raise Conflict(f"A data volume named {name} already exists on this cluster.") from exc
    enqueue_on_commit(SYNC_TASK, str(dv.pk))
    return dv


def datavolume_update(*, actor, data_volume: DataVolume, body) -> DataVolume:
    """Run:ai's DatavolumePatchFields: the description only."""
    if not isinstance(body, dict):
        raise ValidationError({"body": ["Must be a JSON object."]})
    problems = {key: ["Cannot be changed."] for key in body if key != "description"}
    problems |= _description_problems(body)
    _raise(problems)
    if not manages(actor, data_volume.project):
        raise PermissionDenied(REFUSED)
    before = snapshot(data_volume)
    if "description" in body:
        data_volume.description = body["description"] or ""
    data_volume.updated_by = actor.get_username()
    with transaction.atomic():
        data_volume.save()
        audit_record(actor=actor, action=AuditEvent.Action.UPDATE, instance=data_volume, before=before)
    return data_volume


def datavolume_delete(*, actor, data_volume: DataVolume) -> None:
    """Mark it Deleting; the task removes its claims and volumes (and, with shouldDeleteOriginalVolume, the
    origin claim), then the row."""
    if not manages(actor, data_volume.project):
        raise PermissionDenied(REFUSED)
    before = snapshot(data_volume)
    with transaction.atomic():
        data_volume.phase = DataVolume.Phase.DELETING
        data_volume.updated_by = actor.get_username()
        data_volume.save(update_fields=["phase", "updated_by", "updated_at"])
        audit_record(actor=actor, action=AuditEvent.Action.DELETE, instance=data_volume, before=before)
    enqueue_on_commit(SYNC_TASK, str(data_volume.pk))


def _scope_row(actor, item, where: str, problems: dict):
    if not isinstance(item, dict):
        problems[where] = ["Must be an object with scopeType and scopeId."]
        return None
    extra = [k for k in item if k not in ("scopeType", "scopeId", "scopeName", "createdAt", "createdBy")]
    kind, scope_id = item.get("scopeType"), item.get("scopeId")
    if extra:
        problems[f"{where}.{extra[0]}"] = ["Is not a field of this object."]
    if kind not in SHARE_TYPES:
        problems[f"{where}.scopeType"] = [f"Must be one of {', '.join(SHARE_TYPES)}."]
        return None
    row = None
    if kind == "cluster" and is_uuid(scope_id):
        row = Cluster.objects.visible_to(actor).filter(pk=scope_id).first()
    elif kind == "department" and parse_id(scope_id):
        row = Department.objects.visible_to(actor).filter(pk=parse_id(scope_id)).first()
    elif kind == "project" and parse_id(scope_id):
        row = Project.objects.visible_to(actor).filter(pk=parse_id(scope_id)).first()
    if row is None:
        problems[f"{where}.scopeId"] = [f"No such {kind}."]
    return (kind, row) if row is not None else None


def datavolume_share(*, actor, data_volume: DataVolume, body) -> list[DataVolumeShare]:
    """Run:ai's PATCH sharedScopes: `add` and `remove` lists of {scopeType, scopeId} (at most 50 each)."""
    if not isinstance(body, dict):
        raise ValidationError({"body": ["Must be a JSON object."]})
    problems = {key: ["Is not a field of this object."] for key in body if key not in ("add", "remove")}
    changes = {}
    for verb in ("add", "remove"):
        items = body.get(verb) or []
        if not isinstance(items, list) or len(items) > 50:
            problems[verb] = ["Must be a list of at most 50 scopes."]
            continue
        changes[verb] = [r for i, item in enumerate(items) if (r := _scope_row(actor, item, f"{verb}[{i}]",
                                                                                   problems))]
    for i, (kind, row) in enumerate(changes.get("add", [])):
        cluster_id = row.pk if kind == "cluster" else row.cluster_id
        if cluster_id is not None and str(cluster_id) != str(data_volume.cluster_id):
            problems[f"add[{i}].scopeId"] = ["Is on another cluster than the data volume."]
    _raise(problems)
    if not manages(actor, data_volume.project):
        raise PermissionDenied(REFUSED)
    with transaction.atomic():
        for kind, row in changes.get("add", []):
            DataVolumeShare.objects.get_or_create(data_volume=data_volume, scope_type=kind, **{kind: row},
                                                  defaults={"created_by": actor.get_username()})
        for kind, row in changes.get("remove", []):
            DataVolumeShare.objects.filter(data_volume=data_volume, scope_type=kind, **{kind: row}).delete()
        audit_record(actor=actor, action=AuditEvent.Action.UPDATE, instance=data_volume,
                     extra={"sharedScopes": [f"{s.scope_type}:{s.scope_id}" for s in data_volume.shares.all()]})
    enqueue_on_commit(SYNC_TASK, str(data_volume.pk))
    return shares_of(data_volume)


def name_available(*, name: str, cluster_id: str) -> bool:
    return not DataVolume.objects.filter(cluster_id=cluster_id, name=name).exists()
