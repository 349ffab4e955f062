"""Run:ai's workload assets: one row per asset of any kind (environment, compute, each data source, each credential),
scoped to the tenant, a cluster, a department or a project, optionally private to its creator; and what uses
each asset (workloads and templates fill it as they are made from assets; deletion checks it).

Kinds hold their fields in `spec` (assets/specs.py checks them); a credential's secret fields are only in
`secret`, encrypted at rest (studio.crypto) and never answered. Later kinds of the same API (registries, templates
of assets, data volumes) are more values of `Kind` on the same table."""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Exists, Q

from studio.crypto import EncryptedTextField
from studio.models import AccessRule, Cluster, Department, Project, is_platform_admin


class Kind(models.TextChoices):
    ENVIRONMENT = "environment"
    COMPUTE = "compute"
    PVC = "pvc"
    NFS = "nfs"
    S3 = "s3"
    GIT = "git"
    HOST_PATH = "hostPath"
    CONFIG_MAP = "config-map"
    SECRET_VOLUME = "secret-volume"
    ACCESS_KEY = "accessKey"
    PASSWORD = "password"
    DOCKER_REGISTRY = "dockerRegistry"
    GENERIC_SECRET = "genericSecret"
    NGC_API_KEY = "ngcApiKey"
    REGISTRY = "registry"  # a container registry to list repositories and tags of (assets/registries.py)
    WORKLOAD_TEMPLATE = "workload-template"  # a template of assets (assets/templates.py)


class Scope(models.TextChoices):
    TENANT = "tenant"
    CLUSTER = "cluster"
    DEPARTMENT = "department"
    PROJECT = "project"


class AssetQuerySet(models.QuerySet):
    def visible_to(self, user):
        """What a user reads (and may use): tenant assets for anyone holding a role; a cluster's, a department's
        or a project's for those who see that cluster, department or project (a project's members see its
        department's and cluster's); a private asset only for its creator. Platform admins see every asset."""
        if is_platform_admin(user):
            return self
        if not getattr(user, "is_authenticated", False):
            return self.none()
        rules = AccessRule.objects.of_subject(user)
        return self.filter(
            Q(Exists(rules.filter(scope_type__in=AccessRule.TENANT_WIDE)))
            | Q(Exists(rules), scope=Scope.TENANT)
            | Q(scope=Scope.CLUSTER, cluster__in=Cluster.objects.visible_to(user).values("pk"))
            | Q(scope=Scope.DEPARTMENT, department__in=Department.objects.visible_to(user).values("pk"))
            | Q(scope=Scope.PROJECT, project__in=Project.objects.visible_to(user).values("pk")),
            Q(private=False) | Q(created_by=user),
        )


class Asset(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=20, choices=Kind.choices, db_index=True)
    name = models.CharField(max_length=63)
    description = models.CharField(max_length=250, blank=True, default="")
    scope = models.CharField(max_length=12, choices=Scope.choices)
    # The scope's row (the one that matches `scope`; none for the tenant). A project-scope asset also keeps its
    # project's department and cluster, so that "the assets a project may use" is one indexed query.
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, null=True, blank=True, related_name="assets")
    department = models.ForeignKey(Department, on_delete=models.CASCADE, null=True, blank=True, related_name="assets")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, null=True, blank=True, related_name="assets")
    # Unique name per kind in a scope (a private asset: per its creator there): "project:7", "project:7:user:3"
    scope_key = models.CharField(max_length=120, editable=False)
    private = models.BooleanField(default=False)
    auto_delete = models.BooleanField(default=False)
    workload_supported_types = models.JSONField(default=dict, blank=True)
    spec = models.JSONField(default=dict, blank=True)
    secret = EncryptedTextField(blank=True, default="")  # JSON of the secret fields, encrypted at rest
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+")
    created_by_name = models.CharField(max_length=150)
    updated_by_name = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    update_count = models.PositiveIntegerField(default=0)

    objects = AssetQuerySet.as_manager()

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["kind", "scope_key", "name"], name="asset_name_unique_in_scope"),
            models.CheckConstraint(name="asset_scope_row", condition=(
                Q(scope="tenant", project__isnull=True, department__isnull=True, cluster__isnull=True)
                | Q(scope="cluster", cluster__isnull=False, project__isnull=True, department__isnull=True)
                | Q(scope="department", department__isnull=False, project__isnull=True)
                | Q(scope="project", project__isnull=False))),
        ]
        indexes = [models.Index(fields=["scope", "kind"])]

    def __str__(self):
        return f"{self.kind} {self.name}"


class AssetUse(models.Model):
    """One thing that uses an asset: a workload (by its kind), a template of assets, or another asset (a data
    source that reads a credential). The workloads and templates of later work write these rows; an asset with
    any is not deleted (409 naming them) and answers them as Run:ai's `usedBy`."""

    class Consumer(models.TextChoices):
        WORKSPACE = "workspace"
        TRAINING = "training"
        DISTRIBUTED = "distributed"
        INFERENCE = "inference"
        TEMPLATE = "template"
        ASSET = "asset"

    asset = models.ForeignKey(Asset, on_delete=models.CASCADE, related_name="uses")
    consumer = models.CharField(max_length=12, choices=Consumer.choices)
    consumer_id = models.CharField(max_length=64)  # a workload's or template's id, or the using asset's
    consumer_name = models.CharField(max_length=255)
    # For an asset that uses another: the row, so that the use goes when the using asset does.
    consumer_asset = models.ForeignKey(Asset, on_delete=models.CASCADE, null=True, blank=True,
                                       related_name="uses_of_others")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [models.UniqueConstraint(fields=["asset", "consumer", "consumer_id"], name="one_use_per_consumer")]

    def __str__(self):
        return f"{self.consumer} {self.consumer_name} uses {self.asset}"


class DataVolumeQuerySet(models.QuerySet):
    def visible_to(self, user):
        """Who reads a data volume: those who see its origin project, and those who see a project it is shared
        with (a project, the project's department or its cluster named in its shared scopes)."""
        if is_platform_admin(user):
            return self
        if not getattr(user, "is_authenticated", False):
            return self.none()
        projects = Project.objects.visible_to(user)
        shared = DataVolumeShare.objects.filter(
            Q(scope_type=Scope.PROJECT, project__in=projects.values("pk"))
            | Q(scope_type=Scope.DEPARTMENT, department__in=projects.values("department_id"))
            | Q(scope_type=Scope.CLUSTER, cluster__in=projects.values("cluster_id")))
        return self.filter(Q(project__in=projects.values("pk")) | Q(pk__in=shared.values("data_volume_id")))


class DataVolume(models.Model):
    """Run:ai's data volume: a PVC of a project (`origin_pvc_name` in the project's namespace) shared read-only
    with other scopes. The claim is copied as a PersistentVolume bound to a claim of the same name in each
    namespace that may use it (assets/datavolumes_cluster.py)."""

    class Phase(models.TextChoices):
        READY = "Ready"
        NOT_READY = "NotReady"
        CREATING = "Creating"
        DELETING = "Deleting"
        UNKNOWN = "Unknown"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=63)
    description = models.CharField(max_length=127, blank=True, default="")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="data_volumes")
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="data_volumes")
    origin_pvc_name = models.CharField(max_length=253)
    should_delete_original_volume = models.BooleanField(default=False)
    use_original_volume = models.BooleanField(default=True)
    phase = models.CharField(max_length=10, choices=Phase.choices, default=Phase.CREATING)
    phase_message = models.CharField(max_length=500, blank=True, default="")
    pv_name = models.CharField(max_length=253, blank=True, default="")  # the origin claim's volume
    conditions = models.JSONField(default=list, blank=True)
    created_by = models.CharField(max_length=150)
    updated_by = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = DataVolumeQuerySet.as_manager()

    class Meta:
        ordering = ["name", "id"]
        constraints = [models.UniqueConstraint(fields=["cluster", "name"], name="data_volume_name_unique_in_cluster")]

    def __str__(self):
        return f"data volume {self.name}"


class DataVolumeShare(models.Model):
    """One scope a data volume is shared with (Run:ai's sharedScopes: a cluster, a department or a project)."""

    data_volume = models.ForeignKey(DataVolume, on_delete=models.CASCADE, related_name="shares")
    scope_type = models.CharField(max_length=12, choices=[(s, s) for s in ("cluster", "department", "project")])
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    department = models.ForeignKey(Department, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, null=True, blank=True, related_name="+")
    created_by = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [models.UniqueConstraint(fields=["data_volume", "scope_type", "cluster", "department", "project"],
                                               name="data_volume_share_once")]

    def __str__(self):
        return f"{self.data_volume} shared with {self.scope_type}"

    @property
    def scope_id(self) -> str:
        return str(self.cluster_id or self.department_id or self.project_id)


class StorageClassConfiguration(models.Model):
    """Run:ai's storage class configuration (latest): which storage classes of a cluster users may pick, and
    their defaults. Kept here as Run:ai's body gives it (`spec`), per cluster and storage class."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="storage_class_configurations")
    storage_class_name = models.CharField(max_length=253)
    spec = models.JSONField(default=dict, blank=True)
    created_by = models.CharField(max_length=150)
    updated_by = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["storage_class_name", "id"]
        constraints = [models.UniqueConstraint(fields=["cluster", "storage_class_name"],
                                               name="storage_class_configuration_once")]

    def __str__(self):
        return f"storage class {self.storage_class_name}"
