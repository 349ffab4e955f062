"""The "workloads by phase" gauge of /metrics, computed at scrape time from the database."""

from django.db import DatabaseError
from django.db.models import Count
from prometheus_client.core import GaugeMetricFamily

from studio.metrics import register_scrape_collector


class WorkloadsByPhaseCollector:
    """studio_workloads{kind, phase}: live workloads (not deleted) by kind and actual phase."""

    def collect(self):
        from workloads.models import Workload  # at scrape time: the app registry is ready by then

        gauge = GaugeMetricFamily("studio_workloads", "Live workloads by kind and actual phase.",
                                  labels=["kind", "phase"])
        try:
            rows = list(Workload.objects.live().order_by().values("kind", "actual_phase").annotate(n=Count("id")))
        except DatabaseError:
            return  # an unreachable database shows as absent series, not as a failed scrape
        for row in rows:
            gauge.add_metric([row["kind"], row["actual_phase"]], row["n"])
        yield gauge

    def describe(self):
        return []  # no query at registration time


def register() -> None:
    register_scrape_collector(WorkloadsByPhaseCollector())
