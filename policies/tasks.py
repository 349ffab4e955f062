"""Cluster work of policies: a project's namespace carries the Pod Security Admission labels of its effective
policies. Run when a project is created and on commit of every policy change that reaches it."""

import logging

from celery import shared_task

from policies.selectors import project_security_labels
from studio.clusters import kube
from studio.models import Project
from studio.tasks import CLUSTER_WRITE

log = logging.getLogger(__name__)
PROJECT_LABEL = "paas-studio/project"


@shared_task(name="policies.tasks.project_namespace_security", **CLUSTER_WRITE)
def project_namespace_security(project_id: int) -> None:
    """Create the namespace with the labels, or patch them onto the existing one (idempotent)."""
    project = Project.objects.select_related("cluster", "department").filter(pk=project_id).first()
    if project is None:
        return
    labels = project_security_labels(project)
    try:
        conn = kube.connect(project.cluster)
        if not kube.namespace_ensure(conn, project.namespace, labels={PROJECT_LABEL: project.name, **labels}):
            kube.patch(conn, "v1", "Namespace", None, project.namespace, {"metadata": {"labels": labels}})
    except kube.PermanentClusterError as exc:
        log.error("pod security labels of namespace %s (project %s) refused by cluster %s: %s",
                  project.namespace, project.name, project.cluster.name, exc.message)
