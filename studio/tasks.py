"""Cluster work of the organisation, run by Celery workers. Tasks take ids and are idempotent."""

import logging

from celery import shared_task
from django.conf import settings

from studio.clusters import kube
from studio.clusters.models import Cluster
from studio.org.models import Project
from studio.org.queues import queues_apply

log = logging.getLogger(__name__)

# The options of every task that writes to a cluster: acknowledged late, transient cluster errors retried with
# exponential backoff and jitter (KUBE_RETRY_BACKOFF, KUBE_RETRY_BACKOFF_MAX, KUBE_MAX_RETRIES).
CLUSTER_WRITE = dict(
    acks_late=True,
    autoretry_for=kube.TRANSIENT_ERRORS,
    retry_backoff=settings.KUBE_RETRY_BACKOFF,
    retry_backoff_max=settings.KUBE_RETRY_BACKOFF_MAX,
    retry_jitter=True,
    max_retries=settings.KUBE_MAX_RETRIES,
)


@shared_task(name="studio.tasks.project_namespace_ensure", **CLUSTER_WRITE)
def project_namespace_ensure(project_id: int) -> None:
    """Create the project's namespace unless it exists. A refusal is logged: every push of a workload of the
    project tries again, and fails that workload with the cluster's message if it is refused again."""
    project = Project.objects.select_related("cluster").filter(pk=project_id).first()
    if project is None:
        return
    try:
        kube.namespace_ensure(kube.connect(project.cluster), project.namespace,
                              labels={"paas-studio/project": project.name})
    except kube.PermanentClusterError as exc:
        log.error("namespace %s of project %s refused by cluster %s: %s", project.namespace, project.name,
                  project.cluster.name, exc.message)


@shared_task(name="studio.tasks.cluster_queues_sync", **CLUSTER_WRITE)
def cluster_queues_sync(cluster_id: str) -> None:
    """Bring the cluster's KAI queues in line with its projects and departments (studio.org.queues)."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return
    try:
        queues_apply(cluster)
    except kube.PermanentClusterError as exc:  # e.g. no right to queues: said in the log; the sync tries again
        log.error("queues of cluster %s refused: %s", cluster.name, exc.message)
