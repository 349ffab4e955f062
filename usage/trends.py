"""Reads for the portal's trends: GPUs allocated, used and idle over a recent range, as average GPUs per step.

24 h and 7 d read the hourly rows (one point an hour), 30 d the daily rows (one point a day). The hourly roll-up
is too coarse for the last hour and lags it, so 1 h is computed from what the roll-up reads (phase changes and
utilisation samples), in five-minute steps. A point is GPU-hours of the step ÷ the step's hours: the GPUs held on
average. Used and idle are known only where utilisation was sampled (idle = measured − used); a range without a
measured GPU-hour has no used or idle series at all, rather than a flat zero."""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.db.models import Avg, Q, Sum
from django.utils import timezone

from usage.intervals import HOUR, floor_hour, held_intervals, hours_within
from usage.models import UsageDay, UsageUnitHour
from workloads.models import MetricSample, Workload, WorkloadEvent
from workloads.runai_fields import ALLOCATED_PHASES

RANGES = {"1h": timedelta(hours=1), "24h": timedelta(hours=24), "7d": timedelta(days=7), "30d": timedelta(days=30)}
RANGE_LABELS = {"1h": "1 h", "24h": "24 h", "7d": "7 d", "30d": "30 d"}
DEFAULT_RANGE = "24h"
STEP_1H = timedelta(minutes=5)


@dataclass(frozen=True)
class Scope:
    """Which usage counts: rows of these projects (None: any), one department, these clusters (None: any), one
    pool ("": any)."""

    project_ids: frozenset | None = None
    department_id: int | None = None
    cluster_ids: frozenset | None = None
    node_pool: str = ""
    pool_is_default: bool = False  # a workload that names no pool runs in the cluster's default pool

    def q(self, *, workloads: bool = False) -> Q:
        q = Q()
        if self.project_ids is not None:
            q &= Q(project_id__in=sorted(self.project_ids))
        if self.department_id is not None:
            q &= Q(department_id=self.department_id)
        if self.cluster_ids is not None:
            q &= Q(cluster_id__in=sorted(self.cluster_ids, key=str))
        if self.node_pool:
            q &= Q(node_pool=self.node_pool) | Q(node_pool="") if workloads and self.pool_is_default \
                else Q(node_pool=self.node_pool)
        return q


@dataclass
class Trend:
    range: str
    step_hours: float
    labels: list[str]
    allocated: list[float]
    used: list[float] | None  # None: nothing measured in the range
    idle: list[float] | None

    @property
    def empty(self) -> bool:
        return not any(self.allocated)

    def as_json(self) -> dict:
        series = [{"key": "allocated", "label": "GPUs allocated", "values": self.allocated}]
        if self.used is not None:
            series += [{"key": "used", "label": "GPUs used", "values": self.used},
                       {"key": "idle", "label": "GPUs idle (allocated, not busy)", "values": self.idle}]
        return {"range": self.range, "labels": self.labels, "series": series}

    def totals(self) -> dict:
        """GPU-hours over the range."""
        allocated = sum(self.allocated) * self.step_hours
        out = {"allocated": allocated, "used": None, "idle": None}
        if self.used is not None:
            out["used"], out["idle"] = sum(self.used) * self.step_hours, sum(self.idle) * self.step_hours
        return out


def _round(value: float) -> float:
    return round(value, 3)


def _series(points: list, sums: dict, step_hours: float) -> tuple[list, list | None, list | None]:
    allocated = [_round(sums.get(p, {}).get("gpu", 0.0) / step_hours) for p in points]
    measured = any(s.get("measured") for s in sums.values())
    if not measured:
        return allocated, None, None
    used = [_round(sums.get(p, {}).get("used", 0.0) / step_hours) for p in points]
    idle = [_round(max(0.0, (sums.get(p, {}).get("measured", 0.0) - sums.get(p, {}).get("used", 0.0)) / step_hours))
            for p in points]
    return allocated, used, idle


def _sums(queryset, key: str) -> dict:
    return {row[key]: {"gpu": row["gpu"] or 0.0, "measured": row["measured"] or 0.0, "used": row["used"] or 0.0}
            for row in queryset.values(key).annotate(gpu=Sum("gpu_hours"), measured=Sum("gpu_measured_hours"),
                                                     used=Sum("gpu_used_hours")).order_by()}


def gpu_trend(*, scope: Scope, range_key: str, now: datetime | None = None) -> Trend:
    """One query for 24 h, 7 d and 30 d; four for 1 h, whatever the number of workloads."""
    now = now or timezone.now()
    if range_key == "1h":
        return _recent(scope, now)
    if range_key == "30d":
        last = now.astimezone(UTC).date()
        days = [last - timedelta(days=n) for n in range(29, -1, -1)]
        sums = _sums(UsageDay.objects.filter(scope.q(), day__gte=days[0], day__lte=last), "day")
        allocated, used, idle = _series(days, sums, 24.0)
        return Trend("30d", 24.0, [d.isoformat() for d in days], allocated, used, idle)
    span = RANGES[range_key]
    end = floor_hour(now)
    hours = [end - HOUR * n for n in range(int(span / HOUR), 0, -1)]
    sums = _sums(UsageUnitHour.objects.filter(scope.q(), hour__gte=hours[0], hour__lt=end), "hour")
    sums = {k.astimezone(UTC): v for k, v in sums.items()}
    allocated, used, idle = _series(hours, sums, 1.0)
    return Trend(range_key, 1.0, [h.isoformat().replace("+00:00", "Z") for h in hours], allocated, used, idle)


def _recent(scope: Scope, now: datetime) -> Trend:
    """The last hour in five-minute steps, from the workloads' phase changes and GPU utilisation samples."""
    end = now.replace(second=0, microsecond=0)
    end -= timedelta(minutes=end.minute % 5)
    steps = [end - STEP_1H * n for n in range(12, 0, -1)]
    start = steps[0]
    candidates = (Workload.objects.filter(scope.q(workloads=True), created_at__lt=end, gpu_request__gt=0)
                  .filter(Q(deleted_at__isnull=True) | Q(deleted_at__gt=start))
                  .filter(Q(actual_phase__in=ALLOCATED_PHASES) | Q(phase_updated_at__gte=start)
                          | Q(completed_at__gte=start) | Q(deleted_at__gte=start)))
    workloads = list(candidates.values("id", "gpu_request", "started_at", "completed_at", "deleted_at"))
    step_hours = STEP_1H / HOUR
    if not workloads:
        return Trend("1h", step_hours, [s.isoformat().replace("+00:00", "Z") for s in steps], [0.0] * 12, None, None)
    phases: dict = {}
    for wid, at, phase in (WorkloadEvent.objects.filter(workload__in=candidates.values("pk"), at__lt=end)
                           .exclude(phase="").values_list("workload_id", "at", "phase")):
        phases.setdefault(wid, []).append((at, phase))
    means = {f"s{i}": Avg("value", filter=Q(timestamp__gte=s, timestamp__lt=s + STEP_1H)) for i, s in enumerate(steps)}
    utilisation = {row["workload_id"]: row for row in MetricSample.objects.filter(
        workload__in=candidates.values("pk"), pod_name="", type="GPU_UTILIZATION", timestamp__gte=start,
        timestamp__lt=end).values("workload_id").annotate(**means).order_by()}
    sums: dict = {}
    for w in workloads:
        spans = held_intervals(phases=phases.get(w["id"], ()), allocated=ALLOCATED_PHASES, started_at=w["started_at"],
                               completed_at=w["completed_at"], deleted_at=w["deleted_at"], now=now)
        for i, s in enumerate(steps):
            gpu_hours = float(w["gpu_request"]) * hours_within(spans, s, s + STEP_1H)
            if gpu_hours <= 0:
                continue
            total = sums.setdefault(s, {"gpu": 0.0, "measured": 0.0, "used": 0.0})
            total["gpu"] += gpu_hours
            sample = utilisation.get(w["id"], {}).get(f"s{i}")
            if sample is not None:
                total["measured"] += gpu_hours
                total["used"] += gpu_hours * min(100.0, max(0.0, sample)) / 100.0
    allocated, used, idle = _series(steps, sums, step_hours)
    return Trend("1h", step_hours, [s.isoformat().replace("+00:00", "Z") for s in steps], allocated, used, idle)
