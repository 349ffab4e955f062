"""Cluster work of the organisation, run by Celery workers. Tasks take ids and are idempotent."""

from celery import shared_task

from studio import kube
from studio.models import Project


@shared_task(
    acks_late=True,
    autoretry_for=kube.TRANSIENT_ERRORS,
    retry_backoff=True,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=20,
)
def project_namespace_ensure(project_id: int) -> None:
    project = Project.objects.select_related("cluster").filter(pk=project_id).first()
    if project is None:
        return
    kube.namespace_ensure(kube.connect(project.cluster), project.namespace, labels={"paas-studio/project": project.name})
