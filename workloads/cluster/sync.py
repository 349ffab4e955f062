"""The sync of a cluster: what the cluster runs -> each workload's phase, pods and events, and repairs.

`reconcile` converges rows with what was seen of the cluster: objects grouped by their workload-id label,
`phases.derive_phase` (pure) maps them to a phase, only the rows that changed are written, in bulk, with an
event per transition. Drift is repaired: a missing object of a workload that should run is pushed again, a
suspension the cluster lost is applied again, objects of deleted or unknown workloads are deleted. It serves
two callers, which hold the same per-cluster lock (`round_locks`: one that dies with its holder):

- the watcher (`workloads.cluster.watcher`), which feeds it what its watches keep: every workload once, then only those
  whose objects changed;
- a *round* (`cluster_sync`: beat's fallback where no watcher runs, and the tests), which LISTs each kind a
  workload may own (plus Pods and Warning Events) by the managed-by label, all namespaces at once, 500 a page:
  its cost grows with pages, never one GET per workload.
"""

import logging
import sys
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Max, Q
from django.db.models.fields.json import KeyTransform
from django.utils import timezone

from perf.gc_pause import gc_paused
from studio.clusters import kube
from studio.clusters import scheduler as sched
from studio.models import Cluster, Department, Project
from studio.queue import enqueue_on_commit
from workloads import manifests
from workloads import runai_fields as derived
from workloads.cluster import checkpoint, kai_sync, pending, phases, push, reach, sync_writes
from workloads.cluster.bulk_rows import pk_in
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
    unchanged: int = 0  # a watcher's full pass: the workloads its checkpoint left as they were
    retry: set = field(default_factory=set)  # workloads whose row changed meanwhile: to derive again
    # wid -> checkpoint.fingerprint of each workload derived (or left as it was) where `versions` were given
    prints: dict = field(default_factory=dict)
    # workloads whose repair was not sent: the broker away, or their push still queued behind others (PushQueue)
    unsent: set = field(default_factory=set)

    def add(self, other: "SyncReport") -> None:
        """Count in a part of the same pass (a watcher's full pass goes in parts)."""
        for name in ("workloads", "changed", "repushed", "resuspended", "removed", "orphans_deleted", "unchanged"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.retry |= other.retry
        self.unsent |= other.unsent


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
            log.info("sync round of cluster %s skipped: a watcher follows it, or another round runs", cluster.name)
            return None
        try:
            conn = kube.connect(cluster)
            seen = observe(conn, cluster)
        except (kube.ClusterError, *kube.TRANSIENT_ERRORS) as exc:
            round_failed(cluster, str(getattr(exc, "message", exc)) or type(exc).__name__)
            return None
        reach.answered(cluster.pk)
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
    namespaces = set(Workload.objects.filter(cluster=cluster).filter(in_play()).order_by()
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
    if seen.kai:
        # The PodGroups after KAI's Evict events: an eviction names its preemptor's PodGroup, which exists before
        # the eviction, so listed after it the group is there and the reclaimer's workload can be named (listed
        # before, an eviction in between named a group the round had not seen: "Reclaimed by b", no workload).
        kai_sync.observe(conn, seen, cluster.pk)
    return seen


def in_play() -> Q:
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


@dataclass
class Queues:
    """What the node pools' queues are computed from, kept by a watcher between its passes (a round starts
    empty): each live row meant to run, each followed row's waiting reason as the cluster shows it, and the
    answer (pendingReason, queuePosition) the database holds where it is not empty."""

    rows: dict = field(default_factory=dict)  # wid -> pending.Row
    reasons: dict = field(default_factory=dict)  # wid -> the cluster's reason, where there is one
    written: dict = field(default_factory=dict)  # wid -> (pending_reason, queue_position), where not (None, None)
    places: dict = field(default_factory=dict)  # wid -> pending.Place, as last computed
    names: dict = field(default_factory=dict)  # wid -> workload name (KAI: who evicted whom), of the rows read
    stale: set = field(default_factory=set)  # wids whose place moved and is not written yet (`write_places`)
    # KAI: workloads left a queue since the places were computed (`_unplace`); `write_places` computes them again
    unplaced: bool = False

    def clear(self) -> None:
        self.rows, self.reasons, self.written, self.places, self.names = {}, {}, {}, {}, {}
        self.stale, self.unplaced = set(), False

    def follow(self, wid: str, row: pending.Row | None, reason: dict | None) -> bool:
        """Keep what one pass derived for `wid`; whether the queues may have changed with it."""
        changed = self.rows.get(wid) != row or self.reasons.get(wid) != reason
        for found, value in ((self.rows, row), (self.reasons, reason)):
            if value is None:
                found.pop(wid, None)
            else:
                found[wid] = value
        return changed

    def forget(self, wid: str) -> bool:
        self.written.pop(wid, None)
        self.names.pop(wid, None)
        return self.follow(wid, None, None)

    def wrote(self, wid: str, answer: tuple) -> None:
        if answer == (None, None):
            self.written.pop(wid, None)
        else:
            self.written[wid] = answer


def reconcile(conn: kube.Connection, cluster: Cluster, seen: Seen, *, now: datetime, only: set[str] | None = None,
              queues: Queues | None = None, place: bool = True, rows: list | None = None,
              versions: dict | None = None, unchanged: set | None = None, places_later: bool = False) -> SyncReport:
    """Converge the followed rows of the cluster (or only the workloads `only`, as a watcher does with those
    whose objects changed) with what `seen` holds of them; the queues over every live row, kept in `queues`.
    `place=False` (a part of a watcher's full pass): the live rows' places in the queues are left to
    `place_queues`, once every part is read. A watcher's full pass passes the part's `rows` it read, the
    `versions` of their objects (wid -> `informer.Store.versions`: each row's `checkpoint.fingerprint` is
    reported) and the workloads its checkpoint found `unchanged`: those keep their row, pods and events as they
    are (`seen` holds nothing of them) and take their place in the queues with the phase their row holds.
    `places_later` (a watcher's pass over changed workloads): the rows it did not read whose answer moved only in
    its place are kept in `queues.stale` for `write_places`, not written now."""
    full = only is None
    if queues is None:
        queues = Queues()
    elif full:
        queues.clear()
    rows = _followed(cluster, only) if rows is None else rows
    unchanged = unchanged or set()
    report = SyncReport(workloads=len(rows))
    changes = sync_writes.Changes(cluster=cluster, now=now, whole=full)
    grace = now - timedelta(seconds=settings.SYNC_REPAIR_GRACE_SECONDS)
    waiting = reach.Waiting(cluster.pk, since=grace)
    pushes = PushQueue(cluster.pk, grace)
    read_as = {}  # wid -> (workload pk, desired, actual) of each row read
    moved = full
    joined = full  # a row came to wait in a queue (or changed there): its place is needed now
    shared_quotas: dict = {}  # (project, department, pool) -> the quotas of its rows, one tuple for them all
    if seen.kai:
        queues.names.update((str(w.pk), w.name) for w in rows)
    # who a preemptor is matters only to an Evict event: without one, every PodGroup need not be read
    owners = kai_sync.owners(seen, rows, cluster.pk, names=queues.names) \
        if seen.kai and any(seen.evictions.values()) else {}
    for workload in rows:
        wid = str(workload.pk)
        read_as[wid] = (workload.pk, workload.desired_phase, workload.actual_phase)
        queues.wrote(wid, (workload.pending_reason, workload.queue_position))
        if wid in unchanged:  # live, in a phase that waits for nothing (checkpoint.STABLE): no cluster reason
            pool = derived.node_pools_of({"nodePools": workload.spec_nodePools})[0]
            row = _queue_row(workload, workload.actual_phase, pool, wid, shared_quotas)
            moved = queues.follow(wid, row, None) or moved
            report.prints[wid] = checkpoint.fingerprint(versions.get(wid, b""), workload.actual_phase)
            continue
        ref = workload_ref(workload)
        objects = seen.objects.get(wid, {})
        primary = _primary(ref, objects, seen.knative)
        pods = seen.pods.get(wid, [])
        events = _warnings_of(seen, ref.namespace, primary, pods)
        changes.pods(workload, pods)
        changes.cluster_events(workload, events)
        if workload.actual_phase == Workload.Phase.FAILED and primary is None and \
                workload.desired_phase != Workload.Desired.DELETED:
            moved = queues.forget(wid) or moved
            continue  # refused by the cluster at push time, or gone after failing: nothing to follow
        phase, message = phases.derive_phase(workload.kind, workload.desired_phase, workload.actual_phase,
                                             phases.Observed(primary, pods, events), now=now)
        pool = derived.node_pools_of({"nodePools": workload.spec_nodePools})[0]
        live = workload.desired_phase == Workload.Desired.RUNNING and workload.deleted_at is None
        if seen.kai:
            reason, evicted = kai_sync.reason(seen, workload, phase, message, pods, pool=pool, owners=owners)
            changes.cluster_events(workload, evicted)
            row = kai_sync.queue_row(workload, phase, seen.pod_groups.get(wid, [])) if live else None
        else:
            reason = pending.cluster_reason(phase, message, pods, events, pool=pool) if live else None
            row = _queue_row(workload, phase, pool, wid, shared_quotas) if live else None
        joined = joined or (row is not None and row.phase == Workload.Phase.PENDING and queues.rows.get(wid) != row)
        moved = queues.follow(wid, row, reason if live else None) or moved
        changes.phase(workload, phase, message, primary=primary, running=_running(pods),
                      endpoints=endpoints_of(ref, objects, pods))
        if versions is not None:
            report.prints[wid] = checkpoint.fingerprint(versions.get(wid, b""), phase)
        report.repushed += _repair_missing(workload, primary, phase, seen, grace, report.unsent, waiting, pushes)
        report.resuspended += _repair_suspension(workload, ref, primary, phase, grace, report.unsent)
        report.removed += _repair_deleted(workload, objects, pods, grace, report.unsent)
    for wid in (only or set()) - set(read_as):
        moved = queues.forget(wid) or moved  # no longer followed (deleted, or not this cluster's)
    answered = set(read_as)  # the rows read, and those whose place in a queue moved
    if not place:
        answered = {wid for wid in answered if wid not in queues.rows}  # the live ones: by place_queues
    elif moved and seen.kai and places_later and not joined:
        _unplace(queues, set(read_as) | (only or set()))
    elif moved:
        answered |= _placed(queues, kai=seen.kai)
    _answer(changes, queues, answered, read_as, later=queues.stale if places_later else None)
    report.changed = changes.save()
    _answers_written(changes, queues, report)
    report.orphans_deleted = delete_orphans(conn, cluster, seen, set(read_as))
    return report


def place_queues(cluster: Cluster, queues: Queues, *, now: datetime, kai: bool) -> SyncReport:
    """The end of a full pass made of parts (`reconcile(..., place=False)`): every live row's place in its
    pool's queue, over the rows of all the parts, and the answers that changed written."""
    changes = sync_writes.Changes(cluster=cluster, now=now, whole=False)
    _answer(changes, queues, _placed(queues, kai=kai), {})
    report = SyncReport(changed=changes.save())
    _answers_written(changes, queues, report)
    return report


def _placed(queues: Queues, *, kai: bool) -> set[str]:
    """The places computed again over every live row; the workloads whose place moved."""
    before, queues.places = queues.places, (kai_queue if kai else pending.queue)(list(queues.rows.values()))
    queues.unplaced = False
    return {w for w in before.keys() | queues.places.keys() if before.get(w) != queues.places.get(w)}


def _unplace(queues: Queues, wids: set[str]) -> None:
    """A watcher's pass on KAI in which workloads only left their queues (bound, ended, deleted): theirs is no
    place now; the others' places, which moved only by a place each, are computed by `write_places`. On KAI a
    place holds no reason (KAI's own are the PodGroups', read with their workloads), so what waits is what
    `places_later` leaves to it anyway: not the queues again and every moved row's answer on each pass (5,000
    trainings binding: a fifth of the watcher's CPU, docs/performance.md)."""
    for wid in wids:
        row = queues.rows.get(wid)
        if row is None or row.phase != Workload.Phase.PENDING:
            queues.places.pop(wid, None)
    queues.unplaced = True


def write_places(cluster: Cluster, queues: Queues, *, now: datetime, kai: bool = False) -> SyncReport:
    """The places `reconcile(..., places_later=True)` left in `queues.stale`, or left to compute (`unplaced`),
    written."""
    changes = sync_writes.Changes(cluster=cluster, now=now, whole=False)
    stale, queues.stale = queues.stale, set()
    if queues.unplaced:
        stale |= _placed(queues, kai=kai)
    _answer(changes, queues, stale, {})
    report = SyncReport(changed=changes.save())
    _answers_written(changes, queues, report)
    return report


PLACE_KEYS = ("queueLength", "estimatedStartAt")


def _place_only(answer: tuple, written: tuple) -> bool:
    """Whether two answers differ only in the place: still queued, for the same reason."""
    (reason, position), (was, was_position) = answer, written
    if position is None or was_position is None or reason is None or was is None:
        return False
    return {k: v for k, v in reason.items() if k not in PLACE_KEYS} == \
        {k: v for k, v in was.items() if k not in PLACE_KEYS}


def _answer(changes: sync_writes.Changes, queues: Queues, answered: set[str], read_as: dict, *,
            later: set | None = None) -> None:
    """(pendingReason, queuePosition) of each of `answered` that differs from the one its row holds; those not
    read whose place alone moved go to `later`, where given."""
    for wid in answered:
        answer = pending.answer(queues.reasons.get(wid), queues.places.get(wid))
        written = queues.written.get(wid, (None, None))
        if answer == written:
            continue
        if later is not None and wid not in read_as and _place_only(answer, written):
            later.add(wid)
            continue
        if wid in read_as:
            pk, desired, actual = read_as[wid]
        elif wid in queues.rows:  # a live row this pass did not read: as the queue knows it
            pk, desired, actual = uuid.UUID(wid), Workload.Desired.RUNNING, queues.rows[wid].phase
        else:
            continue
        changes.waiting(pk, *answer, read_as=(desired, actual))


def _answers_written(changes: sync_writes.Changes, queues: Queues, report: SyncReport) -> None:
    for pk, answer in changes.answers_written().items():
        queues.wrote(str(pk), answer)
    report.retry = {str(pk) for pk in changes.not_written()}


def followed_ids(cluster: Cluster) -> set[str]:
    """The ids of every row the sync follows on the cluster."""
    return {str(pk) for pk in Workload.objects.filter(cluster=cluster).filter(in_play()).order_by()
            .values_list("pk", flat=True)}


def followed_names(cluster: Cluster) -> dict[str, str]:
    """wid -> name of every row the sync follows on the cluster (KAI: who evicted whom)."""
    return {str(pk): name for pk, name in Workload.objects.filter(cluster=cluster).filter(in_play()).order_by()
            .values_list("pk", "name")}


ROW_FIELDS = ("id", "name", "kind", "desired_phase", "actual_phase", "phase_message", "phase_updated_at",
              "running_pods", "submitted_at", "started_at", "completed_at", "created_at", "updated_at", "deleted_at",
              "endpoints", "gpu_request", "pending_reason", "queue_position", "project_id", "department_id")
SPEC_SHOWN = ("spec_nodePools", "spec_priorityClass", "spec_preemptibility")  # the spec keys the sync reads
CHUNK = 2000


class Followed:
    """A followed row as the sync reads it: the fields it derives and compares, under the model's names, with
    its project and department shared by every row of theirs. Built from `values_list`, four times cheaper than
    model instances, which at 100,000 rows is seconds."""

    __slots__ = (*ROW_FIELDS, *SPEC_SHOWN, "project", "department")

    def __init__(self, values: tuple, projects: dict, departments: dict):
        for name, value in zip(self.__slots__, values, strict=False):
            setattr(self, name, value)
        self.project, self.department = projects[self.project_id], departments[self.department_id]

    @property
    def pk(self):
        return self.id


def followed_rows(cluster: Cluster, only: set[str]) -> list[Followed]:
    """The followed rows of these workloads, as `reconcile` reads them (a watcher's full pass reads a part's rows
    first, to leave out those its checkpoint finds unchanged)."""
    return _followed(cluster, only)


def _followed(cluster: Cluster, only: set[str] | None) -> list[Followed]:
    """The rows the sync follows (all of the cluster's, or those of `only`). A cluster holds few projects and
    departments: one row of each, shared by their workloads, rather than a joined copy, decoded again, in each
    of 10,000 rows."""
    rows = Workload.objects.filter(cluster=cluster).filter(in_play()).order_by().annotate(
        **{name: KeyTransform(name.removeprefix("spec_"), "spec") for name in SPEC_SHOWN}).values_list(
        *ROW_FIELDS, *SPEC_SHOWN)
    if only is None:
        found = list(rows)
    else:
        wanted = sorted(only)
        found = [row for start in range(0, len(wanted), CHUNK)
                 for row in rows.filter(pk_in(Workload, wanted[start:start + CHUNK]))]
    project_at, department_at = ROW_FIELDS.index("project_id"), ROW_FIELDS.index("department_id")
    projects = {p.pk: p for p in Project.objects.filter(pk__in={r[project_at] for r in found}).only(*PROJECT_FIELDS)}
    departments = {d.pk: d for d in Department.objects.filter(pk__in={r[department_at] for r in found})
                   .only(*DEPARTMENT_FIELDS)}
    return [Followed(row, projects, departments) for row in found]


PROJECT_FIELDS = ("name", "namespace", "gpu_deserved", "gpu_limit", "node_pool_resources", "scheduling_rules")
DEPARTMENT_FIELDS = ("name", "node_pool_resources")


def _queue_row(workload: Followed, phase: str, pool: str, wid: str, shared: dict) -> pending.Row:
    """The row a watcher keeps between passes: its strings shared (the id is the key it is kept under, the kind,
    phase and pool interned), its quotas one tuple for every row of its project and pool in the pass."""
    project, department = workload.project, workload.department
    key = (project.pk, department.pk, pool)
    quotas = shared.get(key)
    if quotas is None:
        quotas = shared[key] = tuple(pending.quotas_of(
            project=project.name, deserved=project.gpu_deserved, limit=project.gpu_limit,
            project_pools=project.node_pool_resources, department=department.name,
            department_pools=department.node_pool_resources, pool=pool))
    return pending.Row(id=wid, kind=sys.intern(workload.kind), phase=sys.intern(phase), pool=sys.intern(pool),
                       gpus=float(workload.gpu_request), submitted=workload.created_at, quotas=quotas,
                       ends_at=pending.ends_at(workload.kind, workload.started_at, project.scheduling_rules))


def _warnings_of(seen: Seen, namespace: str, primary: dict | None, pods: list[dict]) -> list[dict]:
    names = [p["metadata"]["name"] for p in pods] + ([primary["metadata"]["name"]] if primary else [])
    return [event for name in names for event in seen.warnings.get((namespace, name), ())]


def _running(pods: list[dict]) -> int:
    return sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Running"
               and not p["metadata"].get("deletionTimestamp"))


class PushQueue:
    """Whether a workload's push is still waiting in the task queue behind the cluster's other pushes. The
    workers take pushes in about the order they were enqueued: while pushes of the cluster go on (one done
    within the grace), a workload created after the newest workload pushed meanwhile has its push ahead of it,
    not lost. Read once a round, and only when a repair may be due."""

    def __init__(self, cluster_id, grace: datetime):
        self.cluster_id, self.grace = cluster_id, grace
        self.newest_pushed: datetime | None = None
        self.read = False

    def waiting(self, workload: Followed) -> bool:
        if not self.read:
            self.newest_pushed = Workload.objects.filter(
                cluster_id=self.cluster_id, submitted_at__gte=self.grace).aggregate(newest=Max("created_at"))["newest"]
            self.read = True
        return self.newest_pushed is not None and workload.created_at > self.newest_pushed


def _repair_missing(workload: Followed, primary, phase: str, seen: Seen, grace: datetime, unsent: set,
                    waiting: reach.Waiting, pushes: PushQueue) -> int:
    """Push again a workload that should run and has no object: one seen before (removed behind our back) at
    once, one never seen after the grace (its push task was lost with a killed worker or gave up). Not one whose
    push waits for the cluster or was just sent again when it answered; not one whose push still waits behind the
    cluster's others (a backlog longer than the grace: a second push of each would double it): it is derived again
    next tick (`unsent`) until its object shows or the pushes pass it by."""
    if primary is not None or workload.desired_phase != Workload.Desired.RUNNING or phase in Workload.FINISHED:
        return 0
    seen_before = workload.submitted_at is not None and workload.submitted_at < seen.started_at
    if (not seen_before and workload.created_at > grace) or workload.pk in waiting:
        return 0
    if not seen_before and pushes.waiting(workload):
        unsent.add(str(workload.pk))
        return 0
    enqueue_on_commit("workloads.tasks.workload_push", str(workload.pk), unsent=unsent)
    return 1


def _repair_suspension(workload: Followed, ref, primary, phase: str, grace: datetime, unsent: set) -> int:
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
    task = "workloads.tasks.workload_suspend" if ref.suspended else "workloads.tasks.workload_resume"
    enqueue_on_commit(task, str(workload.pk), unsent=unsent)
    return 1


def _repair_deleted(workload: Followed, objects: dict, pods: list, grace: datetime, unsent: set) -> int:
    """Remove again a deleted workload whose objects outlived the grace (a lost or failed remove task)."""
    if workload.desired_phase != Workload.Desired.DELETED or workload.updated_at > grace:
        return 0
    alive = [o for group in objects.values() for o in group
             if not o["metadata"].get("deletionTimestamp") and not owned_by_controller(o)]
    if not alive:
        return 0
    enqueue_on_commit("workloads.tasks.workload_remove", str(workload.pk), unsent=unsent)
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


def round_failed(cluster: Cluster, message: str) -> int:
    """Count a round the cluster did not answer; after SYNC_DISCONNECTED_AFTER_ROUNDS, the cluster is
    Disconnected and its unfinished workloads Unknown (one event each, on the transition only)."""
    Cluster.objects.filter(pk=cluster.pk).update(failed_rounds=F("failed_rounds") + 1, status_message=message[:2000])
    failed = Cluster.objects.filter(pk=cluster.pk).values_list("failed_rounds", flat=True).first() or 0
    log.warning("sync of cluster %s failed (%d in a row): %s", cluster.name, failed, message)
    if failed < settings.SYNC_DISCONNECTED_AFTER_ROUNDS:
        return failed
    Cluster.objects.filter(pk=cluster.pk).update(status=Cluster.Status.DISCONNECTED)
    with transaction.atomic():
        sync_writes.mark_unknown(cluster, UNKNOWN_MESSAGE.format(n=failed), now=timezone.now())
    return failed
