"""A project's or a department's allocation over time from the usage history, as the org-unit metrics answer it
for long ranges (registered in usage.apps): a point per rolled hour for ranges up to a week inside the hourly
window, a point per day for longer ones (today's point holds the hours rolled so far) — a read bounded by the
organisation's size (units × points), not by the number of workloads. An hour's point is its GPU-hours (the average GPUs held in that hour), a day's its GPU-hours ÷ 24; CPU
and memory likewise, in the units of the samples they stand in for (cores, bytes). Hours and days in which none
of the unit's workloads held anything have no point, as rounds in which none ran have none. The history ends at
the last rolled hour (up to an hour and a roll-up interval behind)."""

from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db.models import F, Sum
from django.utils import timezone

from usage.intervals import GIB, floor_hour
from usage.models import UsageDay, UsageUnitHour

HOURLY_UP_TO = timedelta(days=7)
# sample type → (history column, factor from the column's hours to the sample's unit)
COLUMNS = {"GPU_ALLOCATION": ("gpu_hours", 1.0), "CPU_REQUEST_CORES": ("cpu_core_hours", 1.0),
           "CPU_MEMORY_REQUEST_BYTES": ("memory_gib_hours", float(GIB))}


def org_unit_series(field: str, unit_id, start: datetime, end: datetime, types: set,
                    nodepool: str | None) -> dict[str, list[tuple[datetime, float]]]:
    """{sample type: [(time, value)]} for the unit over [start, end]; one query."""
    wanted = {t: COLUMNS[t] for t in types if t in COLUMNS}
    if not wanted:
        return {}
    hourly_from = floor_hour(timezone.now()) - timedelta(days=settings.USAGE_HOURLY_RETENTION_DAYS)
    if start >= hourly_from and end - start <= HOURLY_UP_TO:
        rows, per_point = UsageUnitHour.objects.filter(hour__gte=floor_hour(start), hour__lte=end), 1.0
        at = F("hour")
    else:
        rows, per_point = UsageDay.objects.filter(day__gte=start.date(), day__lte=end.date()), 24.0
        at = F("day")
    rows = rows.filter(**{field: unit_id})
    if nodepool:
        rows = rows.filter(node_pool=nodepool)
    sums = {column: Sum(column) for column, _ in wanted.values()}
    out: dict[str, list] = {t: [] for t in wanted}
    for row in rows.values(at_=at).annotate(**sums).order_by("at_"):
        when = row["at_"]
        if not isinstance(when, datetime):  # a day: its midnight, UTC
            when = datetime(when.year, when.month, when.day, tzinfo=UTC)
        for sample_type, (column, factor) in wanted.items():
            out[sample_type].append((when, (row[column] or 0.0) * factor / per_point))
    return out
