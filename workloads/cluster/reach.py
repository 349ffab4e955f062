"""Whether a cluster answers, as one piece of state, and the writes that wait for it.

A cluster write (a workload's push, roll, suspension or removal task) that finds its cluster silent (a refused
connection, a timeout, a 5xx: not a 4xx, and not a 429, which the task's backoff still retries) marks the cluster
unreachable, by compare-and-set on its `ClusterReach` row so that concurrent workers agree, and parks itself as a
`WaitingWrite` row. While the cluster is marked so, every write of its workloads parks at once without trying it:
an outage costs one failed request per worker in flight, not thousands of retries. One probe runs meanwhile: the
cluster's watcher asks `/readyz` on each tick (`check`); a sync round that reads the cluster, or a watcher whose
discovery answers, says so too (`answered`). Then the cluster is marked reachable and its waiting writes are sent
again at once, oldest first, in batches; the workers' clients pace them at the cluster's rate limit (KUBE_QPS).

A row stays until its task has run after the release (`write_or_park`, or a batch of them, removes it), so nothing
parked is lost; the sync's drift repair leaves a workload whose write waits, or was just sent again, to that write
(`Waiting`).
"""

import logging
import operator
import queue
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from functools import reduce

from celery import current_app
from django.db import connections, transaction
from django.db.models import Exists, OuterRef, Q, Subquery
from django.utils import timezone

from studio.clusters import kube
from studio.models import Cluster
from workloads.models import ClusterReach, WaitingWrite, Workload

log = logging.getLogger(__name__)
RELEASE_BATCH = 500
WRITE_BATCH = 20  # writes of one task sent again together
WRITE_THREADS = 4
BATCH_TASK = "workloads.tasks.workloads_write_waited"


def unreachable_error(exc: BaseException) -> bool:
    """The cluster did not answer: no connection, a timeout, or a 5xx of its API server (not a 4xx, not a 429)."""
    if isinstance(exc, kube.TransientClusterError):
        return exc.status == 0 or exc.status >= 500
    return isinstance(exc, kube.TRANSIENT_ERRORS)


def reachable(cluster_id) -> bool:
    return not ClusterReach.objects.filter(cluster_id=cluster_id, reachable=False).exists()


def mark_unreachable(cluster_id, message: str) -> bool:
    """Mark the cluster unreachable; True for the one caller that changed it."""
    ClusterReach.objects.get_or_create(cluster_id=cluster_id)
    flipped = ClusterReach.objects.filter(cluster_id=cluster_id, reachable=True).update(
        reachable=False, changed_at=timezone.now(), message=message[:2000])
    if flipped:
        log.warning("cluster %s does not answer (%s): its writes wait for it, one probe until it answers",
                    cluster_id, message)
    return bool(flipped)


def _state(cluster_id) -> tuple[bool, bool]:
    """(marked reachable, writes waiting), in one query."""
    state = ClusterReach.objects.filter(cluster_id=cluster_id).annotate(waiting=Exists(
        WaitingWrite.objects.filter(cluster_id=cluster_id, released_at__isnull=True))).values_list(
        "reachable", "waiting").first()
    return state or (True, False)


def answered(cluster_id) -> int:
    """The cluster answered (a probe, a round, a watch): mark it reachable and send its waiting writes again.
    Returns how many were sent; one query when there is nothing to do."""
    if _state(cluster_id) == (True, False):
        return 0
    flipped = ClusterReach.objects.filter(cluster_id=cluster_id, reachable=False).update(
        reachable=True, changed_at=timezone.now(), message="")
    sent = release(cluster_id)
    if flipped:
        log.info("cluster %s answers again: %d waiting writes sent", cluster_id, sent)
    return sent


def probe(conn: kube.Connection, cluster: Cluster) -> bool:
    """The one probe of a cluster (`/readyz`, the server's own readiness); when it answers, `answered`."""
    try:
        kube.ready(conn)
    except (kube.ClusterError, *kube.TRANSIENT_ERRORS):
        return False
    answered(cluster.pk)
    return True


def check(conn: kube.Connection, cluster: Cluster) -> None:
    """The watcher's tick while its watches are fine: a cluster still marked unreachable is probed; writes parked
    in a race with the last release are sent. One query otherwise."""
    reachable_now, waiting = _state(cluster.pk)
    if not reachable_now:
        probe(conn, cluster)
    elif waiting:
        answered(cluster.pk)


def park(workload_id, cluster_id, task: str) -> None:
    WaitingWrite.objects.update_or_create(workload_id=workload_id, task=task, defaults={
        "cluster_id": cluster_id, "parked_at": timezone.now(), "released_at": None})


def release(cluster_id) -> int:
    """Send every waiting write of the cluster again, oldest first: RELEASE_BATCH rows at a time, as tasks of
    WRITE_BATCH writes of one kind each (`write_batch`). A batch the broker refuses stays waiting (the next tick
    sends it)."""
    sent = 0
    while True:
        with transaction.atomic():
            rows = list(WaitingWrite.objects.select_for_update(skip_locked=True).filter(
                cluster_id=cluster_id, released_at__isnull=True).order_by("parked_at", "pk").values_list(
                "pk", "workload_id", "task")[:RELEASE_BATCH])
            by_task: dict[str, list] = {}
            for pk, workload_id, task in rows:
                by_task.setdefault(task, []).append((pk, str(workload_id)))
            done = []
            try:
                for task, writes in by_task.items():
                    for start in range(0, len(writes), WRITE_BATCH):
                        batch = writes[start:start + WRITE_BATCH]
                        current_app.send_task(BATCH_TASK, args=[task, [wid for _, wid in batch]])
                        done += [pk for pk, _ in batch]
            except Exception:  # the broker away: the rest waits for the next tick
                log.exception("could not send the waiting writes of cluster %s; they wait for the next tick",
                              cluster_id)
            WaitingWrite.objects.filter(pk__in=done).update(released_at=timezone.now())
        sent += len(done)
        if len(rows) < RELEASE_BATCH or len(done) < len(rows):
            return sent


def write_batch(task: str, workload_ids: list[str], write: Callable) -> None:
    """Writes of one kind sent again together: each as its own task would run it (`write_or_park`), on
    WRITE_THREADS threads (a write mostly waits on the cluster and the database), under the worker's client rate
    limit for the cluster. A thread keeps its database connection for all its writes (a connection for each
    write cost 50 ms a write of a real cluster's backlog, docs/faults.md). A write that meets another transient
    error (a 429) is sent on its own, to that task's backoff."""
    pending: queue.SimpleQueue[str] = queue.SimpleQueue()
    for workload_id in workload_ids:
        pending.put(workload_id)

    def writer() -> None:
        done: list[tuple] = []  # (workload id, parked_at read): their rows go in one query when the thread ends
        try:
            while True:
                try:
                    workload_id = pending.get_nowait()
                except queue.Empty:
                    return
                try:
                    write_or_park(task, workload_id, write, done=done)
                except kube.TRANSIENT_ERRORS:
                    current_app.send_task(task, args=[workload_id])
        finally:
            try:
                if done:  # only the rows as they were read: one parked again meanwhile (a new parked_at) waits anew,
                    # even if a release sent it again already (its task may not have run yet)
                    read = reduce(operator.or_, (Q(workload_id=wid, parked_at=at) for wid, at in done))
                    WaitingWrite.objects.filter(read, task=task, released_at__isnull=False).delete()
            finally:
                connections.close_all()  # this thread's own connections

    with ThreadPoolExecutor(max_workers=WRITE_THREADS, thread_name_prefix="waited write") as pool:
        for done in [pool.submit(writer) for _ in range(min(WRITE_THREADS, len(workload_ids)))]:
            done.result()


def write_or_park(task: str, workload_id, write: Callable, *, done: list | None = None) -> None:
    """Run a workload's cluster write (`write(workload_id)`), or park it while its cluster does not answer.
    `done`: where a batch gathers the written ones whose waiting row it removes, with the row's parked_at as read
    (`write_batch`)."""
    found = Workload.objects.filter(pk=workload_id).annotate(  # waited: when its waiting row was parked, if any
        waited=Subquery(WaitingWrite.objects.filter(workload_id=OuterRef("pk"), task=task).values("parked_at")[:1]),
        silent=Exists(ClusterReach.objects.filter(cluster_id=OuterRef("cluster_id"), reachable=False)),
    ).values_list("cluster_id", "waited", "silent").first()
    if found is None:
        return write(workload_id)  # gone: the write does nothing
    cluster_id, waited, silent = found
    if silent:
        park(workload_id, cluster_id, task)
        log.info("%s of workload %s waits for cluster %s, which does not answer", task, workload_id, cluster_id)
        if reachable(cluster_id):  # it answered between the two reads: the release may have missed this one
            release(cluster_id)
        return None
    try:
        write(workload_id)
    except kube.TRANSIENT_ERRORS as exc:
        if not unreachable_error(exc):
            raise  # a 429, a 410: the task's backoff
        message = str(getattr(exc, "message", "") or exc) or type(exc).__name__
        log.warning("%s of workload %s: cluster %s did not answer (%s); the write waits for it", task, workload_id,
                    cluster_id, message)
        mark_unreachable(cluster_id, message)
        park(workload_id, cluster_id, task)
        if reachable(cluster_id):  # a probe saw it answer meanwhile
            release(cluster_id)
        return None
    if waited and done is not None:
        done.append((workload_id, waited))
    elif waited:  # the row as it was read: one parked again meanwhile (a new parked_at) waits anew
        WaitingWrite.objects.filter(workload_id=workload_id, task=task, parked_at=waited).delete()
    return None


class Waiting:
    """The workloads of a cluster with a write waiting, or sent again since `since`: the sync's repair leaves
    them to that write. Read once, when first asked."""

    def __init__(self, cluster_id, *, since: datetime):
        self.cluster_id, self.since, self._ids = cluster_id, since, None

    def __contains__(self, workload_id) -> bool:
        if self._ids is None:
            rows = WaitingWrite.objects.filter(cluster_id=self.cluster_id).exclude(released_at__lt=self.since)
            self._ids = {str(pk) for pk in rows.values_list("workload_id", flat=True)}
        return str(workload_id) in self._ids
