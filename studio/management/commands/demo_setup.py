"""Creates the demo platform admin, department, cluster and project that `make run` starts with.

Idempotent: a second run changes nothing and prints no password. The admin password comes from
DEMO_ADMIN_PASSWORD, or is generated and printed once."""

import os
import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand
from django.db import transaction

from studio import services
from studio.models import PLATFORM_ADMINS_GROUP, Cluster, Department, Membership, Project


class Command(BaseCommand):
    help = "Create the demo admin, department, cluster (the simulated one) and project."

    def add_arguments(self, parser):
        default_url = f"http://127.0.0.1:{os.environ.get('KUBESIM_PORT', '6443')}"  # where `make run` starts it
        parser.add_argument("--kubesim-url", default=os.environ.get("KUBESIM_URL") or default_url)
        parser.add_argument("--kubesim-token", default=os.environ.get("KUBESIM_TOKEN", "kubesim-token"))

    @transaction.atomic
    def handle(self, *args, kubesim_url, kubesim_token, **options):
        users = get_user_model().objects
        group, _ = Group.objects.get_or_create(name=PLATFORM_ADMINS_GROUP)
        admin = users.filter(username="admin").first()
        if admin is None:
            password = os.environ.get("DEMO_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
            admin = users.create_superuser("admin", "admin@example.com", password)
            admin.groups.add(group)
            shown = "(from DEMO_ADMIN_PASSWORD)" if os.environ.get("DEMO_ADMIN_PASSWORD") else password
            self.stdout.write(self.style.SUCCESS(f"Demo platform admin: admin / {shown}"))
        cluster = Cluster.objects.filter(name="demo").first()
        if cluster is None:
            cluster = services.model_create(
                Cluster, actor=admin, name="demo", api_server_url=kubesim_url, token=kubesim_token, verify_tls=False,
                prometheus_url=kubesim_url.rstrip("/") + "/prometheus",
            )
        elif cluster.api_server_url != kubesim_url:
            services.model_update(cluster, actor=admin, api_server_url=kubesim_url, token=kubesim_token,
                                  prometheus_url=kubesim_url.rstrip("/") + "/prometheus")
        department = Department.objects.filter(name="demo").first() or services.model_create(
            Department, actor=admin, name="demo", description="Demo department"
        )
        project = Project.objects.filter(name="demo").first() or services.project_create(
            actor=admin, name="demo", department=department, cluster=cluster, gpu_deserved=8, gpu_limit=16
        )
        if not Membership.objects.filter(project=project, user=admin).exists():
            services.membership_set(actor=admin, project=project, user=admin, role=Membership.Role.ADMIN)
        self.stdout.write(f"Demo cluster {cluster.name} at {cluster.api_server_url}; project {project.name} "
                          f"(namespace {project.namespace}).")
