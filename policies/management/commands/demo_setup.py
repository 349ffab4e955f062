"""Creates the demo platform admin, department, cluster and project that `make run` starts with.

Idempotent: a second run changes nothing. The admin password comes from DEMO_ADMIN_PASSWORD, or is generated
once and kept in var/demo-admin-password (mode 0600), so that a set-up run again (even on a new database) never
makes a second password; `make run`'s banner shows it (`manage.py demo_login`). A command of policies, the
lowest app that knows everything the demo sets up (the organisation, and the demo project's policy)."""

import os
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from policies.models import Policy
from policies.services import policy_overwrite
from studio import services
from studio.models import PLATFORM_ADMIN_ROLE, AccessRule, Cluster, Department, Level, NodePool, Project, Role


def password_file() -> Path:
    return Path(settings.VAR_DIR) / "demo-admin-password"


def demo_password() -> str:
    """DEMO_ADMIN_PASSWORD, else the one kept under var/, else a new one, kept there for every later set-up."""
    if os.environ.get("DEMO_ADMIN_PASSWORD"):
        return os.environ["DEMO_ADMIN_PASSWORD"]
    path = password_file()
    if path.exists():
        return path.read_text().strip()
    password = secrets.token_urlsafe(12)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(password + "\n")
    return password


DEMO_NODE_POOLS = "my-node-pool-a=2,my-node-pool-b=2"  # the pools the example bodies name


class Command(BaseCommand):
    help = "Create the demo admin, department, cluster (the simulated one) and project."

    def add_arguments(self, parser):
        default_url = f"http://127.0.0.1:{os.environ.get('KUBESIM_PORT', '6443')}"  # where `make run` starts it
        parser.add_argument("--kubesim-url", default=os.environ.get("KUBESIM_URL") or default_url)
        parser.add_argument("--kubesim-token", default=os.environ.get("KUBESIM_TOKEN", "kubesim-token"))

    @transaction.atomic
    def handle(self, *args, kubesim_url, kubesim_token, **options):
        users = get_user_model().objects
        admin = users.filter(username="admin").first()
        if admin is None:
            admin = users.create_superuser("admin", "admin@example.com", demo_password())
            services.access_rule_create(
                actor=admin, subject_type=AccessRule.Subject.USER, subject_id=admin.username, user=admin,
                role=Role.objects.get(name=PLATFORM_ADMIN_ROLE), scope_type=AccessRule.Scope.TENANT,
                scope_id=str(AccessRule.TENANT_ID),
            )
            self.stdout.write("Demo platform admin created: admin (its password is shown when make run is up).")
        try:
            cluster = Cluster.objects.filter(name="demo").first()
        except ValueError:
            # A demo database from before `make` kept its own keys (var/secrets.env): its credentials were sealed
            # with a key derived from the old built-in one. Seal the simulated cluster's token again.
            Cluster.objects.filter(name="demo").update(token=kubesim_token, kubeconfig="")
            cluster = Cluster.objects.filter(name="demo").first()
        if cluster is None:
            cluster = services.cluster_create(
                actor=admin, name="demo", api_server_url=kubesim_url, token=kubesim_token, verify_tls=False,
                prometheus_url=kubesim_url.rstrip("/") + "/prometheus",
            )
        elif cluster.api_server_url != kubesim_url:
            services.model_update(cluster, actor=admin, api_server_url=kubesim_url, token=kubesim_token,
                                  prometheus_url=kubesim_url.rstrip("/") + "/prometheus")
        pools = self._node_pools(cluster, admin)
        department = Department.objects.filter(name="demo").first() or services.model_create(
            Department, actor=admin, name="demo", description="Demo department"
        )
        project = Project.objects.filter(name="demo").first() or services.project_create(
            actor=admin, name="demo", department=department, cluster=cluster, gpu_deserved=8, gpu_limit=16
        )
        if pools and not project.node_pool_resources:
            # The demo project holds a quota in each pool, so the example bodies (they name two pools) run.
            per_pool = {"deserved": 4, "limit": 8, "overQuotaWeight": 1}
            services.model_update(project, actor=admin, node_pool_resources=[
                {"nodePool": {"id": str(pool.pk), "name": pool.name}, "gpu": per_pool} for pool in pools])
        self._allow_host_path(project, admin)
        if not services.project_members_rules(project, admin).exists():
            services.membership_set(actor=admin, project=project, user=admin, role=Level.ADMIN)
        self.stdout.write(f"Demo cluster {cluster.name} at {cluster.api_server_url}; project {project.name} "
                          f"(namespace {project.namespace}).")

    def _node_pools(self, cluster, admin) -> list:
        """The simulated cluster's pools (KUBESIM_NODE_POOLS, as scripts/run_dev.py starts kubesim with them)."""
        pools = []
        for part in filter(None, os.environ.get("KUBESIM_NODE_POOLS", DEMO_NODE_POOLS).split(",")):
            name = part.partition("=")[0].strip()
            pool = NodePool.objects.filter(cluster=cluster, name=name).first()
            pools.append(pool or services.node_pool_create(actor=admin, cluster=cluster, name=name))
        return pools

    def _allow_host_path(self, project, admin) -> None:
        """The example training (workloads/api/seed_examples.py) mounts a hostPath, which the fallback policy refuses; the demo project allows it
        (as a platform admin would, docs/policies.md), so the example bodies run as published."""

        if not Policy.objects.filter(policy_type="trainings", scope="project", project=project).exists():
            policy_overwrite(actor=admin, policy_type="trainings", body={
                "meta": {"name": "demo-host-path", "scope": "project", "projectId": project.pk},
                "policy": {"rules": {"storage": {"hostPath": {"instances": {"canAdd": True}}}}}})
