"""Operations endpoints: liveness, readiness (database, broker, clusters)."""

from concurrent.futures import ThreadPoolExecutor

from django.db import connection
from django.http import JsonResponse
from django.utils import timezone

from studio import kube
from studio.celery import app as celery_app
from studio.models import Cluster


def healthz(request):
    return JsonResponse({"status": "ok", "time": timezone.now().isoformat()})


def _check_database() -> tuple[bool, str]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True, connection.vendor
    except Exception as exc:  # any failure means "not ready"; the message says which
        return False, str(exc)[:200]


def _check_broker() -> tuple[bool, str]:
    try:
        with celery_app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
            return True, conn.transport_cls if isinstance(conn.transport_cls, str) else conn.info()["transport"]
    except Exception as exc:
        return False, str(exc)[:200]


def _check_cluster(cluster: Cluster) -> dict:
    try:
        info = kube.version(kube.connect(cluster))
        return {"name": cluster.name, "ok": True, "version": info["gitVersion"]}
    except Exception as exc:
        return {"name": cluster.name, "ok": False, "error": str(exc)[:200]}


def readyz(request):
    db_ok, db_info = _check_database()
    broker_ok, broker_info = _check_broker()
    clusters = list(Cluster.objects.all()) if db_ok else []
    with ThreadPoolExecutor(max_workers=8) as pool:
        cluster_checks = list(pool.map(_check_cluster, clusters))
    ready = db_ok and broker_ok and all(c["ok"] for c in cluster_checks)
    body = {
        "status": "ready" if ready else "not ready",
        "database": {"ok": db_ok, "info": db_info},
        "broker": {"ok": broker_ok, "info": broker_info},
        "clusters": cluster_checks,
    }
    return JsonResponse(body, status=200 if ready else 503)
