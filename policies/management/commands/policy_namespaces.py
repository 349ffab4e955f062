"""Label every project namespace with the Pod Security level of its effective policies, e.g. after an upgrade
that brought policies to namespaces created before them (new ones get the labels when they are created)."""

from django.core.management.base import BaseCommand

from policies.selectors import project_security_labels
from policies.tasks import project_namespace_security
from studio.clusters import kube
from studio.models import Project


class Command(BaseCommand):
    help = "Set the Pod Security Admission labels of every project namespace (or of --project NAME) now."

    def add_arguments(self, parser):
        parser.add_argument("--project", help="only this project (by name)")

    def handle(self, *args, project=None, **options):
        projects = Project.objects.order_by("name")
        if project:
            projects = projects.filter(name=project)
        for row in projects.select_related("department"):
            level = project_security_labels(row)["pod-security.kubernetes.io/enforce"]
            try:
                project_namespace_security(row.pk)  # in this process: the command's output is the result
            except kube.TRANSIENT_ERRORS as exc:
                self.stderr.write(f"{row.namespace}: cluster {row.cluster_id} did not answer ({exc}); try again")
                continue
            self.stdout.write(f"{row.namespace}: {level}")
