"""Celery tasks of the assets: thin, by id, idempotent, acknowledged late, retried on transient cluster errors."""

from celery import shared_task

from assets import datavolumes_cluster
from studio.tasks import CLUSTER_WRITE


@shared_task(name="assets.tasks.datavolume_sync", **CLUSTER_WRITE)
def datavolume_sync(data_volume_id: str) -> None:
    datavolumes_cluster.datavolume_sync(data_volume_id)
