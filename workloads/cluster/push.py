"""Cluster-side writes of one workload: push (create or adopt its objects), suspend / resume, remove.

Each reads the workload's intent (`desired_phase`) when it runs, not when it was enqueued, so a task that
runs late or twice does the right thing: a push of a workload since deleted does nothing, a suspend
overtaken by a resume resumes. Transient cluster errors propagate (the task waits for a cluster that does
not answer, workloads.cluster.reach, or retries); a permanent one fails the workload with the cluster's own message.
"""

import logging
import threading

from django.conf import settings
from django.utils import timezone

from assets import datavolumes_cluster
from assets.secret_manifests import with_pull_secrets
from assets.selectors import pull_secret_names
from policies.selectors import project_security_labels
from profiles.selectors import launch_secret_manifest
from studio.clusters import kube
from studio.clusters.scheduler import Placement, project_queue
from studio.models import Cluster
from studio.org.queues import detect_kai
from studio.selectors import node_pool_labels
from workloads import manifests
from workloads.cluster import applied
from workloads.cluster.log_capture import pod_logs_capture
from workloads.manifests import distributed as manifest_distributed
from workloads.manifests import parts
from workloads.models import Workload, WorkloadEvent
from workloads.signals import announce
from workloads.specs.distributed import master_spec_of
from workloads.specs.references import project_host

log = logging.getLogger(__name__)
SECRET = ("v1", "Secret")
SUSPENDABLE = (Workload.Kind.TRAINING, Workload.Kind.WORKSPACE, Workload.Kind.DISTRIBUTED)
# API groups a cluster may lack: their kinds are listed and deleted only where discovery shows them.
OPTIONAL_GROUPS = {"serving.knative.dev", manifest_distributed.KUBEFLOW_GROUP, *manifest_distributed.GANG}
NO_KUBEFLOW = ("The cluster does not serve kubeflow.org/v1: install the Kubeflow Training Operator to run "
               "distributed trainings.")


def workload_ref(workload: Workload) -> manifests.WorkloadRef:
    return manifests.WorkloadRef(
        id=str(workload.pk), name=workload.name, kind=workload.kind, project=workload.project.name,
        namespace=workload.project.namespace, suspended=workload.desired_phase == Workload.Desired.STOPPED,
        url_host=project_host(workload.project.name, settings.EXPOSED_URL_DOMAIN),
    )


def pinned(spec: dict, pool: str) -> dict:
    """The spec the pods are built from: in the pool the workload is placed in (Workload.node_pool) only, so it
    runs, and counts, where it was placed."""
    return {**spec, "nodePools": [pool]} if pool else spec


class Reads:
    """The reads that many pushes of a batch share, made once for the batch (reach.write_batch: the writes that
    waited for their cluster, 440 after apiserver_restart's 10 s, where they were two of a push's eight queries):
    a cluster's node pools, a project's image pull secrets for a creator. A batch lasts seconds; a push that ran
    a moment earlier would have read the same. Its threads share it: a key read twice at once is read twice."""

    def __init__(self):
        self._pools: dict = {}
        self._pull_secrets: dict = {}
        self._lock = threading.Lock()

    def node_pools(self, cluster_id) -> dict:
        return self._once(self._pools, cluster_id, lambda: node_pool_labels(cluster_id))

    def pull_secrets(self, workload: Workload) -> list[str]:
        key = (workload.project_id, workload.created_by_id)
        return self._once(self._pull_secrets, key,
                          lambda: pull_secret_names(workload.project, user_id=workload.created_by_id))

    def _once(self, kept: dict, key, read):
        with self._lock:
            if key in kept:
                return kept[key]
        value = read()
        with self._lock:
            return kept.setdefault(key, value)


def pod_spec(workload: Workload, spec: dict, reads: Reads | None = None) -> dict:
    """`pinned`, with the Secrets of the docker registry credentials that serve its project as image pull
    secrets (assets made into Secrets: assets/secrets_sync.py)."""
    return with_pull_secrets(pinned(spec, workload.node_pool), (reads or Reads()).pull_secrets(workload))


def placement_of(workload: Workload, pools: dict) -> Placement | None:
    """Its project's KAI queue in the pool it is placed in, and its Run:ai priority class, on a KAI cluster."""
    return placement_for(workload.cluster, workload.project.name, workload.kind, workload.spec,
                         pool=workload.node_pool, pools=pools)


def placement_for(cluster: Cluster, project: str, kind: str, spec: dict, *, pool: str = "",
                  pools: dict | None = None) -> Placement | None:
    """`pools` the cluster's pools' node labels (studio.selectors.node_pool_labels): the default pool's ("" key)
    is KAI's default shard, each other pool its own shard and queues."""
    if not cluster.uses_kai:
        return None
    shard = pool if pool and (pools or {}).get(pool, ("", ""))[0] else None
    return Placement(queue=project_queue(project, shard), priority_class=parts.priority_class_of(kind, spec),
                     pool=shard)


def cluster_knative(cluster: Cluster, conn: kube.Connection) -> bool:
    """Whether the cluster serves Knative, from discovery, cached on the row (the sync refreshes it)."""
    if cluster.has_knative is None:
        cluster.has_knative = kube.has_api_group(conn, "serving.knative.dev")
        Cluster.objects.filter(pk=cluster.pk).update(has_knative=cluster.has_knative)
    return cluster.has_knative


def record_event(workload_id, reason: str, message: str, *, phase: str = "",
                 type: str = WorkloadEvent.Type.NORMAL) -> None:
    WorkloadEvent.objects.create(workload_id=workload_id, at=timezone.now(), reason=reason, message=message,
                                 phase=phase, type=type)


def workload_fail(workload_id, message: str) -> None:
    """The cluster refused the workload for good: Failed, with the cluster's message, and an event."""
    now = timezone.now()
    failed = Workload.objects.filter(pk=workload_id, deleted_at__isnull=True).exclude(
        actual_phase=Workload.Phase.FAILED).update(
        actual_phase=Workload.Phase.FAILED, phase_message=message, phase_updated_at=now, completed_at=now
    )
    if failed:
        record_event(workload_id, "Failed", message, phase=Workload.Phase.FAILED, type=WorkloadEvent.Type.WARNING)
        announce(Workload, [{"workload_id": str(workload_id), "phase": Workload.Phase.FAILED, "reason": None,
                             "message": message, "at": now}])


def _load(workload_id) -> Workload | None:
    return Workload.objects.select_related("project", "cluster").filter(pk=workload_id).first()


def _namespace_ensure(conn: kube.Connection, workload: Workload, ref: manifests.WorkloadRef) -> None:
    # Its labels (the project's Pod Security levels, three policy reads) matter only when it is created.
    kube.namespace_ensure(conn, ref.namespace, labels={manifests.PROJECT_LABEL: ref.project,
                                                       **project_security_labels(workload.project)})


def _launch_secret(workload: Workload, ref: manifests.WorkloadRef) -> dict | None:
    # Only a catalog launch has one (workloads.launch): the others skip the read, one of a push's five queries.
    if workload.source != Workload.Source.CATALOG:
        return None
    return launch_secret_manifest(workload.pk, namespace=ref.namespace, labels=manifests.workload_labels(ref))


def workload_push(workload_id, reads: Reads | None = None) -> None:
    """Create every object of the workload (its project's namespace first), adopting any that exist. `reads`:
    those it shares with the other pushes of its batch."""
    reads = reads or Reads()
    workload = _load(workload_id)
    if workload is None or workload.desired_phase == Workload.Desired.DELETED or workload.is_finished:
        return
    ref = workload_ref(workload)
    try:
        conn = kube.connect(workload.cluster)
        knative = cluster_knative(workload.cluster, conn)
        if workload.cluster.kai_detected is None:
            detect_kai(workload.cluster, conn)
        master, gang = None, None
        if workload.kind == Workload.Kind.DISTRIBUTED:
            groups = kube.api_groups(conn)
            if manifest_distributed.KUBEFLOW_GROUP not in groups:
                workload_fail(workload.pk, NO_KUBEFLOW)
                return
            master, gang = master_spec_of(workload.request), manifest_distributed.gang_group(groups)
        pools = reads.node_pools(workload.cluster_id)
        objects = manifests.build_manifests(ref, pod_spec(workload, workload.spec, reads), knative=knative,
                                            master=master and pod_spec(workload, master, reads), gang=gang,
                                            gpu_scheduler=settings.GPU_SCHEDULER_NAME,
                                            placement=placement_of(workload, pools), node_pools=pools)
        secret = _launch_secret(workload, ref)
        objects = [secret, *objects] if secret else objects  # the pods read it: it goes first
        if workload.kind == Workload.Kind.INFERENCE:  # the kind that is updated: its object records what it got
            primary = manifests.primary_kind(ref, knative=knative)
            objects = [applied.annotate(o) if (o["apiVersion"], o["kind"]) == primary else o for o in objects]
        if not kube.namespace_recently_ensured(conn, ref.namespace):
            _namespace_ensure(conn, workload, ref)
        volumes = [v.get("id") for v in ((workload.spec.get("storage") or {}).get("dataVolume") or [])
                   if isinstance(v, dict) and not v.get("exclude")]
        if volumes:  # the data volumes' claims in this namespace, before the pods that mount them
            datavolumes_cluster.claims_ensure(conn, project=workload.project, data_volume_ids=volumes)
        try:
            created = [obj for obj in objects if kube.create_or_adopt(conn, obj)[1]]
        except kube.NotFound:  # the namespace was deleted since this process ensured it: again, once
            kube.namespace_forget(conn, ref.namespace)
            _namespace_ensure(conn, workload, ref)
            created = [obj for obj in objects if kube.create_or_adopt(conn, obj)[1]]
    except kube.PermanentClusterError as exc:
        workload_fail(workload.pk, exc.message)
        return
    Workload.objects.filter(pk=workload.pk, submitted_at__isnull=True).update(submitted_at=timezone.now())
    if created:
        names = ", ".join(f"{obj['kind']} {obj['metadata']['name']}" for obj in created)
        record_event(workload.pk, "Created", f"Created {names} in namespace {ref.namespace}.",
                     phase=workload.actual_phase)


def workload_roll(workload_id) -> None:
    """After an update: the primary object takes the new spec by a merge patch (its pod template changes, so
    Knative makes a new Revision and a Deployment a new ReplicaSet); objects the new spec adds are created."""
    workload = _load(workload_id)
    if workload is None or workload.desired_phase == Workload.Desired.DELETED:
        return
    ref = workload_ref(workload)
    try:
        conn = kube.connect(workload.cluster)
        knative = cluster_knative(workload.cluster, conn)
        pools = node_pool_labels(workload.cluster_id)
        objects = manifests.build_manifests(ref, pod_spec(workload, workload.spec), knative=knative,
                                            gpu_scheduler=settings.GPU_SCHEDULER_NAME,
                                            placement=placement_of(workload, pools), node_pools=pools)
        primary = manifests.primary_kind(ref, knative=knative)
        secret = _launch_secret(workload, ref)
        if secret and not kube.create_or_adopt(conn, secret)[1]:  # an upgrade may have added a key
            kube.patch(conn, *SECRET, ref.namespace, secret["metadata"]["name"], {"data": secret["data"]})
        for obj in objects:
            is_primary = (obj["apiVersion"], obj["kind"]) == primary
            live, created = kube.create_or_adopt(conn, applied.annotate(obj) if is_primary else obj)
            if not created and is_primary:
                meta = obj["metadata"]
                # Exactly the new spec: what the last one had and this one has not is taken away.
                kube.patch(conn, obj["apiVersion"], obj["kind"], meta["namespace"], meta["name"],
                           applied.roll_patch(live, obj))
    except kube.PermanentClusterError as exc:
        workload_fail(workload.pk, exc.message)
        return
    record_event(workload.pk, "Rolled", f"{primary[1]} {manifests.object_name(ref)} takes the new spec.",
                 phase=workload.actual_phase)


def workload_apply_suspension(workload_id) -> None:
    """Suspend or resume the primary object to match the desired phase (Stopped or Running), whichever task
    asked: suspend and resume in quick succession leave the workload as the later one wants."""
    workload = _load(workload_id)
    if workload is None or workload.kind not in SUSPENDABLE or workload.is_finished:
        return
    if workload.desired_phase not in (Workload.Desired.STOPPED, Workload.Desired.RUNNING):
        return
    ref = workload_ref(workload)
    if ref.suspended:  # the pods go with the suspend: their last lines stay readable
        pod_logs_capture(workload, reason="Suspended")
    api_version, kind, body = manifests.suspend_patch(ref, suspended=ref.suspended, spec=workload.spec)
    try:
        kube.patch(kube.connect(workload.cluster), api_version, kind, ref.namespace, manifests.object_name(ref),
                   body)
    except kube.NotFound:
        # Not created yet (or removed): a push creates it as the desired phase wants it.
        if not ref.suspended:
            workload_push(workload.pk)
    except kube.PermanentClusterError as exc:
        workload_fail(workload.pk, exc.message)


def workload_object_kinds(kind: str) -> list[tuple[str, str]]:
    """Every kind a workload may own on any cluster, Knative or not (nothing is left behind when the cluster's
    Knative came or went after the push), and the Secret of a catalog launch's secret inputs."""
    kinds = [SECRET, *manifests.object_kinds(kind, knative=True), *manifests.object_kinds(kind, knative=False)]
    return list(dict.fromkeys(kinds))


def workload_remove(workload_id) -> int:
    """Delete every object of a deleted workload (found by its label, one list per kind); the pods go with
    their owners. The sync marks the workload Deleted once nothing is left. Returns how many it deleted."""
    workload = _load(workload_id)
    if workload is None or workload.desired_phase != Workload.Desired.DELETED:
        return 0
    workload.log_captures.all().delete()  # its kept log lines go with it: nobody reads a deleted workload's page
    try:
        return _objects_delete(workload)
    except kube.PermanentClusterError as exc:
        record_event(workload.pk, "DeleteFailed", exc.message, phase=workload.actual_phase,
                     type=WorkloadEvent.Type.WARNING)
    return 0


def leaving_workloads_remove(project) -> list[str]:
    """A project being deleted: each of its deleted workloads not yet confirmed gone has its delete sent to the
    cluster again (idempotent), so its rows may go with the project at once instead of after the next sync round
    (security round 4, 13). Answers the names whose cluster could not be reached: they keep the project."""
    unreached = []
    leaving = Workload.objects.select_related("project", "cluster").filter(
        project=project, desired_phase=Workload.Desired.DELETED).exclude(actual_phase=Workload.Phase.DELETED)
    for workload in leaving:
        try:
            _objects_delete(workload)
        except kube.ClusterError:
            unreached.append(workload.name)
    return unreached


def _objects_delete(workload: Workload) -> int:
    selector = f"{manifests.WORKLOAD_ID_LABEL}={workload.pk}"
    deleted = 0
    conn = kube.connect(workload.cluster)
    if workload.kind == Workload.Kind.DISTRIBUTED:
        served = kube.api_groups(conn)
    else:  # the cached answer: a delete of the other kinds asks no discovery
        served = {"serving.knative.dev"} if cluster_knative(workload.cluster, conn) else set()
    for api_version, kind in workload_object_kinds(workload.kind):
        if api_version.partition("/")[0] in OPTIONAL_GROUPS - served:
            continue
        for obj in kube.list_objects(conn, api_version, kind, namespace=workload.project.namespace,
                                     label_selector=selector):
            if owned_by_controller(obj) or obj["metadata"].get("deletionTimestamp"):
                continue
            deleted += kube.delete(conn, api_version, kind, workload.project.namespace, obj["metadata"]["name"])
    return deleted


def owned_by_controller(obj: dict) -> bool:
    """Objects a controller made (a Knative revision's Deployment) go with their owner, never on their own."""
    return any(ref.get("controller") for ref in obj["metadata"].get("ownerReferences") or [])
