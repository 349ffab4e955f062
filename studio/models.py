"""Organisation and identity: clusters, departments, projects, roles and access rules, access keys, the audit trail."""

import secrets
import uuid
from functools import cache

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import check_password, make_password
from django.db import connection, models
from django.db.models import Exists, Q

from studio.crypto import EncryptedTextField
from studio.names import validate_name

PLATFORM_ADMINS_GROUP = "platform-admins"


def is_platform_admin(user) -> bool:
    """Superusers, and subjects of an admin-level role at tenant scope (e.g. "System administrator").

    The `platform-admins` group keeps working through the group access rule the migration created for it.
    Cached on the user for the request."""
    if not getattr(user, "is_authenticated", False):
        return False
    cached = getattr(user, "_studio_platform_admin", None)
    if cached is None:
        cached = user.is_superuser or any(scope in AccessRule.TENANT_WIDE and level == Level.ADMIN
                                           for scope, _project, _department, level in subject_rules(user))
        user._studio_platform_admin = cached
    return cached


def subject_rules(user) -> list[tuple]:
    """(scope type, project id, department id, role level) of each access rule that applies to the user; one
    query, cached on the user for the request: the platform-admin check and the user's roles read the same rows."""
    cached = getattr(user, "_studio_rules", None)
    if cached is None:
        if not getattr(user, "is_authenticated", False):
            cached = []
        else:
            with connection.cursor() as cursor:
                cursor.execute(_subject_rules_sql(), [*AccessRule.PERSONAL, user.pk, user.pk,
                                                      AccessRule.Subject.GROUP])
                cached = [tuple(row) for row in cursor.fetchall()]
        user._studio_rules = cached
    return cached


@cache
def _subject_rules_sql() -> str:
    """`AccessRule.objects.of_subject(user).values_list("scope_type", "project_id", "department_id",
    "role__level")` written once: compiled from the ORM (a join and a subquery of the user's groups) it cost
    about a millisecond of every API request. Parameters: the two personal subject types, the user's id (twice),
    the group subject type."""
    def table(model):
        return connection.ops.quote_name(model._meta.db_table)

    def column(model, name):
        return connection.ops.quote_name(model._meta.get_field(name).column)

    quote, rule, role = connection.ops.quote_name, AccessRule, Role
    groups = get_user_model()._meta.get_field("groups")
    group, through = groups.related_model, groups.remote_field.through
    return (
        f"SELECT r.{column(rule, 'scope_type')}, r.{column(rule, 'project')}, r.{column(rule, 'department')}, "
        f"o.{column(role, 'level')} FROM {table(rule)} r INNER JOIN {table(role)} o "
        f"ON r.{column(rule, 'role')} = o.{column(role, 'id')} "
        f"WHERE (r.{column(rule, 'subject_type')} IN (%s, %s) AND r.{column(rule, 'user')} = %s) "
        f"OR (r.{column(rule, 'subject_id')} IN (SELECT g.{column(group, 'name')} FROM {table(group)} g "
        f"INNER JOIN {table(through)} m ON g.{column(group, 'id')} = m.{quote(groups.m2m_reverse_name())} "
        f"WHERE m.{quote(groups.m2m_column_name())} = %s) AND r.{column(rule, 'subject_type')} = %s) "
        f"ORDER BY r.{column(rule, 'id')}")


def _rules_of(user):
    return AccessRule.objects.of_subject(user)


class ClusterQuerySet(models.QuerySet):
    def visible_to(self, user):
        """Clusters of the projects the user sees, and clusters named by a cluster-scope rule."""
        if is_platform_admin(user):
            return self
        if not getattr(user, "is_authenticated", False):
            return self.none()
        rules = _rules_of(user)
        return self.filter(
            Q(pk__in=Project.objects.visible_to(user).values("cluster_id"))
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


class DepartmentQuerySet(models.QuerySet):
    def visible_to(self, user):
        """Departments named by a rule of the user, and departments of the projects the user sees."""
        if is_platform_admin(user):
            return self
        if not getattr(user, "is_authenticated", False):
            return self.none()
        rules = _rules_of(user)
        return self.filter(
            Exists(rules.filter(scope_type__in=AccessRule.TENANT_WIDE))
            | Q(pk__in=rules.filter(scope_type=AccessRule.Scope.DEPARTMENT).values("department_id"))
            | Q(pk__in=Project.objects.filter(pk__in=rules.filter(scope_type=AccessRule.Scope.PROJECT)
                                              .values("project_id")).values("department_id"))
        )


class Department(models.Model):
    name = models.CharField(max_length=63, unique=True, validators=[validate_name])
    description = models.TextField(blank=True, default="")
    # Run:ai's department belongs to one cluster (`clusterId`); a department created without one leaves it out, and
    # then answer the cluster of their first project. Once set, the department's projects must be on it.
    cluster = models.ForeignKey(Cluster, on_delete=models.SET_NULL, null=True, blank=True, related_name="departments")
    # Run:ai's per-node-pool quotas of the department (`resources`), stored and answered; the scheduler of a
    # real Run:ai cluster enforces them, PaaS Studio enforces the projects' quotas only.
    node_pool_resources = models.JSONField(default=list, blank=True)
    # Run:ai's schedulingRules, defaultNodePools and nodeTypes of a department: stored and answered (see
    # docs/runai-compatibility.md; the project's own values are the ones enforced).
    scheduling_rules = models.JSONField(default=dict, blank=True)
    runai_settings = models.JSONField(default=dict, blank=True)
    # Its KAI queue's status as the sync last read it (studio.clusters.scheduler.queue_status).
    queue_status = models.JSONField(default=dict, blank=True)
    created_by = models.CharField(max_length=150, blank=True, default="")
    updated_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = DepartmentQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class ProjectQuerySet(models.QuerySet):
    def visible_to(self, user):
        if is_platform_admin(user):
            return self
        if not getattr(user, "is_authenticated", False):
            return self.none()
        # One query: a tenant-wide rule covers every project, a department rule its projects, a project rule one.
        rules = _rules_of(user)
        return self.filter(
            Exists(rules.filter(scope_type__in=AccessRule.TENANT_WIDE))
            | Q(department_id__in=rules.filter(scope_type=AccessRule.Scope.DEPARTMENT).values("department_id"))
            | Q(pk__in=rules.filter(scope_type=AccessRule.Scope.PROJECT).values("project_id"))
        )


class Project(models.Model):
    name = models.CharField(max_length=63, unique=True, validators=[validate_name])
    department = models.ForeignKey(Department, on_delete=models.PROTECT, related_name="projects")
    cluster = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="projects")
    namespace = models.CharField(max_length=63, unique=True, editable=False)
    gpu_deserved = models.DecimalField(max_digits=10, decimal_places=2, default=0)
    gpu_limit = models.DecimalField(max_digits=10, decimal_places=2, null=True, blank=True)
    # Run:ai's per-node-pool quotas, as its `resources` array shapes them: [{"nodePool": {"id", "name"},
    # "gpu": {"deserved", "limit", "overQuotaWeight"}, "cpu": {…}, "memory": {…, "units"}}]. Empty: the
    # project may use every pool of its cluster under its GPU totals above.
    node_pool_resources = models.JSONField(default=list, blank=True)
    # Run:ai's SchedulingRules (seconds, each optional): idle and time limits the reclaim round enforces
    # (workloads/cluster/reclaim.py): interactiveJobMaxIdleDurationSeconds, interactiveJobTimeLimitSeconds,
    # trainingJobMaxIdleDurationSeconds, trainingJobTimeLimitSeconds, interactiveJobPreemptIdleDurationSeconds.
    scheduling_rules = models.JSONField(default=dict, blank=True)
    description = models.TextField(blank=True, default="")
    # Run:ai's defaultNodePools (the pools of a workload naming none: workloads.services.workload_submit),
    # nodeTypes and enforceRunaiScheduler (stored and answered; docs/runai-compatibility.md says why).
    runai_settings = models.JSONField(default=dict, blank=True)
    # Its KAI queue's status as the sync last read it (studio.clusters.scheduler.queue_status).
    queue_status = models.JSONField(default=dict, blank=True)
    created_by = models.CharField(max_length=150, blank=True, default="")
    updated_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = ProjectQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name

    @staticmethod
    def namespace_for(name: str) -> str:
        return f"studio-{name}"[:63]


class Level(models.TextChoices):
    """Our three permission levels; every Run:ai role maps to one."""

    ADMIN = "admin"
    MEMBER = "member"
    VIEWER = "viewer"


LEVEL_RANK = {Level.VIEWER: 1, Level.MEMBER: 2, Level.ADMIN: 3}


class Role(models.Model):
    """A predefined Run:ai role (seeded by a migration, read-only through the API) and the level it grants."""

    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True, default="")
    level = models.CharField(max_length=8, choices=Level.choices)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return self.name


# The role a project member of each level gets when granted through the members API or page.
DEFAULT_ROLE_OF_LEVEL = {Level.ADMIN: "Editor", Level.MEMBER: "L1 researcher", Level.VIEWER: "Viewer"}  # as migration 0002
PLATFORM_ADMIN_ROLE = "System administrator"


class AccessRuleQuerySet(models.QuerySet):
    def of_subject(self, user):
        """Rules that apply to the user: as a user (or service account) subject, or through one of the user's
        groups (a user of the identity provider: the provider's groups at the last login)."""
        if not getattr(user, "is_authenticated", False):
            return self.none()
        return self.filter(
            Q(subject_type__in=AccessRule.PERSONAL, user_id=user.pk)
            | Q(subject_type=AccessRule.Subject.GROUP, subject_id__in=user.groups.values("name"))
        )

    def visible_to(self, user):
        """Platform admins see every rule; others their own rules and the rules on the projects they see (as
        the members of a project are shown to its viewers)."""
        if is_platform_admin(user):
            return self
        if not getattr(user, "is_authenticated", False):
            return self.none()
        return self.filter(Q(user_id=user.pk) | Q(scope_type=AccessRule.Scope.PROJECT,
                                                  project__in=Project.objects.visible_to(user)))


class AccessRule(models.Model):
    """Subject (user / group / app) × role × scope (tenant / department / project …): how roles are granted.

    A tenant-scope rule covers everything, a department-scope rule its projects. The scope's row is also kept
    as a foreign key, so deleting a project or department deletes its rules and lookups are indexed joins."""

    class Subject(models.TextChoices):
        USER = "user"
        GROUP = "group"
        APP = "app"
        SERVICE_ACCOUNT = "service-account"

    class Scope(models.TextChoices):
        SYSTEM = "system"
        TENANT = "tenant"
        CLUSTER = "cluster"
        DEPARTMENT = "department"
        PROJECT = "project"

    TENANT_WIDE = (Scope.SYSTEM, Scope.TENANT)
    PERSONAL = (Subject.USER, Subject.SERVICE_ACCOUNT)  # subjects that are one row of the user table
    TENANT_ID = 1  # one tenant per installation

    subject_type = models.CharField(max_length=16, choices=Subject.choices)
    # a username, a group name, an app's or a service account's client id
    subject_id = models.CharField(max_length=255)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True,
                             related_name="access_rules")
    role = models.ForeignKey(Role, on_delete=models.PROTECT, related_name="access_rules")
    scope_type = models.CharField(max_length=12, choices=Scope.choices)
    scope_id = models.CharField(max_length=64)
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, null=True, blank=True, related_name="access_rules")
    department = models.ForeignKey(Department, on_delete=models.CASCADE, null=True, blank=True,
                                   related_name="access_rules")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, null=True, blank=True, related_name="access_rules")
    created_by = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = AccessRuleQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = [models.UniqueConstraint(fields=["subject_type", "subject_id", "role", "scope_type", "scope_id"],
                                               name="one_access_rule_per_subject_role_scope")]
        indexes = [models.Index(fields=["subject_type", "subject_id"]), models.Index(fields=["scope_type", "scope_id"])]

    def __str__(self):
        return f"{self.subject_type} {self.subject_id}: {self.role} on {self.scope_type} {self.scope_id}"

    @property
    def scope_name(self) -> str:
        target = self.project or self.department or self.cluster
        return target.name if target is not None else "tenant"

class AccessKey(models.Model):
    """A client id and secret for the client_credentials grant; the secret is shown once and stored hashed."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="access_keys")
    name = models.CharField(max_length=100)
    client_id = models.CharField(max_length=64, unique=True, editable=False)
    secret_hash = models.CharField(max_length=256, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.name} ({self.client_id})"

    @classmethod
    def issue(cls, *, user, name: str) -> tuple["AccessKey", str]:
        secret = secrets.token_urlsafe(32)
        key = cls.objects.create(
            user=user, name=name, client_id="ak-" + secrets.token_hex(12), secret_hash=make_password(secret)
        )
        return key, secret

    def check_secret(self, secret: str) -> bool:
        return check_password(secret, self.secret_hash)


class AuditEvent(models.Model):
    class Action(models.TextChoices):
        CREATE = "create"
        UPDATE = "update"
        DELETE = "delete"

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    actor_name = models.CharField(max_length=150, blank=True, default="")
    action = models.CharField(max_length=8, choices=Action.choices)
    object_type = models.CharField(max_length=64, db_index=True)
    object_id = models.CharField(max_length=64)
    object_repr = models.CharField(max_length=200, blank=True, default="")
    changes = models.JSONField(default=dict, blank=True)
    request_id = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["object_type", "object_id"])]

    def __str__(self):
        return f"{self.actor_name} {self.action} {self.object_type} {self.object_repr}"




# Single sign-on and service accounts live in studio/iam; imported here so that Django registers them.
from studio.iam.passwords import TemporaryPassword  # noqa: E402,F401
from studio.iam.sso_models import ExternalIdentity, IdentityProvider, ServiceAccount  # noqa: E402,F401
