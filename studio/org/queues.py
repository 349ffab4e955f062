"""The projects' and departments' KAI queues on a cluster (docs/scheduling.md), one per pool where they have
quota, and what makes each node pool a KAI scheduling shard (its nodes' partition label, its SchedulingShard where
KAI's operator serves them): made, brought up to date and removed to match the organisation; run by the `studio.tasks.cluster_queues_sync` task, which every change of a
project, a department or a cluster's scheduler enqueues on commit, and which the sync round enqueues again when
it finds a queue that differs (drift). Queues the product did not make are left alone."""

import logging

from django.db.models import Q

from studio.clusters import kube
from studio.clusters import scheduler as sched
from studio.clusters.models import DEFAULT_NODE_POOL, Cluster, node_pool_labels
from studio.org.models import Department, Project
from studio.queue import enqueue_on_commit

log = logging.getLogger(__name__)
MANAGED = f"{sched.MANAGED_BY_LABEL}={sched.MANAGED_BY}"


def desired_queues(cluster: Cluster) -> list[dict]:
    """The queues the cluster's projects and their departments should have, parents first."""
    projects = list(Project.objects.filter(cluster=cluster).select_related("department").order_by("name"))
    departments = Department.objects.filter(pk__in={p.department_id for p in projects}).order_by("name")
    return sched.desired_queues(
        [{"name": d.name, "resources": d.node_pool_resources} for d in departments],
        [{"name": p.name, "department": p.department.name, "resources": p.node_pool_resources,
          "gpu_deserved": p.gpu_deserved, "gpu_limit": p.gpu_limit} for p in projects],
        [{"name": name, "default": key == ""} for name, (key, _) in _pools(cluster).items()])


def _pools(cluster: Cluster) -> dict[str, tuple[str, str]]:
    """The cluster's pools -> their node label, the default pool first ("" key)."""
    pools = node_pool_labels(cluster.pk)
    if not any(key == "" for key, _ in pools.values()):
        pools = {DEFAULT_NODE_POOL: ("", ""), **pools}
    return dict(sorted(pools.items(), key=lambda item: (item[1][0] != "", item[0])))


def shards_apply(cluster: Cluster, conn: kube.Connection) -> dict:
    """Each pool but the default a KAI scheduling shard: its nodes labelled with the partition label (and the
    label taken off a node that left the pool), and its SchedulingShard where the cluster serves them (KAI's
    operator runs a scheduler per shard). {"labelled": [node], "shards": [pool]}."""
    pools = _pools(cluster)
    done = {"labelled": [], "shards": []}
    nodes = kube.list_objects(conn, "v1", "Node")
    for name, value in sched.partition_labels(nodes, pools).items():
        kube.patch(conn, "v1", "Node", None, name, {"metadata": {"labels": {sched.POOL_LABEL: value}}})
        done["labelled"].append(name)
    if sched.SHARD_GROUP in kube.api_groups(conn):
        have = {s["metadata"]["name"] for s in kube.list_objects(conn, *sched.SHARD)}
        for pool, (key, _) in pools.items():
            if key and pool not in have:
                try:
                    kube.create(conn, sched.shard_manifest(pool))
                    done["shards"].append(pool)
                except kube.AlreadyExists:
                    pass
    if any(done.values()):
        log.info("scheduling shards of cluster %s: %s", cluster.name, {k: v for k, v in done.items() if v})
    return done


def detect_kai(cluster: Cluster, conn: kube.Connection) -> bool:
    """Whether the cluster serves KAI's Queue API; kept on the row (the sync refreshes it every round)."""
    detected = sched.KAI_GROUP in kube.api_groups(conn)
    if cluster.kai_detected != detected:
        Cluster.objects.filter(pk=cluster.pk).update(kai_detected=detected)
        cluster.kai_detected = detected
    return detected


def queues_apply(cluster: Cluster, conn: kube.Connection | None = None) -> dict:
    """Create, update and delete the cluster's queues; {"created", "updated", "deleted"} names. Nothing on a
    cluster that does not use KAI."""
    conn = conn or kube.connect(cluster)
    if cluster.kai_detected is None:
        detect_kai(cluster, conn)
    done = {"created": [], "updated": [], "deleted": []}
    if not cluster.uses_kai:
        return done
    try:
        shards_apply(cluster, conn)
    except kube.PermanentClusterError as exc:  # e.g. no right to label nodes: the queues still go out
        log.warning("scheduling shards of cluster %s not applied: %s", cluster.name, exc)
    desired = desired_queues(cluster)
    current = {q["metadata"]["name"]: q for q in kube.list_objects(conn, *sched.QUEUE, label_selector=MANAGED)}
    for queue in desired:
        name = queue["metadata"]["name"]
        found = current.get(name)
        if found is None:
            try:
                kube.create(conn, queue)
                done["created"].append(name)
                continue
            except kube.AlreadyExists:  # made by someone else (or by us, unlabelled): ours now
                found = kube.get(conn, *sched.QUEUE, None, name)
        if sched.spec_differs(found, queue) or (found["metadata"].get("labels") or {}).get(
                sched.MANAGED_BY_LABEL) != sched.MANAGED_BY:
            labels = {**queue["metadata"]["labels"], sched.POOL_LABEL: queue["metadata"]["labels"].get(sched.POOL_LABEL)}
            body = {"metadata": {"labels": labels},
                    "spec": {**queue["spec"], "parentQueue": queue["spec"].get("parentQueue")}}
            kube.patch(conn, *sched.QUEUE, None, name, body)
            done["updated"].append(name)
    wanted = {q["metadata"]["name"] for q in desired}
    gone = [q for name, q in current.items() if name not in wanted]
    # Children before their parents: a project's queue first, then the department's.
    for queue in sorted(gone, key=lambda q: (q["metadata"].get("labels") or {}).get(sched.ORG_UNIT_LABEL) != "project"):
        if kube.delete(conn, *sched.QUEUE, None, queue["metadata"]["name"]):
            done["deleted"].append(queue["metadata"]["name"])
    if any(done.values()):
        log.info("queues of cluster %s: %s", cluster.name, {k: v for k, v in done.items() if v})
    return done


def queues_drifted(cluster: Cluster, queues: list[dict]) -> bool:
    """Whether the queues read from the cluster (the product's) differ from what the organisation wants."""
    desired = {q["metadata"]["name"]: q for q in desired_queues(cluster)}
    current = {q["metadata"]["name"]: q for q in queues
               if (q["metadata"].get("labels") or {}).get(sched.MANAGED_BY_LABEL) == sched.MANAGED_BY}
    if set(desired) != set(current):
        return True
    return any(sched.spec_differs(current[name], queue) for name, queue in desired.items())


def queues_sync_on_commit(*, clusters=(), project: Project | None = None, department: Department | None = None) -> None:
    """Enqueue the queue task of every cluster a change touches, once the change commits."""
    ids = {getattr(c, "pk", c) for c in clusters if c}
    if project is not None and project.cluster_id:
        ids.add(project.cluster_id)
    if department is not None and department.pk:
        ids.update(Cluster.objects.filter(Q(projects__department=department) | Q(departments=department))
                   .values_list("pk", flat=True))
    for cluster_id in sorted(str(i) for i in ids):
        enqueue_on_commit("studio.tasks.cluster_queues_sync", cluster_id)
