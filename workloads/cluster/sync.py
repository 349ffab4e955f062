"""One sync round of a cluster: what the cluster runs -> each workload's phase, pods and events, and repairs.

A round LISTs each kind a workload may own (plus Pods and Warning Events) by the managed-by label, all
namespaces at once, 500 a page: the cost grows with pages, never one GET per workload. Objects are grouped
by their workload-id label and `phases.derive_phase` maps them to a phase. Only the rows that changed are
written, in bulk, with an event per transition. Drift is repaired: a missing object of a workload that
should run is pushed again, a suspension the cluster lost is applied again, objects of deleted or unknown
workloads are deleted. Rounds of one cluster never overlap (`round_locks`: a lock that dies with its holder).
"""

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Prefetch, Q
from django.db.models.fields.json import KeyTransform
from django.utils import timezone

from studio.clusters import kube
from studio.clusters import scheduler as sched
from studio.gc_pause import gc_paused
from studio.models import Cluster, Department, Project
from studio.queue import enqueue_on_commit
from workloads import manifests
from workloads.api import runai_fields as derived
from workloads.cluster import kai_sync, pending, phases, push, sync_writes
from workloads.cluster.endpoints import endpoints_of
from workloads.cluster.push import SUSPENDABLE, owned_by_controller, workload_ref
from workloads.cluster.queued import queue as kai_queue
from workloads.cluster.round_locks import cluster_round
from workloads.manifests import distributed as manifest_distributed
from workloads.models import Workload

log = logging.getLogger(__name__)
WARNING = "Warning"
UNKNOWN_MESSAGE = "The cluster has not answered for {n} sync rounds."


@dataclass
class Seen:
    """Everything a round read from the cluster, grouped by workload id."""

    knative: bool
    started_at: datetime
    groups: set = field(default_factory=set)  # the API groups the cluster serves
    objects: dict = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))  # wid -> kind -> [obj]
    pods: dict = field(default_factory=lambda: defaultdict(list))  # wid -> [pod]
    warnings: dict = field(default_factory=lambda: defaultdict(list))  # (namespace, object name) -> [event]
    # On a cluster that schedules with KAI Scheduler (docs/scheduling.md):
    kai_detected: bool = False  # it serves KAI's API
    kai: bool = False  # and the cluster's setting uses it
    pod_groups: dict = field(default_factory=lambda: defaultdict(list))  # wid -> [PodGroup]
    evictions: dict = field(default_factory=lambda: defaultdict(list))  # (namespace, pod group) -> [Evict event]
    queues: list | None = None  # every Queue (None: not read)
    capacity: dict | None = None  # the nodes' GPUs (scheduler.gpu_capacity)


@dataclass
class SyncReport:
    workloads: int = 0
    changed: int = 0
    repushed: int = 0
    resuspended: int = 0
    removed: int = 0
    orphans_deleted: int = 0


def listed_kinds(groups) -> list[tuple[str, str]]:
    """Every kind a workload may own, with or without Knative (objects pushed before the cluster's Knative came
    or went are still ours), once each; those of optional API groups (Knative Services, Kubeflow jobs,
    PodGroups) only where the cluster serves them (`groups`, from discovery)."""
    kinds = [k for kind in manifests.KINDS for k in push.workload_object_kinds(kind)]
    missing = push.OPTIONAL_GROUPS - set(groups)
    return [k for k in dict.fromkeys(kinds) if k[0].partition("/")[0] not in missing]


def cluster_sync(cluster_id, *, now: datetime | None = None) -> SyncReport | None:
    """One round for one cluster; None when another round holds the cluster or the cluster did not answer."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return None
    with cluster_round(cluster.pk, "sync") as held, gc_paused():
        if not held:
            log.info("sync of cluster %s skipped: a round is running", cluster.name)
            return None
        try:
            conn = kube.connect(cluster)
            seen = observe(conn, cluster)
        except (kube.ClusterError, *kube.TRANSIENT_ERRORS) as exc:
            round_failed(cluster, str(getattr(exc, "message", exc)) or type(exc).__name__)
            return None
        report = reconcile(conn, cluster, seen, now=now or timezone.now())
        Cluster.objects.filter(pk=cluster.pk).update(
            status=Cluster.Status.CONNECTED, status_message="", last_seen_at=timezone.now(), failed_rounds=0,
            has_knative=seen.knative, kai_detected=seen.kai_detected,
            **({"gpu_capacity": seen.capacity} if seen.capacity is not None else {}),
        )
        if seen.kai and seen.queues is not None:
            kai_sync.queue_statuses(cluster, seen.queues)
        return report


def observe(conn: kube.Connection, cluster: Cluster) -> Seen:
    groups = kube.api_groups(conn)
    seen = Seen(knative="serving.knative.dev" in groups, started_at=timezone.now(), groups=groups)
    seen.kai_detected = cluster.kai_detected = sched.KAI_GROUP in groups
    seen.kai = seen.kai_detected and cluster.uses_kai
    if seen.kai:
        kai_sync.observe(conn, seen)
    for api_version, kind in [*listed_kinds(groups), kube.POD]:
        for obj in kube.list_managed(conn, api_version, kind):
            wid = (obj["metadata"].get("labels") or {}).get(manifests.WORKLOAD_ID_LABEL)
            if not wid:
                continue
            if (api_version, kind) == kube.POD:
                seen.pods[wid].append(obj)
            else:
                seen.objects[wid][(api_version, kind)].append(obj)
    # Events carry no labels: the Warning ones of each namespace that holds workloads, matched by object name.
    namespaces = set(Workload.objects.filter(cluster=cluster).filter(_in_play()).order_by()
                     .values_list("project__namespace", flat=True).distinct())
    for namespace in sorted(namespaces):
        try:
            events = kube.list_objects(conn, *kube.EVENT, namespace=namespace, field_selector="type=Warning")
        except kube.PermanentClusterError as exc:
            # 403 under deploy/'s RBAC: the namespace (and the product's RoleBinding in it) comes with the
            # project's first push, which may not have run yet. Nothing there to read; not a failed round.
            if exc.status != 403:
                raise
            continue
        for event in events:
            involved = event.get("involvedObject") or {}
            seen.warnings[(involved.get("namespace") or namespace, involved.get("name"))].append(event)
        if seen.kai:
            kai_sync.observe_evictions(conn, seen, namespace)
    return seen


def _in_play() -> Q:
    """Workloads the sync follows: live ones, and deleted ones whose objects may remain."""
    return Q(deleted_at__isnull=True) | ~Q(actual_phase=Workload.Phase.DELETED)


def _primary(ref: manifests.WorkloadRef, objects: dict, knative: bool) -> dict | None:
    """The workload's primary object by its deterministic name; an inference's Knative Service or, where the
    cluster has no Knative (or had none at push time), its Deployment."""
    name = manifests.object_name(ref)
    if ref.kind == manifests.DISTRIBUTED:  # its kind depends on the framework, which the round does not load
        candidates = manifest_distributed.JOB_KINDS
    else:
        candidates = [manifests.primary_kind(ref, knative=knative), manifests.primary_kind(ref, knative=not knative)]
    for api_kind in dict.fromkeys(candidates):
        for obj in objects.get(api_kind, ()):
            if obj["metadata"]["name"] == name:
                return obj
    return None


def reconcile(conn: kube.Connection, cluster: Cluster, seen: Seen, *, now: datetime) -> SyncReport:
    # A cluster holds few projects and departments: one row of each, shared by their workloads (prefetched),
    # rather than a joined copy, decoded again, in each of 10,000 rows.
    rows = list(
        Workload.objects.filter(cluster=cluster).filter(_in_play()).order_by()
        .only(
            "id", "name", "kind", "desired_phase", "actual_phase", "phase_message", "phase_updated_at",
            "running_pods", "submitted_at", "started_at", "completed_at", "created_at", "updated_at", "deleted_at",
            "endpoints", "gpu_request", "pending_reason", "queue_position", "project_id", "department_id",
        ).annotate(spec_nodePools=KeyTransform("nodePools", "spec"),
                   spec_priorityClass=KeyTransform("priorityClass", "spec"),
                   spec_preemptibility=KeyTransform("preemptibility", "spec"))
        .prefetch_related(Prefetch("project", Project.objects.only(*PROJECT_FIELDS)),
                          Prefetch("department", Department.objects.only(*DEPARTMENT_FIELDS)))
    )
    report = SyncReport(workloads=len(rows))
    changes = sync_writes.Changes(cluster=cluster, now=now)
    grace = now - timedelta(seconds=settings.SYNC_REPAIR_GRACE_SECONDS)
    waiting = {}  # wid -> (workload, reason the cluster shows); every followed row, None when not waiting
    queued = []  # pending.Row (queued.Row on KAI) of each live row meant to run, for the queues
    owners = kai_sync.owners(seen, rows, cluster.pk) if seen.kai else {}
    for workload in rows:
        wid = str(workload.pk)
        ref = workload_ref(workload)
        objects = seen.objects.get(wid, {})
        primary = _primary(ref, objects, seen.knative)
        pods = seen.pods.get(wid, [])
        events = _warnings_of(seen, ref.namespace, primary, pods)
        changes.pods(workload, pods)
        changes.cluster_events(workload, events)
        if workload.actual_phase == Workload.Phase.FAILED and primary is None and \
                workload.desired_phase != Workload.Desired.DELETED:
            waiting[wid] = (workload, None)
            continue  # refused by the cluster at push time, or gone after failing: nothing to follow
        phase, message = phases.derive_phase(workload.kind, workload.desired_phase, workload.actual_phase,
                                             phases.Observed(primary, pods, events), now=now)
        pool = derived.node_pools_of({"nodePools": workload.spec_nodePools})[0]
        live = workload.desired_phase == Workload.Desired.RUNNING and workload.deleted_at is None
        if seen.kai:
            reason, evicted = kai_sync.reason(seen, workload, phase, message, pods, pool=pool, owners=owners)
            changes.cluster_events(workload, evicted)
            waiting[wid] = (workload, reason if live else None)
            if live:
                queued.append(kai_sync.queue_row(workload, phase))
        else:
            waiting[wid] = (workload, pending.cluster_reason(phase, message, pods, events, pool=pool) if live else None)
            if live:
                queued.append(_queue_row(workload, phase, pool))
        changes.phase(workload, phase, message, primary=primary, running=_running(pods),
                      endpoints=endpoints_of(ref, objects, pods))
        report.repushed += _repair_missing(workload, primary, phase, seen, grace)
        report.resuspended += _repair_suspension(workload, ref, primary, phase, grace)
        report.removed += _repair_deleted(workload, objects, pods, grace)
    places = kai_queue(queued) if seen.kai else pending.queue(queued)
    for wid, (workload, reason) in waiting.items():
        changes.waiting(workload, *pending.answer(reason, places.get(wid)))
    report.changed = changes.save()
    report.orphans_deleted = delete_orphans(conn, cluster, seen, {str(w.pk) for w in rows})
    return report


PROJECT_FIELDS = ("name", "namespace", "gpu_deserved", "gpu_limit", "node_pool_resources", "scheduling_rules")
DEPARTMENT_FIELDS = ("name", "node_pool_resources")


def _queue_row(workload: Workload, phase: str, pool: str) -> pending.Row:
    project, department = workload.project, workload.department
    quotas = pending.quotas_of(project=project.name, deserved=project.gpu_deserved, limit=project.gpu_limit,
                               project_pools=project.node_pool_resources, department=department.name,
                               department_pools=department.node_pool_resources, pool=pool)
    return pending.Row(id=str(workload.pk), kind=workload.kind, phase=phase, pool=pool,
                       gpus=float(workload.gpu_request), submitted=workload.created_at, quotas=quotas,
                       ends_at=pending.ends_at(workload.kind, workload.started_at, project.scheduling_rules))


def _warnings_of(seen: Seen, namespace: str, primary: dict | None, pods: list[dict]) -> list[dict]:
    names = [p["metadata"]["name"] for p in pods] + ([primary["metadata"]["name"]] if primary else [])
    return [event for name in names for event in seen.warnings.get((namespace, name), ())]


def _running(pods: list[dict]) -> int:
    return sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Running"
               and not p["metadata"].get("deletionTimestamp"))


def _repair_missing(workload: Workload, primary, phase: str, seen: Seen, grace: datetime) -> int:
    """Push again a workload that should run and has no object: one seen before (removed behind our back) at
    once, one never seen after the grace (its push task was lost with a killed worker or gave up)."""
    if primary is not None or workload.desired_phase != Workload.Desired.RUNNING or phase in Workload.FINISHED:
        return 0
    seen_before = workload.submitted_at is not None and workload.submitted_at < seen.started_at
    if not seen_before and workload.created_at > grace:
        return 0
    enqueue_on_commit("workloads.tasks.workload_push", str(workload.pk))
    return 1


def _repair_suspension(workload: Workload, ref, primary, phase: str, grace: datetime) -> int:
    """Apply the suspension again when the object disagrees with the intent and the task that should have
    fixed it had its time (a Job resumed by hand, a lost suspend task)."""
    if primary is None or workload.kind not in SUSPENDABLE or phase in Workload.FINISHED:
        return 0
    if workload.desired_phase == Workload.Desired.DELETED or workload.updated_at > grace:
        return 0
    spec = primary.get("spec") or {}
    if workload.kind == Workload.Kind.DISTRIBUTED:
        parked = (spec.get("runPolicy") or {}).get("suspend") is True
    else:
        parked = spec.get("suspend") is True if workload.kind == Workload.Kind.TRAINING else spec.get("replicas") == 0
    if parked == ref.suspended:
        return 0
    task = "workload_suspend" if ref.suspended else "workload_resume"
    enqueue_on_commit(f"workloads.tasks.{task}", str(workload.pk))
    return 1


def _repair_deleted(workload: Workload, objects: dict, pods: list, grace: datetime) -> int:
    """Remove again a deleted workload whose objects outlived the grace (a lost or failed remove task)."""
    if workload.desired_phase != Workload.Desired.DELETED or workload.updated_at > grace:
        return 0
    alive = [o for group in objects.values() for o in group
             if not o["metadata"].get("deletionTimestamp") and not owned_by_controller(o)]
    if not alive:
        return 0
    enqueue_on_commit("workloads.tasks.workload_remove", str(workload.pk))
    return 1


def delete_orphans(conn: kube.Connection, cluster: Cluster, seen: Seen, followed: set[str]) -> int:
    """Delete objects labelled as ours whose workload is unknown here or deleted, in our projects'
    namespaces only (another installation may share the cluster), at most SYNC_MAX_REPAIRS per round.
    The rows are read after the lists: an object pushed during the round has its row in `followed`."""
    unknown = [wid for wid in seen.objects if wid not in followed]
    if not unknown:
        return 0
    namespaces = set(cluster.projects.values_list("namespace", flat=True))
    deleted = 0
    for wid in unknown:
        for (api_version, kind), objects in seen.objects[wid].items():
            for obj in objects:
                meta = obj["metadata"]
                if meta.get("namespace") not in namespaces or meta.get("deletionTimestamp") or owned_by_controller(obj):
                    continue
                if deleted >= settings.SYNC_MAX_REPAIRS:
                    return deleted
                try:
                    deleted += kube.delete(conn, api_version, kind, meta["namespace"], meta["name"])
                except kube.PermanentClusterError as exc:
                    log.warning("orphan %s %s/%s not deleted: %s", kind, meta["namespace"], meta["name"], exc)
    if deleted:
        log.info("sync of cluster %s deleted %d orphaned object(s)", cluster.name, deleted)
    return deleted


def round_failed(cluster: Cluster, message: str) -> None:
    """Count a round the cluster did not answer; after SYNC_DISCONNECTED_AFTER_ROUNDS, the cluster is
    Disconnected and its unfinished workloads Unknown (one event each, on the transition only)."""
    Cluster.objects.filter(pk=cluster.pk).update(failed_rounds=F("failed_rounds") + 1, status_message=message[:2000])
    failed = Cluster.objects.filter(pk=cluster.pk).values_list("failed_rounds", flat=True).first() or 0
    log.warning("sync of cluster %s failed (%d in a row): %s", cluster.name, failed, message)
    if failed < settings.SYNC_DISCONNECTED_AFTER_ROUNDS:
        return
    Cluster.objects.filter(pk=cluster.pk).update(status=Cluster.Status.DISCONNECTED)
    with transaction.atomic():
        sync_writes.mark_unknown(cluster, UNKNOWN_MESSAGE.format(n=failed), now=timezone.now())
