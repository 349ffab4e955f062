"""Operations endpoints: liveness, and readiness of this process's own dependencies (database, broker).

Readiness never contacts a cluster: it is anonymous, and a cluster's address is whatever a platform admin
registered. Clusters are reported as counts by the status the last sync left (workloads/cluster/sync.py). A failed
check says which dependency, never the error's text (it can hold host names and ports)."""

from celery import current_app as celery_app
from django.db import connection
from django.db.models import Count
from django.http import JsonResponse
from django.utils import timezone

from studio.clusters.models import Cluster


def healthz(request):
    return JsonResponse({"status": "ok", "time": timezone.now().isoformat()})


def _check_database() -> tuple[bool, str]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True, connection.vendor
    except Exception as exc:  # any failure means "not ready"
        return False, f"unavailable ({type(exc).__name__})"


def _check_broker() -> tuple[bool, str]:
    try:
        with celery_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
            return True, conn.transport_cls if isinstance(conn.transport_cls, str) else conn.info()["transport"]
    except Exception as exc:
        return False, f"unavailable ({type(exc).__name__})"


def _cluster_counts() -> dict:
    by_status = dict(Cluster.objects.order_by().values_list("status").annotate(n=Count("pk")))
    counts = {status: by_status.get(status, 0) for status in Cluster.Status.values}
    return {"total": sum(counts.values()), **counts}


def readyz(request):
    db_ok, db_info = _check_database()
    broker_ok, broker_info = _check_broker()
    ready = db_ok and broker_ok
    body = {
        "status": "ready" if ready else "not ready",
        "database": {"ok": db_ok, "info": db_info},
        "broker": {"ok": broker_ok, "info": broker_info},
        "clusters": _cluster_counts() if db_ok else None,
    }
    return JsonResponse(body, status=200 if ready else 503)
