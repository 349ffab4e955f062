"""GET /metrics: Prometheus text for this process, or for every process (web, worker, beat) when they share
PROMETHEUS_MULTIPROC_DIR — counters that workers increment (cluster API calls, task retries) only reach the
web's /metrics that way. Collectors computed at scrape time (e.g. workloads by phase) are added to either."""

import os
import secrets

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest, multiprocess

# Collectors that read the database at scrape time; apps append to this in AppConfig.ready().
SCRAPE_COLLECTORS: list = []


def registry() -> CollectorRegistry:
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        return REGISTRY  # the scrape-time collectors are registered on it directly
    shared = CollectorRegistry()
    multiprocess.MultiProcessCollector(shared)
    for collector in SCRAPE_COLLECTORS:
        shared.register(collector)
    return shared


def register_scrape_collector(collector) -> None:
    """Once per process: on the default registry now, and on every multiprocess scrape."""
    if any(type(c) is type(collector) for c in SCRAPE_COLLECTORS):
        return
    SCRAPE_COLLECTORS.append(collector)
    REGISTRY.register(collector)


def metrics(request):
    expected = settings.METRICS_TOKEN
    if expected:
        # Prometheus's `authorization: {credentials: ...}` sends it as a bearer token.
        given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if not secrets.compare_digest(given.encode(), expected.encode()):
            return JsonResponse({"code": 401, "message": "A bearer token (METRICS_TOKEN) is required."}, status=401,
                                headers={"WWW-Authenticate": 'Bearer realm="metrics"'})
    return HttpResponse(generate_latest(registry()), content_type=CONTENT_TYPE_LATEST)
