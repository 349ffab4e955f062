"""Reads of the usage history: the finest rows of a time range (a day, its organisation unit, pool and user), from the
daily rows for whole days and from the hourly rows for the hours of a partial day at either end."""

from datetime import UTC, datetime, time, timedelta

from django.conf import settings
from django.db.models import F, Max, Q, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from usage.intervals import HOUR, floor_hour
from usage.models import AMOUNTS, UsageDay, UsageUnitHour

KEYS = ("cluster_id", "node_pool", "project_id", "department_id", "user_name")


def _midnight(t: datetime, *, up: bool) -> datetime:
    day = datetime.combine(t.astimezone(UTC).date(), time.min, tzinfo=UTC)
    return day + timedelta(days=1) if up and day < t else day


def _unit_filter(filters: dict) -> Q:
    """{"projectName": {...}, "departmentName": {...}, "clusterId": {...}}: any of a field's values, every field."""
    q = Q()
    for field, path in (("projectName", "project_name"), ("departmentName", "department_name"),
                        ("clusterId", "cluster_id")):
        if filters.get(field):
            q &= Q(**{f"{path}__in": sorted(filters[field])})
    return q


def _any(conditions: list[Q]) -> Q:
    q = Q()
    for condition in conditions:
        q |= condition
    return q


def _rows(queryset, day_expression) -> list[dict]:
    sums = {"project_name_": Max("project_name"), "department_name_": Max("department_name"),
            **{f"{a}_": Sum(a) for a in AMOUNTS}}
    out = []
    for g in queryset.values(*KEYS, day_=day_expression).annotate(**sums).order_by():
        row = {k: g[k] for k in KEYS}
        row.update(day=g["day_"], project_name=g["project_name_"], department_name=g["department_name_"],
                   **{a: g[f"{a}_"] or 0.0 for a in AMOUNTS})
        out.append(row)
    return out


def usage_rows(*, start: datetime, end: datetime, filters: dict | None = None,
               now: datetime | None = None) -> list[dict]:
    """Amounts per day and (cluster, pool, project, department, user) over [start, end), start and end taken to
    whole hours; two queries at most. The hours of a partial day older than the hourly window are gone: its whole
    day is read instead."""
    now = now or timezone.now()
    where = _unit_filter(filters or {})
    start, end = floor_hour(start), floor_hour(end - timedelta(microseconds=1)) + HOUR
    hourly_from = floor_hour(now) - timedelta(days=settings.USAGE_HOURLY_RETENTION_DAYS)
    first_day, last_day = _midnight(start, up=True), _midnight(end, up=False)
    if first_day < last_day:
        days, edges = [Q(day__gte=first_day.date(), day__lt=last_day.date())], [(start, first_day), (last_day, end)]
    else:
        days, edges = [], [(start, end)]
    hours = []
    for begin, finish in edges:
        if begin >= finish:
            continue
        if begin < hourly_from:
            days.append(Q(day__gte=begin.date(), day__lt=_midnight(finish, up=True).date()))
        else:
            hours.append(Q(hour__gte=begin, hour__lt=finish))
    out = []
    if days:
        out += _rows(UsageDay.objects.filter(where).filter(_any(days)), F("day"))
    if hours:
        out += _rows(UsageUnitHour.objects.filter(where).filter(_any(hours)), TruncDate("hour", tzinfo=UTC))
    return out
