"""Celery tasks of the workloads: thin, by id, idempotent, acknowledged late.

The names are the ones services enqueue by (studio.queue.enqueue_on_commit). A cluster-side write whose cluster
does not answer waits for it (workloads.cluster.reach: parked, sent again at once when it answers); other
transient errors (a 429) are retried with exponential backoff and jitter; once retries run out the workload stays
as it is and the sync's drift repair pushes it again. Beat tasks fan out one task per cluster; they never retry:
the next beat is the retry.
"""

from celery import shared_task
from celery.signals import task_retry
from django.conf import settings
from prometheus_client import Counter

from studio.models import Cluster
from studio.tasks import CLUSTER_WRITE
from workloads.cluster import collect, log_capture, push, reach, reclaim, sync

RETRIED = CLUSTER_WRITE
TASK_RETRIES = Counter("studio_task_retries_total", "Celery task retries.", ["task"])


@task_retry.connect
def _count_retry(sender=None, **kwargs):
    TASK_RETRIES.labels(getattr(sender, "name", str(sender))).inc()


@shared_task(name="workloads.tasks.workload_push", **RETRIED)
def workload_push(workload_id: str) -> None:
    reach.write_or_park("workloads.tasks.workload_push", workload_id, push.workload_push)


@shared_task(name="workloads.tasks.workload_roll", **RETRIED)
def workload_roll(workload_id: str) -> None:
    reach.write_or_park("workloads.tasks.workload_roll", workload_id, push.workload_roll)


@shared_task(name="workloads.tasks.workload_suspend", **RETRIED)
def workload_suspend(workload_id: str) -> None:
    reach.write_or_park("workloads.tasks.workload_suspend", workload_id, push.workload_apply_suspension)


@shared_task(name="workloads.tasks.workload_resume", **RETRIED)
def workload_resume(workload_id: str) -> None:
    reach.write_or_park("workloads.tasks.workload_resume", workload_id, push.workload_apply_suspension)


@shared_task(name="workloads.tasks.workload_logs_capture", acks_late=True)
def workload_logs_capture(workload_id: str, reason: str) -> None:
    """Keep the last lines of a finished workload's pod logs (best effort: a pod that cannot be read is skipped).
    One workload a message: what the sync sent before the batches below (messages still queued in an upgrade)."""
    log_capture.workload_logs_capture(workload_id, reason=reason)


@shared_task(name="workloads.tasks.workloads_logs_capture", acks_late=True)
def workloads_logs_capture(finished: list[list[str]]) -> None:
    """`workload_logs_capture` for each [workload id, reason] of a batch the sync saw finish (workloads.apps's
    receiver of phase_changed)."""
    for workload_id, reason in finished:
        log_capture.workload_logs_capture(workload_id, reason=reason)


@shared_task(name="workloads.tasks.workload_remove", **RETRIED)
def workload_remove(workload_id: str) -> None:
    reach.write_or_park("workloads.tasks.workload_remove", workload_id, push.workload_remove)


WRITES = {"workloads.tasks.workload_push": push.workload_push, "workloads.tasks.workload_roll": push.workload_roll,
          "workloads.tasks.workload_suspend": push.workload_apply_suspension,
          "workloads.tasks.workload_resume": push.workload_apply_suspension,
          "workloads.tasks.workload_remove": push.workload_remove}


@shared_task(name=reach.BATCH_TASK, acks_late=True)
def workloads_write_waited(task: str, workload_ids: list[str]) -> None:
    """Writes that waited for their cluster, sent again together once it answers (workloads.cluster.reach)."""
    write = WRITES[task]
    if write is push.workload_push:  # the batch's pushes share their cluster's and projects' reads
        reads = push.Reads()
        reach.write_batch(task, workload_ids, lambda workload_id: push.workload_push(workload_id, reads))
    else:
        reach.write_batch(task, workload_ids, write)


@shared_task(name="workloads.tasks.clusters_sync", acks_late=True)
def clusters_sync() -> None:
    for cluster_id in Cluster.objects.values_list("pk", flat=True):
        cluster_sync.apply_async(args=[str(cluster_id)], expires=settings.SYNC_RESYNC_SECONDS)


@shared_task(name="workloads.tasks.cluster_sync", acks_late=True)
def cluster_sync(cluster_id: str) -> None:
    sync.cluster_sync(cluster_id)


@shared_task(name="workloads.tasks.clusters_collect_metrics", acks_late=True)
def clusters_collect_metrics() -> None:
    for cluster_id in Cluster.objects.values_list("pk", flat=True):
        cluster_collect_metrics.apply_async(args=[str(cluster_id)], expires=settings.METRICS_INTERVAL_SECONDS * 2)


@shared_task(name="workloads.tasks.cluster_collect_metrics", acks_late=True)
def cluster_collect_metrics(cluster_id: str) -> None:
    collect.cluster_collect_metrics(cluster_id)


@shared_task(name="workloads.tasks.workloads_reclaim", acks_late=True)
def workloads_reclaim() -> list[str]:
    return reclaim.workloads_reclaim()


@shared_task(name="workloads.tasks.metrics_purge", acks_late=True)
def metrics_purge() -> None:
    collect.metrics_purge()
