"""The roll-up: workloads' phase changes and telemetry samples → UsageHour rows (and their sums per unit and user,
UsageUnitHour) → UsageDay rows.

An hour is rolled from scratch (its rows deleted and written again in one transaction), so rolling it twice
gives the same rows. `usage_rollup` rolls every closed hour since the last one it finished, plus the last
REROLL_HOURS again (a phase change the sync writes late still lands in its hour), then the days those hours
touch, from their hours. A run is one transaction that locks the state row and moves it with the rows it
writes: two workers never roll at once, and a run that dies leaves nothing half written nor skipped (the next
one starts where the last finished run stopped). A run rolls at most USAGE_ROLLUP_MAX_HOURS hours: a first run
on an installation with history, or one after a long outage, catches up over a few runs."""

from collections import defaultdict
from datetime import UTC, date, datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Avg, Max, Q, Sum
from django.db.models.fields.json import KeyTextTransform, KeyTransform
from django.utils import timezone

from studio.clusters.quantities import parse_quantity
from studio.models import NodePool
from usage.intervals import HOUR, floor_hour, held_intervals, hour_amounts, hours_within
from usage.models import AMOUNTS, RollupState, UsageDay, UsageHour, UsageUnitHour
from workloads.models import MetricSample, Workload, WorkloadEvent
from workloads.runai_fields import ALLOCATED_PHASES, DEFAULT_NODE_POOL

REROLL_HOURS = 2
USAGE_TYPES = ("GPU_UTILIZATION", "CPU_USAGE_CORES", "CPU_MEMORY_USAGE_BYTES")
WORKLOAD_FIELDS = ("id", "name", "project_id", "project__name", "department_id", "department__name", "cluster_id",
                   "node_pool", "created_by_name", "gpu_request", "requested_pods", "started_at", "completed_at",
                   "deleted_at", "cpu", "memory")


def _amount(value) -> float:
    try:
        return float(parse_quantity(str(value))) if value not in (None, "") else 0.0
    except (ValueError, TypeError, ArithmeticError):
        return 0.0


def _candidates(start: datetime, end: datetime):
    """Workloads that may have held resources in [start, end): made before its end, not deleted before its start,
    and either in an allocated phase now or changed since its start (one that left an allocated phase before
    `start` held nothing in it)."""
    return (Workload.objects.filter(created_at__lt=end)
            .filter(Q(deleted_at__isnull=True) | Q(deleted_at__gt=start))
            .filter(Q(actual_phase__in=ALLOCATED_PHASES) | Q(phase_updated_at__gte=start)
                    | Q(completed_at__gte=start) | Q(deleted_at__gte=start)))


def hour_rows(hour: datetime, *, now: datetime) -> list[UsageHour]:
    """The rows of one hour, computed (not written): four queries whatever the number of workloads."""
    end = hour + HOUR
    candidates = _candidates(hour, end)
    compute = KeyTransform("compute", "spec")
    workloads = list(candidates.annotate(cpu=KeyTextTransform("cpuCoreRequest", compute),
                                         memory=KeyTextTransform("cpuMemoryRequest", compute))
                     .values(*WORKLOAD_FIELDS))
    if not workloads:
        return []
    phases = defaultdict(list)
    for wid, at, phase in (WorkloadEvent.objects.filter(workload__in=candidates.values("pk"), at__lt=end)
                           .exclude(phase="").values_list("workload_id", "at", "phase")):
        phases[wid].append((at, phase))
    usage = defaultdict(dict)
    for row in (MetricSample.objects.filter(workload__in=candidates.values("pk"), pod_name="", type__in=USAGE_TYPES,
                                            timestamp__gte=hour, timestamp__lt=end)
                .values("workload_id", "type").annotate(mean=Avg("value")).order_by()):
        usage[row["workload_id"]][row["type"]] = row["mean"]
    defaults = dict(NodePool.objects.filter(is_default=True).values_list("cluster_id", "name"))
    rows = []
    for w in workloads:
        spans = held_intervals(phases=phases.get(w["id"], ()), allocated=ALLOCATED_PHASES, started_at=w["started_at"],
                               completed_at=w["completed_at"], deleted_at=w["deleted_at"], now=now)
        held = hours_within(spans, hour, end)
        if held <= 0:
            continue
        pods = w["requested_pods"] or 1
        sampled = usage.get(w["id"], {})
        amounts = hour_amounts(held_hours=held, gpus=float(w["gpu_request"]), cpu_cores=_amount(w["cpu"]) * pods,
                               memory_bytes=_amount(w["memory"]) * pods,
                               gpu_utilization=sampled.get("GPU_UTILIZATION"),
                               cpu_usage_cores=sampled.get("CPU_USAGE_CORES"),
                               memory_usage_bytes=sampled.get("CPU_MEMORY_USAGE_BYTES"))
        rows.append(UsageHour(
            hour=hour, workload_id=w["id"], workload_name=w["name"], cluster_id=w["cluster_id"],
            node_pool=w["node_pool"] or defaults.get(w["cluster_id"], DEFAULT_NODE_POOL),
            project_id=w["project_id"], project_name=w["project__name"], department_id=w["department_id"],
            department_name=w["department__name"], user_name=w["created_by_name"], **amounts))
    return rows


UNIT_KEYS = ("cluster_id", "node_pool", "project_id", "department_id", "user_name")


def unit_rows(hour: datetime, rows: list[UsageHour]) -> list[UsageUnitHour]:
    """The hour's workload rows summed per cluster, pool, project (its department) and user."""
    units: dict[tuple, UsageUnitHour] = {}
    for row in rows:
        key = tuple(getattr(row, k) for k in UNIT_KEYS)
        unit = units.get(key)
        if unit is None:
            unit = units[key] = UsageUnitHour(hour=hour, project_name=row.project_name,
                                              department_name=row.department_name,
                                              **dict(zip(UNIT_KEYS, key, strict=True)))
        for amount in AMOUNTS:
            setattr(unit, amount, getattr(unit, amount) + getattr(row, amount))
    return list(units.values())


def usage_hour_roll(*, hour: datetime, now: datetime | None = None) -> int:
    """Write one hour's rows (and their unit sums) in place of the ones it had; the number of workload rows."""
    rows = hour_rows(hour, now=now or timezone.now())
    with transaction.atomic():
        UsageHour.objects.filter(hour=hour).delete()
        UsageHour.objects.bulk_create(rows, batch_size=1000)
        UsageUnitHour.objects.filter(hour=hour).delete()
        UsageUnitHour.objects.bulk_create(unit_rows(hour, rows), batch_size=1000)
    return len(rows)


def usage_day_roll(*, day: date) -> int:
    """A day's rows from its hours' unit sums, in place of the ones it had; the number written."""
    start = datetime.combine(day, datetime.min.time(), tzinfo=UTC)
    keys = UNIT_KEYS
    grouped = (UsageUnitHour.objects.filter(hour__gte=start, hour__lt=start + timedelta(days=1)).values(*keys)
               .annotate(project=Max("project_name"), department=Max("department_name"),
                         **{f"sum_{a}": Sum(a) for a in AMOUNTS}).order_by())
    rows = [UsageDay(day=day, project_name=g["project"], department_name=g["department"],
                     **{k: g[k] for k in keys}, **{a: g[f"sum_{a}"] or 0.0 for a in AMOUNTS}) for g in grouped]
    with transaction.atomic():
        UsageDay.objects.filter(day=day).delete()
        UsageDay.objects.bulk_create(rows, batch_size=1000)
    return len(rows)


def usage_rollup(*, now: datetime | None = None, max_hours: int | None = None) -> int:
    """Roll the closed hours not rolled yet (at most `max_hours`, the oldest first) and the last REROLL_HOURS
    again, then their days, and drop hourly rows past their window; the number of hours rolled."""
    now = now or timezone.now()
    closed = floor_hour(now)  # the end of the last closed hour
    window = timedelta(days=settings.USAGE_HOURLY_RETENTION_DAYS)
    limit = max_hours if max_hours is not None else settings.USAGE_ROLLUP_MAX_HOURS
    with transaction.atomic():
        state, _ = RollupState.objects.select_for_update().get_or_create(pk=1)
        first = min(state.rolled_until or _first_hour(closed), closed - REROLL_HOURS * HOUR)
        first = max(first, closed - window)
        hours = []
        hour = first
        while hour < closed and len(hours) < limit:
            hours.append(hour)
            hour += HOUR
        for hour in hours:
            usage_hour_roll(hour=hour, now=now)
        if hours and (state.rolled_until is None or hours[-1] + HOUR > state.rolled_until):
            state.rolled_until = hours[-1] + HOUR
            state.save(update_fields=["rolled_until"])
        for day in sorted({h.date() for h in hours}):
            usage_day_roll(day=day)
        UsageHour.objects.filter(hour__lt=closed - window).delete()
        UsageUnitHour.objects.filter(hour__lt=closed - window).delete()
        if settings.USAGE_DAILY_RETENTION_DAYS:
            UsageDay.objects.filter(day__lt=(now - timedelta(days=settings.USAGE_DAILY_RETENTION_DAYS)).date()).delete()
    return len(hours)


def _first_hour(closed: datetime) -> datetime:
    """Where a first run starts: the hour of the oldest workload (nothing was held before it)."""
    oldest = Workload.objects.order_by("created_at").values_list("created_at", flat=True).first()
    return floor_hour(oldest) if oldest else closed


def rolled_until() -> datetime | None:
    return RollupState.objects.filter(pk=1).values_list("rolled_until", flat=True).first()
