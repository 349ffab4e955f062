"""Clusters and their node pools, and the GPU scheduler a cluster uses.

App label `studio` (the module is inside the studio app): studio/models.py imports these models so that Django
registers them, and the tables and migrations stay as they are. Below studio.org (a project is on a cluster),
above studio.iam (the access rules that say who sees a cluster)."""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Exists, Q

from studio.crypto import EncryptedTextField
from studio.iam.models import AccessRule, is_platform_admin
from studio.names import validate_name


class ClusterQuerySet(models.QuerySet):
    def visible_to(self, user):
        """Clusters of the projects the user sees, and clusters named by a cluster-scope rule."""
        if is_platform_admin(user):
            return self
        if not getattr(user, "is_authenticated", False):
            return self.none()
        # The clusters of the projects the user sees (as `Project.objects.visible_to` selects them), read from the
        # rules' side: every cluster with a project under a tenant-wide rule, the clusters of a department's
        # projects under a department rule, a project's cluster under a project rule.
        rules = AccessRule.objects.of_subject(user)
        with_projects = Cluster.objects.filter(projects__isnull=False).values("pk")
        return self.filter(
            Q(Exists(rules.filter(scope_type__in=AccessRule.TENANT_WIDE)), pk__in=with_projects)
            | Q(pk__in=rules.filter(scope_type=AccessRule.Scope.DEPARTMENT).values("department__projects__cluster_id"))
            | Q(pk__in=rules.filter(scope_type=AccessRule.Scope.PROJECT).values("project__cluster_id"))
            | Q(pk__in=rules.filter(scope_type=AccessRule.Scope.CLUSTER).values("cluster_id"))
        )


class GpuScheduler(models.TextChoices):
    AUTO = "auto"
    KAI = "kai"
    NONE = "none"


def default_gpu_scheduler() -> str:
    """A new cluster's GPU scheduler: GPU_SCHEDULER (auto unless set)."""
    return settings.GPU_SCHEDULER


class Cluster(models.Model):
    class Status(models.TextChoices):
        UNKNOWN = "Unknown"
        CONNECTED = "Connected"
        DISCONNECTED = "Disconnected"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=63, unique=True, validators=[validate_name])
    api_server_url = models.URLField(blank=True, default="")
    # Write-only credentials, encrypted at rest: a bearer token or a whole kubeconfig.
    token = EncryptedTextField(blank=True, default="")
    kubeconfig = EncryptedTextField(blank=True, default="")
    ca_cert = models.TextField(blank=True, default="")
    verify_tls = models.BooleanField(default=True)
    prometheus_url = models.URLField(blank=True, default="")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.UNKNOWN)
    status_message = models.TextField(blank=True, default="")
    last_seen_at = models.DateTimeField(null=True, blank=True)
    failed_rounds = models.PositiveIntegerField(default=0)
    has_knative = models.BooleanField(null=True, blank=True)
    # Its GPU scheduler (docs/scheduling.md): `auto` uses KAI Scheduler where the cluster serves KAI's Queue API
    # (`kai_detected`, from discovery, refreshed by the sync), `kai` always, `none` plain Kubernetes scheduling.
    gpu_scheduler = models.CharField(max_length=8, choices=GpuScheduler.choices, default=default_gpu_scheduler)
    kai_detected = models.BooleanField(null=True, blank=True)
    # Its nodes' GPUs as the sync last counted them: {"total", "largestNode"} (what no workload may exceed).
    gpu_capacity = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ClusterQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    @property
    def uses_kai(self) -> bool:
        """Whether its workloads are scheduled by KAI Scheduler, through the projects' queues."""
        if self.gpu_scheduler == GpuScheduler.KAI:
            return True
        return self.gpu_scheduler == GpuScheduler.AUTO and bool(self.kai_detected)

    @property
    def scheduler_shown(self) -> str:
        """What schedules its workloads, as the clusters page says it."""
        if self.uses_kai:
            return "KAI Scheduler (project queues)" + (" — detected" if self.gpu_scheduler == GpuScheduler.AUTO else "")
        if self.gpu_scheduler == GpuScheduler.AUTO and self.kai_detected is None:
            return "Not detected yet"
        return "Kubernetes (quotas checked at submission)"


NODE_POOL_LABEL = "run.ai/node-pool"  # the node label of a pool that does not name its own
DEFAULT_NODE_POOL = "default"


class NodePoolQuerySet(models.QuerySet):
    def visible_to(self, user):
        return self.filter(cluster__in=Cluster.objects.visible_to(user))


class NodePool(models.Model):
    """A set of a cluster's nodes, chosen by one node label (`labelKey=labelValue`), as Run:ai defines them.
    Every cluster has the pool `default` (no label: every node). Workloads ask for pools by name
    (`spec.nodePools`), and reach them through required node affinity on the pool's label."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="node_pools")
    name = models.CharField(max_length=63, validators=[validate_name])
    label_key = models.CharField(max_length=253, blank=True, default="")
    label_value = models.CharField(max_length=63, blank=True, default="")
    is_default = models.BooleanField(default=False)
    # Stored and answered as Run:ai's fields (runapy sends them): scheduling knobs of Run:ai's own scheduler.
    over_provisioning_ratio = models.PositiveSmallIntegerField(default=1)
    gpu_network_acceleration_detection = models.CharField(max_length=8, default="Auto")
    created_by = models.CharField(max_length=150, blank=True, default="")
    updated_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = NodePoolQuerySet.as_manager()

    class Meta:
        ordering = ["cluster_id", "-is_default", "name"]
        constraints = [models.UniqueConstraint(fields=["cluster", "name"], name="one_node_pool_name_per_cluster")]

    def __str__(self):
        return f"{self.name} ({self.cluster_id})"


def node_pool_labels(cluster_id) -> dict[str, tuple[str, str]]:
    """Each pool of the cluster -> the node label (key, value) that makes a node one of its nodes; ("", "") for
    the default pool, which holds the nodes no other pool's label names (workloads.manifests.parts.pool_terms)."""
    return {name: ("", "") if is_default or name == DEFAULT_NODE_POOL else (key or NODE_POOL_LABEL, value or name)
            for name, key, value, is_default in NodePool.objects.filter(cluster_id=cluster_id)
            .values_list("name", "label_key", "label_value", "is_default")}
