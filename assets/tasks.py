"""Celery tasks of the assets: thin, by id, idempotent, acknowledged late, retried on transient cluster errors."""

from celery import shared_task

from assets import datavolumes, datavolumes_cluster
from studio.tasks import CLUSTER_WRITE


@shared_task(name="assets.tasks.datavolume_sync", **CLUSTER_WRITE)
def datavolume_sync(data_volume_id: str) -> None:
    datavolumes_cluster.datavolume_sync(data_volume_id)


@shared_task(name="assets.tasks.datavolumes_sync", acks_late=True)
def datavolumes_sync() -> None:
    """Beat: each data volume converges again (a claim bound since, a copy someone deleted, a lost task)."""
    for pk in datavolumes.datavolume_ids():
        datavolume_sync.delay(str(pk))
