"""Pure: when a workload held its resources, and how much of that fell in a time window."""

from collections.abc import Iterable
from datetime import datetime, timedelta

HOUR = timedelta(hours=1)
GIB = 2**30


def floor_hour(t: datetime) -> datetime:
    return t.replace(minute=0, second=0, microsecond=0)


def held_intervals(*, phases: Iterable[tuple[datetime, str]], allocated: Iterable[str], started_at: datetime | None,
                   completed_at: datetime | None, deleted_at: datetime | None,
                   now: datetime) -> list[tuple[datetime, datetime]]:
    """[(from, to)] in which the workload was in an allocated phase, from its phase changes (a suspend and a resume
    make two intervals). A workload none of whose recorded changes reached an allocated phase (recorded before the
    sync wrote them, or made by hand) held its resources from `started_at` to when it finished or was deleted.
    Nothing is held past the end of its life."""
    ends = [t for t in (completed_at, deleted_at, now) if t is not None]
    last = min(ends)
    allocated = frozenset(allocated)
    spans, opened = [], None
    changes = sorted(phases)
    if not any(phase in allocated for _, phase in changes):
        changes = []
    for at, phase in changes:
        if phase in allocated and opened is None:
            opened = at
        elif phase not in allocated and opened is not None:
            spans.append((opened, at))
            opened = None
    if opened is not None:
        spans.append((opened, last))
    if not changes and started_at is not None:
        spans.append((started_at, last))
    return [(begin, min(end, last)) for begin, end in spans if min(end, last) > begin]


def hours_within(spans: list[tuple[datetime, datetime]], start: datetime, end: datetime) -> float:
    """Hours of `spans` inside [start, end)."""
    seconds = sum(max(0.0, (min(e, end) - max(b, start)).total_seconds()) for b, e in spans)
    return seconds / 3600.0


def hour_amounts(*, held_hours: float, gpus: float, cpu_cores: float, memory_bytes: float,
                 gpu_utilization: float | None, cpu_usage_cores: float | None,
                 memory_usage_bytes: float | None) -> dict[str, float]:
    """One workload's amounts for one hour: what it held (requests × the hours it held them) and what it used (the
    mean of the hour's usage samples × those hours). Utilisation unknown: no GPU-hour is measured."""
    gpu_hours = gpus * held_hours
    measured = gpu_hours if gpu_utilization is not None else 0.0
    return {
        "gpu_hours": gpu_hours,
        "gpu_measured_hours": measured,
        "gpu_used_hours": measured * min(100.0, max(0.0, gpu_utilization or 0.0)) / 100.0,
        "cpu_core_hours": cpu_cores * held_hours,
        "cpu_used_core_hours": (cpu_usage_cores or 0.0) * held_hours,
        "memory_gib_hours": memory_bytes / GIB * held_hours,
        "memory_used_gib_hours": (memory_usage_bytes or 0.0) / GIB * held_hours,
    }
