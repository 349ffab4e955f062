"""The sync round's part on a cluster that schedules with KAI Scheduler (docs/scheduling.md): what it reads besides
the workloads' objects (the PodGroups KAI's pod-grouper made, KAI's `Evict` events, the Queues and their status,
the nodes' GPUs), and what it makes of them (pendingReason, queue places, an event per eviction, the projects'
and departments' queue status). The reasons themselves are pure (workloads.cluster.queued)."""

import logging
from datetime import timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from studio.clusters import kube
from studio.clusters import scheduler as sched
from studio.models import Cluster, Department, Project
from studio.org.queues import queues_drifted, queues_sync_on_commit
from studio.selectors import node_pool_labels
from workloads import manifests
from workloads import runai_fields as derived
from workloads.cluster import queued
from workloads.cluster.pending import ALLOCATED
from workloads.models import Workload

log = logging.getLogger(__name__)
EVICT_SELECTOR = "reason=Evict"
EVICTION_SLACK = timedelta(seconds=2)  # event times have whole seconds
# How long before a workload was seen leaving its allocated phase an Evict event listed later may have been
# recorded: the recorder's queue, plus a round's interval (SYNC_INTERVAL_SECONDS) between the pod's deletion and
# the round that saw it. A workload that ran again after an eviction and lost its pod otherwise within this
# window would be told evicted: rarer than an eviction told as "no node with room".
LATE_EVICTION = timedelta(seconds=60)


def _allowed(read, what: str, default):
    """A read the product's role may not grant (a deploy/rbac.yaml from before KAI): said once a round in the log,
    and the round goes on without it rather than failing."""
    try:
        return read()
    except kube.PermanentClusterError as exc:
        if exc.status != 403:
            raise
        log.warning("the cluster refuses to list %s (403): apply deploy/rbac.yaml again", what)
        return default


def observe(conn: kube.Connection, seen, cluster_id=None) -> None:
    """The PodGroups of our workloads (their labels are their top owner's), every Queue, the nodes' GPUs."""
    for group in _allowed(lambda: kube.list_managed(conn, *sched.POD_GROUP), "KAI's PodGroups", []):
        wid = (group["metadata"].get("labels") or {}).get(manifests.WORKLOAD_ID_LABEL)
        if wid:
            seen.pod_groups[wid].append(group)
    seen.queues = _allowed(lambda: kube.list_objects(conn, *sched.QUEUE), "KAI's Queues", None)
    nodes = _allowed(lambda: kube.list_objects(conn, "v1", "Node"), "nodes", None)
    seen.capacity = sched.gpu_capacity(nodes, node_pool_labels(cluster_id)) if nodes is not None else None


def observe_evictions(conn: kube.Connection, seen, namespace: str) -> None:
    """KAI's `Evict` events (Normal, on PodGroups) of one namespace."""
    try:
        events = kube.list_objects(conn, *kube.EVENT, namespace=namespace, field_selector=EVICT_SELECTOR)
    except kube.PermanentClusterError as exc:
        if exc.status != 403:
            raise
        return
    for event in events:
        involved = event.get("involvedObject") or {}
        if involved.get("kind") == "PodGroup":
            seen.evictions[(involved.get("namespace") or namespace, involved.get("name"))].append(event)


def owners(seen, rows, cluster_id, *, names: dict | None = None) -> dict:
    """(namespace, pod group) -> queued.Owner: the project and workload each PodGroup of ours belongs to; and
    (namespace, "") -> the project of each namespace of the cluster. `names` (wid -> workload name) names the
    workloads of groups whose rows are not among `rows` (a watcher's pass reads only the changed ones)."""
    by_id = {**(names or {}), **{str(w.pk): w.name for w in rows}}
    found = {(namespace, ""): queued.Owner(name) for namespace, name in
             Project.objects.filter(cluster_id=cluster_id).values_list("namespace", "name")}
    for wid, groups in seen.pod_groups.items():
        for group in groups:
            meta = group["metadata"]
            project = (meta.get("labels") or {}).get(manifests.PROJECT_LABEL) or ""
            found[(meta.get("namespace"), meta["name"])] = queued.Owner(project, by_id.get(wid))
    return found


def _units(seen) -> dict:
    """Queue name -> (scope, name): which project or department a queue stands for."""
    units = {}
    for queue in seen.queues or ():
        name = queue["metadata"]["name"]
        if name.endswith(sched.DEPARTMENT_SUFFIX):
            units[name] = ("department", name[: -len(sched.DEPARTMENT_SUFFIX)])
        else:
            units[name] = ("project", name)
    return units


def reason(seen, workload: Workload, phase: str, message: str, pods: list, *, pool: str,
           owners: dict) -> tuple[dict | None, list[dict]]:
    """(pendingReason, the evictions as cluster events for the workload's timeline)."""
    namespace = workload.project.namespace
    groups = seen.pod_groups.get(str(workload.pk), [])
    raw = [e for g in groups for e in seen.evictions.get((namespace, g["metadata"]["name"]), ())]
    parsed = [(e, ev) for e in raw if (ev := queued.eviction(e, owners))]
    timeline = [{"metadata": {"uid": (e.get("metadata") or {}).get("uid")}, "reason": ev["type"],
                 "message": f"{ev['message']} KAI Scheduler: {ev['schedulerMessage']}",
                 "lastTimestamp": e.get("lastTimestamp"), "eventTime": e.get("eventTime")} for e, ev in parsed]
    left_allocated = workload.actual_phase in ALLOCATED and phase not in ALLOCATED
    # Leaving: the evictions since it last started (the phase it leaves began then). Left before: those from a
    # little before it was seen leaving (then its phase began). KAI records the event before it deletes the pod,
    # but client-go's recorder sends it from a queue, rate-limited: the round that saw the pod go may not have
    # listed it yet, and one listed later still says why the workload left.
    since = workload.phase_updated_at - (EVICTION_SLACK if left_allocated else LATE_EVICTION) \
        if workload.phase_updated_at else None
    recent = [ev for _, ev in parsed if since is None or ((at := parse_datetime(str(ev.get("at") or "")))
                                                          is not None and at >= since)]
    previous = workload.pending_reason
    late = not left_allocated and bool(recent) and (previous or {}).get("type") not in queued.EVICTED
    why = queued.why(phase, message, pods, groups, recent, pool=pool, units=_units(seen),
                     previous=previous, was_running=left_allocated or late)
    if why is not None:
        why = {**why, "queue": sched.project_queue(workload.project.name)}
    return why, timeline


def queue_row(workload: Workload, phase: str, groups: list) -> queued.Row:
    """The workload in its project's queue, ordered as KAI orders it: by its PodGroups (`groups`, KAI's
    pod-grouper's), not by its submission (queued.created_order); read only while it waits (a watcher keeps a row
    per live workload)."""
    cls = derived.priority_class_of(workload.kind, {"priorityClass": workload.spec_priorityClass,
                                                    "preemptibility": workload.spec_preemptibility})
    return queued.Row(id=str(workload.pk), queue=sched.project_queue(workload.project.name), phase=phase,
                      priority=derived.priority_of(cls) or 0, submitted=workload.created_at,
                      created=queued.created_order(groups) if phase == Workload.Phase.PENDING else None)


def queue_statuses(cluster: Cluster, queues: list[dict]) -> None:
    """Each project's and department's queue status from what KAI's queue controller wrote (only the rows that
    changed), and the queue task again when a queue differs from what the organisation wants."""
    by_name = {q["metadata"]["name"]: q for q in queues}
    at = timezone.now().isoformat().replace("+00:00", "Z")
    with transaction.atomic():
        for model, rows, name_of in (
                (Project, Project.objects.filter(cluster=cluster).only("id", "name", "queue_status"),
                 lambda r: sched.project_queue(r.name)),
                (Department, Department.objects.filter(projects__cluster=cluster).distinct()
                 .only("id", "name", "queue_status"), lambda r: sched.department_queue(r.name))):
            for row in rows:
                queue = by_name.get(name_of(row))
                status = {**sched.queue_status(queue), "queue": name_of(row)} if queue is not None else {}
                current = {k: v for k, v in (row.queue_status or {}).items() if k != "at"}
                if current != status:
                    model.objects.filter(pk=row.pk).update(queue_status={**status, "at": at} if status else {})
        if queues_drifted(cluster, queues):
            log.info("queues of cluster %s differ from the organisation's: syncing them", cluster.name)
            queues_sync_on_commit(clusters=[cluster])
