"""Run:ai's overtimeData of projects and departments from the usage history (registered in usage.apps): over the
last 24 hours, 7 days and 30 days of rolled hours, or the unit's lifetime when it is younger, the average GPUs
allocated (GPU-hours / hours) and their average utilisation (used / measured GPU-hours, in percent; 0 where no
GPU was measured). GPU memory utilisation needs the GPUs' memory size, which is not known: null.

The whole days of a range are read from the daily rows and only its partial days from the hourly unit rows (two
queries), so the read is bounded by the organisation's size and not by its workloads or the range's length."""

from datetime import UTC, datetime, time, timedelta

from django.db.models import Q, Sum

from usage.intervals import HOUR
from usage.models import UsageDay, UsageUnitHour
from usage.rollup import rolled_until

RANGES = {"range24hData": timedelta(hours=24), "range7dData": timedelta(days=7), "range30dData": timedelta(days=30)}


def org_unit_overtime(field: str, created: dict[int, datetime]) -> dict[int, dict]:
    """{unit id: OvertimeData} for the units (`field`: "project_id" or "department_id"); two queries."""
    until = rolled_until()
    if until is None:
        return {}
    ids = {f"{field}__in": list(created)}
    sums = _read(UsageUnitHour, "hour", ids, {key: _hours(until, span) for key, span in RANGES.items()}, field)
    days = _read(UsageDay, "day", ids, {key: _days(until, span) for key, span in RANGES.items()}, field)
    rows = {pk: {name: (sums.get(pk, {}).get(name) or 0.0) + (days.get(pk, {}).get(name) or 0.0)
                 for name in {*sums.get(pk, {}), *days.get(pk, {})} - {field}} for pk in {*sums, *days}}
    out = {}
    for pk, created_at in created.items():
        row = rows.get(pk, {})
        data = {}
        for key, span in RANGES.items():
            hours = max(1.0, min(span, until - created_at) / HOUR) if created_at else span / HOUR
            measured = row.get(f"{key}_measured") or 0.0
            data[key] = {"averageGpuAllocation": round((row.get(f"{key}_gpu") or 0.0) / hours, 4),
                         "averageGpuUtilization": round(100.0 * (row.get(f"{key}_used") or 0.0) / measured, 2)
                         if measured else 0.0,
                         "averageGpuMemoryUtilization": None,
                         "updatedAt": until.isoformat().replace("+00:00", "Z")}
        out[pk] = data
    return out


def _midnight_after(t: datetime) -> datetime:
    day = datetime.combine(t.date(), time.min, tzinfo=UTC)
    return day if day == t else day + timedelta(days=1)


def _split(until: datetime, span: timedelta) -> tuple[datetime, datetime, datetime]:
    """(start, first whole day, end of the last whole day) of the range that ends at `until`."""
    start = until - span
    return start, _midnight_after(start), datetime.combine(until.date(), time.min, tzinfo=UTC)


def _hours(until: datetime, span: timedelta) -> Q:
    start, first_day, last_day = _split(until, span)
    if first_day >= last_day:
        return Q(hour__gte=start, hour__lt=until)
    return Q(hour__gte=start, hour__lt=first_day) | Q(hour__gte=last_day, hour__lt=until)


def _days(until: datetime, span: timedelta) -> Q | None:
    _, first_day, last_day = _split(until, span)
    return Q(day__gte=first_day.date(), day__lt=last_day.date()) if first_day < last_day else None


def _read(model, column: str, ids: dict, ranges: dict[str, Q | None], field: str) -> dict:
    """{unit id: {f"{range}_gpu" | _measured | _used: sum}} over the rows each range selects; one query."""
    ranges = {key: q for key, q in ranges.items() if q is not None}
    if not ranges:
        return {}
    sums, anywhere = {}, Q()
    for key, q in ranges.items():
        sums.update({f"{key}_gpu": Sum("gpu_hours", filter=q), f"{key}_measured": Sum("gpu_measured_hours", filter=q),
                     f"{key}_used": Sum("gpu_used_hours", filter=q)})
        anywhere |= q
    return {row[field]: row for row in model.objects.filter(**ids).filter(anywhere).values(field)
            .annotate(**sums).order_by()}
