"""What the home page reads, per role: for platform admins the clusters (which answer, their GPUs and what is
allocated and waiting per node pool), what waits and why, what failed in the last 24 hours; for everyone else their
own workloads and their projects' GPU quota in use. Counts follow the phases: Starting is what is being created or
is starting its containers, not what waits in a queue (Waiting) nor what cannot start (an image that cannot be
pulled)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal

from django.db.models import Count, Q
from django.utils import timezone

from studio.models import Cluster, Project
from studio.org.numbers import quota_numbers
from workloads.models import Workload
from workloads.pending_words import sentence

STARTING = ("Creating", "Initializing", "Resuming")
RUNNING = ("Running", "Degraded", "Updating")
CANNOT_START = ("ImagePull",)  # a reason that no wait cures: failing, not starting
SHOWN = 8


def _live(user):
    return Workload.objects.visible_to(user).filter(deleted_at__isnull=True)


def workload_counts(user, *, mine: bool = False) -> dict:
    rows = _live(user)
    if mine:
        rows = rows.filter(created_by=user)
    since = timezone.now() - timedelta(hours=24)
    cannot_start = Q(pending_reason__type__in=CANNOT_START)
    return rows.aggregate(
        total=Count("pk"),
        running=Count("pk", filter=Q(actual_phase__in=RUNNING)),
        starting=Count("pk", filter=Q(actual_phase__in=STARTING) & ~cannot_start),
        waiting=Count("pk", filter=Q(actual_phase="Pending") & ~cannot_start),
        failing=Count("pk", filter=(Q(actual_phase__in=("Pending", *STARTING)) & cannot_start)
                      | Q(actual_phase="Failed", phase_updated_at__gte=since)))


def _why(workload) -> str:
    return sentence(workload.waiting_reason, gpus=workload.gpu_request) or workload.phase_message or ""


def waiting(user) -> list:
    """The oldest waiting workloads the user sees, each with why it waits in words."""
    rows = list(_live(user).filter(actual_phase="Pending").select_related("project")
                .order_by("phase_updated_at", "created_at")[:SHOWN])
    for row in rows:
        row.why = _why(row)
    return rows


def failed_lately(user) -> list:
    since = timezone.now() - timedelta(hours=24)
    return list(_live(user).filter(actual_phase="Failed", phase_updated_at__gte=since).select_related("project")
                .order_by("-phase_updated_at")[:SHOWN])


@dataclass
class PoolLine:
    name: str
    capacity: Decimal | None
    allocated: Decimal
    requested: Decimal

    @property
    def waiting(self) -> Decimal:
        return max(Decimal(0), self.requested - self.allocated)

    @property
    def percent(self) -> int | None:
        return round(100 * self.allocated / self.capacity) if self.capacity else None


@dataclass
class ClusterLine:
    cluster: Cluster
    answers: bool
    capacity: Decimal | None
    pools: list[PoolLine] = field(default_factory=list)


def clusters() -> list[ClusterLine]:
    """Every cluster, with its GPUs (as the sync last counted them) and, per node pool, the GPUs allocated and
    requested (the organisation's numbers: studio.org.numbers)."""
    found = list(Cluster.objects.order_by("name"))
    numbers = quota_numbers(clusters=[c.pk for c in found])
    lines = []
    for cluster in found:
        capacity = cluster.gpu_capacity or {}
        by_pool = capacity.get("pools") or {}
        names = sorted(set(numbers.pool_ids_of(cluster.pk)) | set(numbers.clusters.get(str(cluster.pk), {}))
                       | set(by_pool))
        pools = [PoolLine(name, _decimal((by_pool.get(name) or {}).get("total")),
                          numbers.pool(cluster.pk, name).allocated, numbers.pool(cluster.pk, name).requested)
                 for name in names]
        lines.append(ClusterLine(cluster, cluster.status == Cluster.Status.CONNECTED, _decimal(capacity.get("total")),
                                 pools))
    return lines


def _decimal(value) -> Decimal | None:
    return None if value is None else Decimal(str(value))


def my_workloads(user) -> list:
    """The user's own workloads not finished, newest first, each with why it waits where it does."""
    rows = list(_live(user).filter(created_by=user).exclude(actual_phase__in=Workload.FINISHED)
                .select_related("project").order_by("-created_at")[:SHOWN * 2])
    for row in rows:
        row.why = _why(row)
    return rows


@dataclass
class ProjectLine:
    project: Project
    allocated: Decimal
    requested: Decimal
    deserved: Decimal | None
    limit: Decimal | None

    @property
    def percent(self) -> int | None:
        return round(100 * self.allocated / self.deserved) if self.deserved else None


def my_projects(user) -> list[ProjectLine]:
    projects = list(Project.objects.visible_to(user).order_by("name")[:SHOWN * 2])
    numbers = quota_numbers(projects=projects)
    lines = []
    for project in projects:
        total = numbers.project(project.pk).total
        lines.append(ProjectLine(project, total.allocated, total.requested, total.deserved, total.limit))
    return lines
