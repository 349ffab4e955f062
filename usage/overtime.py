"""Run:ai's overtimeData of projects and departments from the hourly history (registered in usage.apps): over the
last 24 hours, 7 days and 30 days of rolled hours, or the unit's lifetime when it is younger, the average GPUs
allocated (GPU-hours / hours) and their average utilisation (used / measured GPU-hours, in percent; 0 where no
GPU was measured). GPU memory utilisation needs the GPUs' memory size, which is not known: null."""

from datetime import datetime, timedelta

from django.db.models import Q, Sum

from usage.intervals import HOUR
from usage.models import UsageHour
from usage.rollup import rolled_until

RANGES = {"range24hData": timedelta(hours=24), "range7dData": timedelta(days=7), "range30dData": timedelta(days=30)}


def org_unit_overtime(field: str, created: dict[int, datetime]) -> dict[int, dict]:
    """{unit id: OvertimeData} for the units (`field`: "project_id" or "department_id"); one query."""
    until = rolled_until()
    if until is None:
        return {}
    sums = {}
    for key, span in RANGES.items():
        recent = Q(hour__gte=until - span)
        sums.update({f"{key}_gpu": Sum("gpu_hours", filter=recent),
                     f"{key}_measured": Sum("gpu_measured_hours", filter=recent),
                     f"{key}_used": Sum("gpu_used_hours", filter=recent)})
    rows = {row[field]: row for row in UsageHour.objects.filter(
        **{f"{field}__in": list(created)}, hour__gte=until - max(RANGES.values()), hour__lt=until)
        .values(field).annotate(**sums).order_by()}
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
