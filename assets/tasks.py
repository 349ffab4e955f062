"""Cluster work of assets, run by Celery workers: credentials made into Secrets (assets/secrets_sync.py) and data
volumes (assets/datavolumes_cluster.py). Tasks take ids, are idempotent, acknowledged late and retried on transient
cluster errors; enqueued on commit by the services and by the project signals (assets/apps.py), and by beat as a
safety net."""

import logging

from celery import shared_task

from assets import datavolumes, datavolumes_cluster
from assets.secrets_sync import cluster_secrets_apply
from studio.clusters import kube
from studio.models import Cluster
from studio.tasks import CLUSTER_WRITE

log = logging.getLogger(__name__)


@shared_task(name="assets.tasks.cluster_credentials_sync", **CLUSTER_WRITE)
def cluster_credentials_sync(cluster_id: str) -> None:
    """Converge the cluster's credential Secrets with the credentials that serve its projects."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return
    try:
        cluster_secrets_apply(cluster)
    except kube.PermanentClusterError as exc:  # e.g. no right to Secrets there: said in the log
        log.error("credential secrets of cluster %s refused: %s", cluster.name, exc.message)


@shared_task(name="assets.tasks.clusters_credentials_sync", acks_late=True)
def clusters_credentials_sync() -> None:
    """Beat's safety net: one convergence per cluster (a failed one waits for the next beat)."""
    for cluster_id in Cluster.objects.values_list("pk", flat=True):
        cluster_credentials_sync.delay(str(cluster_id))


@shared_task(name="assets.tasks.datavolume_sync", **CLUSTER_WRITE)
def datavolume_sync(data_volume_id: str) -> None:
    datavolumes_cluster.datavolume_sync(data_volume_id)


@shared_task(name="assets.tasks.datavolumes_sync", acks_late=True)
def datavolumes_sync() -> None:
    """Beat: each data volume converges again (a claim bound since, a copy someone deleted, a lost task)."""
    for pk in datavolumes.datavolume_ids():
        datavolume_sync.delay(str(pk))
