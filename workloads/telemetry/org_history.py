"""Where a project's or a department's allocation over a long range comes from: the usage history, a higher app that
registers its reader at start-up (`register_org_history`, usage.apps), so that workloads never names it.

Raw samples are kept METRICS_RETENTION_DAYS and one row per workload and round: a 30-day range of a department
at 10,000 workloads would read millions of them. The history holds one row per workload and hour (or per day and
unit), so a long range reads a few thousand rows whatever the number of workloads."""

from collections.abc import Callable
from datetime import datetime

# (unit field "project_id" | "department_id" | "cluster_id", unit id, start, end, sample types, node pool or None)
#   -> {sample type: [(timestamp, value in the sample's unit)]}
OrgHistory = Callable[[str, object, datetime, datetime, set, str | None], dict]
_reader: list[OrgHistory] = []


def register_org_history(reader: OrgHistory) -> None:
    _reader[:] = [reader]


def org_history() -> OrgHistory | None:
    return _reader[0] if _reader else None
