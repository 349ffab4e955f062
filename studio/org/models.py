"""The organisation: departments and their projects (Run:ai's org units), with their per-node-pool quotas.

App label `studio` (the module is inside the studio app): studio/models.py imports these models so that Django
registers them, and the tables and migrations stay as they are. Above studio.clusters (a project is on a
cluster) and studio.iam (the access rules that say who sees a department or a project)."""

from django.db import models
from django.db.models import Exists, Q

from studio.clusters.models import Cluster
from studio.iam.models import AccessRule, is_platform_admin
from studio.names import validate_name


class DepartmentQuerySet(models.QuerySet):
    def visible_to(self, user):
        """Departments named by a rule of the user, and departments of the projects the user sees."""
        if is_platform_admin(user):
            return self
        if not getattr(user, "is_authenticated", False):
            return self.none()
        rules = AccessRule.objects.of_subject(user)
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
        rules = AccessRule.objects.of_subject(user)
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
