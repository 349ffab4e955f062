"""The usage history and what is made of it.

`UsageHour` holds one row per workload and hour in which it held resources, for a bounded window
(USAGE_HOURLY_RETENTION_DAYS); `UsageUnitHour` the same hours summed per cluster, node pool, project and user, for
the same window; `UsageDay` one row per day and the same keys, kept for years. The unit rows carry no workload, so
their number follows the organisation (its projects, users and pools), not the number of workloads it ran: every
read over a range (reports, averages, metrics over time) reads them, and stays flat as the workloads grow
(bench/usage_history.py). Both copy the names they are reported by: a report still reads after a project,
a user or a workload is gone.

GPU utilisation is known only where the cluster's Prometheus serves DCGM: `gpu_measured_hours` are the GPU-hours
whose utilisation was sampled, `gpu_used_hours` the part of them the GPUs were busy, so idle GPU-hours are
measured minus used, and GPU-hours without a sample are neither used nor idle."""

import uuid

from django.conf import settings
from django.db import models

from studio.models import NodePool


class Amounts(models.Model):
    gpu_hours = models.FloatField(default=0)
    gpu_measured_hours = models.FloatField(default=0)
    gpu_used_hours = models.FloatField(default=0)
    cpu_core_hours = models.FloatField(default=0)
    cpu_used_core_hours = models.FloatField(default=0)
    memory_gib_hours = models.FloatField(default=0)
    memory_used_gib_hours = models.FloatField(default=0)

    class Meta:
        abstract = True


AMOUNTS = ("gpu_hours", "gpu_measured_hours", "gpu_used_hours", "cpu_core_hours", "cpu_used_core_hours",
           "memory_gib_hours", "memory_used_gib_hours")


class OrgKeys(models.Model):
    cluster_id = models.UUIDField()
    node_pool = models.CharField(max_length=63)  # the pool's name ("" placements resolved to the default pool)
    project_id = models.BigIntegerField()
    project_name = models.CharField(max_length=63)
    department_id = models.BigIntegerField()
    department_name = models.CharField(max_length=63)
    user_name = models.CharField(max_length=254)  # the submitter, as Workload.created_by_name

    class Meta:
        abstract = True


class UsageHour(OrgKeys, Amounts):
    hour = models.DateTimeField()  # the hour's start, UTC
    workload_id = models.UUIDField()
    workload_name = models.CharField(max_length=63)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["hour", "workload_id"], name="one_usage_row_per_workload_hour")]
        indexes = [models.Index(fields=["project_id", "hour"]), models.Index(fields=["department_id", "hour"])]

    def __str__(self):
        return f"{self.workload_name} {self.hour:%Y-%m-%d %H}h: {self.gpu_hours:g} GPU-hours"


class UsageUnitHour(OrgKeys, Amounts):
    hour = models.DateTimeField()  # the hour's start, UTC

    class Meta:
        constraints = [models.UniqueConstraint(fields=["hour", "cluster_id", "node_pool", "project_id", "user_name"],
                                               name="one_usage_row_per_hour_unit_user")]
        indexes = [models.Index(fields=["project_id", "hour"]), models.Index(fields=["department_id", "hour"]),
                   models.Index(fields=["cluster_id", "hour"])]

    def __str__(self):
        return f"{self.project_name}/{self.user_name} {self.hour:%Y-%m-%d %H}h: {self.gpu_hours:g} GPU-hours"


class UsageDay(OrgKeys, Amounts):
    day = models.DateField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["day", "cluster_id", "node_pool", "project_id", "user_name"],
                                               name="one_usage_row_per_day_unit_user")]
        indexes = [models.Index(fields=["project_id", "day"]), models.Index(fields=["department_id", "day"])]

    def __str__(self):
        return f"{self.project_name}/{self.user_name} {self.day}: {self.gpu_hours:g} GPU-hours"


class RollupState(models.Model):
    """One row: the end of the last hour rolled up. It moves in the transaction that writes the hours' rows, so an
    interrupted roll-up starts again at the first hour it did not finish."""

    rolled_until = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"rolled until {self.rolled_until}"


class NodePoolPrice(models.Model):
    """Chargeback prices of one node pool, in settings.CHARGEBACK_CURRENCY; applied to its whole history."""

    node_pool = models.OneToOneField(NodePool, on_delete=models.CASCADE, related_name="price")
    gpu_hour = models.DecimalField(max_digits=12, decimal_places=4, default=0)
    cpu_core_hour = models.DecimalField(max_digits=12, decimal_places=4, default=0)
    memory_gib_hour = models.DecimalField(max_digits=12, decimal_places=4, default=0)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.CharField(max_length=254, blank=True, default="")

    def __str__(self):
        return f"prices of node pool {self.node_pool_id}"


class Report(models.Model):
    """Run:ai's report request (latest's Reports tag): made into a CSV by a worker (usage.tasks.report_produce)."""

    class Status(models.TextChoices):
        PENDING = "Pending"
        PROCESSING = "Processing"
        READY = "Ready"
        FAILED = "Failed"

    class GroupBy(models.TextChoices):
        NODEPOOL = "Nodepool"
        PROJECT = "Project"
        DEPARTMENT = "Department"
        CLUSTER = "Cluster"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=255)
    description = models.TextField(blank=True, default="")
    start = models.DateTimeField()
    end = models.DateTimeField()
    group_by = models.CharField(max_length=12, choices=GroupBy.choices, null=True, blank=True)
    filter_by = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    created_by_name = models.CharField(max_length=254)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.PENDING)
    status_updated_at = models.DateTimeField()
    status_message = models.CharField(max_length=500, blank=True, default="")
    csv = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return self.name
