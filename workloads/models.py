"""Workloads of every kind, their events, pods and metric samples.

The database holds intent (`desired_phase`); the cluster holds what is happening (`actual_phase`, pods,
metrics), which the sync copies here."""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from studio.iam.permissions import visible_project_ids
from studio.models import Cluster, Department, Project, is_platform_admin
from workloads.runai_fields import ALLOCATED_PHASES, WAITING_PHASES

# Workloads that hold GPUs against their project's quota: live, meant to run, not finished, with GPUs. One
# predicate for the quota sum and for its partial index, so that the sum reads only these rows (an index-only
# scan on PostgreSQL), however many workloads the project ran before.
HOLDING_GPUS = Q(deleted_at__isnull=True, desired_phase="Running", gpu_request__gt=0) & ~Q(
    actual_phase__in=["Completed", "Failed"])
LIVE_UNFINISHED = Q(deleted_at__isnull=True) & ~Q(actual_phase__in=["Completed", "Failed"])
# The organisation's GPU numbers (studio.org.numbers, registered in workloads.apps), defined once: allocated is what
# holds GPUs on nodes now (a live workload in an allocated phase); requested is what runs plus what waits: meant to
# run and not finished (HOLDING_GPUS, what the quota counts). A workload being stopped is allocated until its pods
# are gone, and no longer requested.
ALLOCATED_GPUS = Q(deleted_at__isnull=True, gpu_request__gt=0, actual_phase__in=ALLOCATED_PHASES)
REQUESTED_GPUS = HOLDING_GPUS
# The same for CPU and memory too: a workload without GPUs holds its cores and memory all the same.
HOLDS_ANY = Q(gpu_request__gt=0) | Q(cpu_request__gt=0) | Q(memory_request__gt=0)
ALLOCATED = Q(deleted_at__isnull=True, actual_phase__in=ALLOCATED_PHASES) & HOLDS_ANY
REQUESTED = Q(deleted_at__isnull=True, desired_phase="Running") & ~Q(
    actual_phase__in=["Completed", "Failed"]) & HOLDS_ANY


class WorkloadQuerySet(models.QuerySet):
    def visible_to(self, user):
        if is_platform_admin(user):
            return self
        if not getattr(user, "is_authenticated", False):
            return self.none()
        return self.filter(project__in=Project.objects.visible_to(user))

    def listed_for(self, user):
        """`visible_to` for lists: the visible projects' ids come first (from the caller's access rules, read once
        a request) and the list filters `project_id IN (...)`. With the subquery PostgreSQL cannot know how few rows qualify and walks the whole
        table newest first; with the ids it reads the (project, created_at) index of those projects alone."""
        if is_platform_admin(user) or not getattr(user, "is_authenticated", False):
            return self.visible_to(user)
        return self.filter(project_id__in=visible_project_ids(user))

    def live(self):
        return self.filter(deleted_at__isnull=True)


class Workload(models.Model):
    class Kind(models.TextChoices):
        TRAINING = "training"
        INFERENCE = "inference"
        WORKSPACE = "workspace"
        STREAM = "stream"
        DISTRIBUTED = "distributed"  # a Kubeflow Training Operator job: a master and workers

    class Desired(models.TextChoices):
        RUNNING = "Running"
        STOPPED = "Stopped"
        DELETED = "Deleted"

    class Phase(models.TextChoices):
        CREATING = "Creating"
        INITIALIZING = "Initializing"
        RESUMING = "Resuming"
        PENDING = "Pending"
        DELETING = "Deleting"
        RUNNING = "Running"
        UPDATING = "Updating"
        STOPPED = "Stopped"
        STOPPING = "Stopping"
        DEGRADED = "Degraded"
        FAILED = "Failed"
        COMPLETED = "Completed"
        TERMINATING = "Terminating"
        UNKNOWN = "Unknown"
        DELETED = "Deleted"

    class Source(models.TextChoices):
        API = "api"
        CATALOG = "catalog"
        STREAM = "stream"

    FINISHED = (Phase.COMPLETED, Phase.FAILED)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=12, choices=Kind.choices)
    name = models.CharField(max_length=63)
    requested_name = models.CharField(max_length=63)
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="workloads")
    department = models.ForeignKey(Department, on_delete=models.PROTECT, related_name="+")
    cluster = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="workloads")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    created_by_name = models.CharField(max_length=254)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)

    desired_phase = models.CharField(max_length=8, choices=Desired.choices, default=Desired.RUNNING)
    actual_phase = models.CharField(max_length=12, choices=Phase.choices, default=Phase.CREATING, db_index=True)
    phase_message = models.TextField(blank=True, default="")
    phase_updated_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    running_pods = models.PositiveIntegerField(default=0)
    requested_pods = models.PositiveIntegerField(default=1)

    request = models.JSONField(default=dict, help_text="The create body as submitted (secrets masked).")
    spec = models.JSONField(default=dict, help_text="The validated, normalised spec (defaults filled).")
    gpu_request = models.DecimalField(max_digits=10, decimal_places=3, default=0)
    # CPU (millicores) and memory (bytes) over every pod it may run at once, as gpu_request counts GPUs
    # (workloads.specs.workload_cpu_use): the organisation's CPU and memory numbers sum them (studio.org.numbers).
    cpu_request = models.PositiveBigIntegerField(default=0)
    memory_request = models.PositiveBigIntegerField(default=0)
    # The node pool the workload is placed in at submission (one of the pools it may use, in their order): its
    # pods run on that pool's nodes, in that pool's KAI queue, and count against the project's quota there.
    # "" for a row placed before pools were (the cluster's default pool).
    node_pool = models.CharField(max_length=63, blank=True, default="")
    source = models.CharField(max_length=8, choices=Source.choices, default=Source.API)

    # Provenance of a catalog or stream launch: what it was launched from, frozen at launch.
    profile_id = models.BigIntegerField(null=True, blank=True)
    profile_name = models.CharField(max_length=63, blank=True, default="")
    profile_revision = models.PositiveIntegerField(null=True, blank=True)
    launch_inputs = models.JSONField(default=dict, blank=True)
    outputs = models.JSONField(default=list, blank=True)
    # A workload made from a template of assets (Run:ai's templateId): the template and the assets that filled its
    # spec, as they were at submission: {"templateId", "environment", "compute", "datasources": [ids]}.
    template_id = models.UUIDField(null=True, blank=True)
    made_from = models.JSONField(default=dict, blank=True)
    # Where the running workload can be reached, as the sync last saw it (workloads.cluster.endpoints.endpoints_of):
    # {"url": "...", "serviceAddress": "host", "ports": [{"name", "port", "nodePort"}], "serviceType": "..."}
    endpoints = models.JSONField(default=dict, blank=True)

    # Why a waiting workload waits and its place in its node pool's queue, as the sync last derived them
    # (workloads.cluster.pending); null once it no longer waits.
    pending_reason = models.JSONField(null=True, blank=True)
    queue_position = models.PositiveIntegerField(null=True, blank=True)

    submitted_at = models.DateTimeField(null=True, blank=True)  # first seen accepted by the cluster
    deleted_at = models.DateTimeField(null=True, blank=True, db_index=True)

    objects = WorkloadQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "name"], condition=Q(deleted_at__isnull=True), name="one_live_workload_per_name"
            )
        ]
        indexes = [
            models.Index(fields=["cluster", "deleted_at"]),
            # The list's default order within the visible projects (name order: one_live_workload_per_name).
            models.Index(fields=["project", "-created_at", "-id"], name="workload_project_newest"),
            models.Index(fields=["project", "node_pool", "gpu_request"], condition=HOLDING_GPUS,
                         name="workload_gpus_held_by_pool"),
            # A department's numbers (studio.org.numbers) read only its live, unfinished workloads: with 100,000
            # finished ones in the department the read took 113 ms by a scan, 0.07 ms by this index
            # (bench/usage_history.py, "department with its overtimeData").
            models.Index(fields=["department"], condition=LIVE_UNFINISHED, name="workload_unfinished_by_dept"),
        ]

    def __str__(self):
        return f"{self.kind} {self.name}"

    @property
    def is_finished(self) -> bool:
        return self.actual_phase in self.FINISHED

    @property
    def waiting_reason(self) -> dict | None:
        """`pending_reason` while the workload waits (a row whose change the sync dropped may keep a stale one)."""
        return (self.pending_reason or None) if self.actual_phase in WAITING_PHASES else None

    @property
    def waiting_position(self) -> int | None:
        return self.queue_position if self.actual_phase == self.Phase.PENDING else None


class WorkloadEvent(models.Model):
    class Type(models.TextChoices):
        NORMAL = "Normal"
        WARNING = "Warning"

    workload = models.ForeignKey(Workload, on_delete=models.CASCADE, related_name="events")
    at = models.DateTimeField(db_index=True)
    type = models.CharField(max_length=8, choices=Type.choices, default=Type.NORMAL)
    reason = models.CharField(max_length=64)
    message = models.TextField(blank=True, default="")
    phase = models.CharField(max_length=12, blank=True, default="")
    source = models.CharField(max_length=16, default="studio")  # studio | cluster
    # A cluster event's uid + count, so a sync round that sees it again does not record it twice.
    dedup_key = models.CharField(max_length=128, blank=True, default="")

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["workload", "-at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["workload", "dedup_key"], condition=~Q(dedup_key=""), name="one_event_per_cluster_event"
            )
        ]

    def __str__(self):
        return f"{self.reason}: {self.message}"


class Pod(models.Model):
    workload = models.ForeignKey(Workload, on_delete=models.CASCADE, related_name="pods")
    uid = models.CharField(max_length=64)
    name = models.CharField(max_length=253)
    phase = models.CharField(max_length=16)
    # A distributed training's pod role (the training operator's `replica-type` label: master, worker,
    # launcher, chief); empty for the other kinds.
    role = models.CharField(max_length=16, blank=True, default="")
    node_name = models.CharField(max_length=253, blank=True, default="")
    message = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "name"]
        constraints = [models.UniqueConstraint(fields=["workload", "uid"], name="one_row_per_pod")]

    def __str__(self):
        return self.name


class PodLogCapture(models.Model):
    """The last lines of a pod's log, read from the cluster before the pod went away (a suspend, a delete) or when
    the workload finished: the log panel shows them once the pod is gone. One row per pod name, the latest."""

    workload = models.ForeignKey(Workload, on_delete=models.CASCADE, related_name="log_captures")
    pod_name = models.CharField(max_length=253)
    text = models.TextField(blank=True, default="")  # each line after its RFC 3339 time, as the kubelet writes it
    captured_at = models.DateTimeField()
    reason = models.CharField(max_length=16)  # Suspended, Deleted, Completed, Failed

    class Meta:
        ordering = ["pod_name"]
        constraints = [models.UniqueConstraint(fields=["workload", "pod_name"], name="one_log_capture_per_pod")]

    def __str__(self):
        return f"{self.pod_name} at {self.captured_at:%Y-%m-%d %H:%M}"


class MetricSample(models.Model):
    workload = models.ForeignKey(Workload, on_delete=models.CASCADE, related_name="samples")
    pod_name = models.CharField(max_length=253, blank=True, default="")
    type = models.CharField(max_length=32)
    labels = models.JSONField(default=dict, blank=True)
    value = models.FloatField()
    timestamp = models.DateTimeField()

    class Meta:
        indexes = [
            models.Index(fields=["workload", "type", "timestamp"]),
            models.Index(fields=["timestamp"]),
        ]

    def __str__(self):
        return f"{self.type}={self.value} at {self.timestamp:%Y-%m-%d %H:%M:%S}"


class ClusterReach(models.Model):
    """Whether a cluster answers, as its writes found it (workloads/cluster/reach.py): one row per cluster that
    ever failed to answer, flipped by compare-and-set so that concurrent workers agree on who saw the change."""

    cluster = models.OneToOneField(Cluster, on_delete=models.CASCADE, primary_key=True, related_name="+")
    reachable = models.BooleanField(default=True)
    changed_at = models.DateTimeField(null=True, blank=True)
    message = models.TextField(blank=True, default="")

    def __str__(self):
        return f"{self.cluster_id}: {'reachable' if self.reachable else 'unreachable'}"


class WaitingWrite(models.Model):
    """A cluster write (a push, roll, suspension or removal task) parked while its cluster does not answer;
    sent again, at once, when it answers (`released_at`), and gone once the task has run."""

    workload = models.ForeignKey(Workload, on_delete=models.CASCADE, related_name="+")
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="+")
    task = models.CharField(max_length=100)
    parked_at = models.DateTimeField()
    released_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workload", "task"], name="one_waiting_write_per_task")]
        indexes = [models.Index(fields=["cluster", "released_at", "parked_at"], name="waiting_writes_of_cluster")]

    def __str__(self):
        return f"{self.task} {self.workload_id}"


class WatchCheckpoint(models.Model):
    """What a cluster watcher's last full pass derived (workloads/cluster/checkpoint.py): for each workload, a
    fingerprint of the objects it was derived from and the phase it got. A watcher that starts again (a deploy, a
    standby taking over) leaves as they are the workloads that still match, instead of deriving them all again."""

    cluster = models.OneToOneField(Cluster, on_delete=models.CASCADE, primary_key=True, related_name="+")
    passed_at = models.DateTimeField()  # when that full pass began
    code = models.CharField(max_length=32)  # the fingerprint of the code that derived them
    fingerprints = models.BinaryField()  # (workload id, fingerprint) records, by workload id

    def __str__(self):
        return f"{self.cluster_id} at {self.passed_at:%Y-%m-%d %H:%M:%S}"
