"""Writes of the usage app: report requests (made by a worker) and the node pools' chargeback prices."""

import logging
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from studio.audit import AuditEvent, audit_record, snapshot
from studio.models import Cluster, NodePool
from studio.queue import enqueue_on_commit
from usage import report_table
from usage.models import NodePoolPrice, Report
from usage.selectors import usage_rows

log = logging.getLogger(__name__)


def report_create(*, user, name: str, description: str, start: datetime, end: datetime, group_by: str | None,
                  filter_by: list[str]) -> Report:
    with transaction.atomic():
        report = Report.objects.create(
            name=name, description=description, start=start, end=end, group_by=group_by, filter_by=filter_by,
            created_by=user, created_by_name=user.email or user.get_username(), status_updated_at=timezone.now(),
            status_message="Report in queue")
        audit_record(actor=user, action=AuditEvent.Action.CREATE, instance=report)
        enqueue_on_commit("usage.tasks.report_produce", str(report.pk))
    return report


def report_delete(*, report: Report, user) -> None:
    with transaction.atomic():
        audit_record(actor=user, action=AuditEvent.Action.DELETE, instance=report,
                     before={"name": report.name, "start": report.start.isoformat(), "end": report.end.isoformat()})
        report.delete()


def _filters(filter_by: list[str]) -> dict[str, set]:
    out: dict[str, set] = {}
    for item in filter_by:
        field, _, value = item.partition("==")
        out.setdefault(field, set()).add(value)
    return out


def report_produce(*, report_id) -> Report | None:
    """Make the report's CSV from the history; again from scratch when run again (a retried task)."""
    report = Report.objects.filter(pk=report_id).first()
    if report is None or report.status == Report.Status.READY:
        return report
    _status(report, Report.Status.PROCESSING, "Report in progress")
    try:
        rows = usage_rows(start=report.start, end=report.end, filters=_filters(report.filter_by))
        prices = {(str(cluster), pool): (gpu, cpu, memory) for cluster, pool, gpu, cpu, memory in
                  NodePoolPrice.objects.values_list("node_pool__cluster_id", "node_pool__name", "gpu_hour",
                                                    "cpu_core_hour", "memory_gib_hour")}
        names = {str(pk): name for pk, name in Cluster.objects.values_list("pk", "name")}
        header, lines = report_table.report_lines(rows, group_by=report.group_by, prices=prices, cluster_names=names)
        report.csv = report_table.as_csv(header, lines)
    except Exception as exc:  # recorded on the report for whoever asked; the worker's log has the rest
        log.exception("report %s failed", report.pk)
        _status(report, Report.Status.FAILED, f"The report could not be made: {type(exc).__name__}.")
        return report
    _status(report, Report.Status.READY, f"Ready: {len(lines)} lines", fields=["csv"])
    return report


def _status(report: Report, status: str, message: str, *, fields: list | None = None) -> None:
    report.status, report.status_message, report.status_updated_at = status, message, timezone.now()
    report.save(update_fields=["status", "status_message", "status_updated_at", *(fields or [])])


def price_set(*, node_pool: NodePool, user, gpu_hour, cpu_core_hour, memory_gib_hour) -> NodePoolPrice:
    with transaction.atomic():
        existing = NodePoolPrice.objects.filter(node_pool=node_pool).first()
        before = snapshot(existing) if existing else None
        price, _ = NodePoolPrice.objects.update_or_create(node_pool=node_pool, defaults={
            "gpu_hour": gpu_hour, "cpu_core_hour": cpu_core_hour, "memory_gib_hour": memory_gib_hour,
            "updated_by": user.get_username()})
        audit_record(actor=user, action=AuditEvent.Action.UPDATE if before else AuditEvent.Action.CREATE,
                     instance=price, before=before)
    return price


def price_clear(*, price: NodePoolPrice, user) -> None:
    with transaction.atomic():
        audit_record(actor=user, action=AuditEvent.Action.DELETE, instance=price, before=snapshot(price))
        price.delete()
