"""The product's URLs plus the benchmark's bare Django JSON view (ROOT_URLCONF=bench.urls, bench only)."""

from django.http import JsonResponse
from django.urls import include, path

from workloads.models import Workload

FIELDS = ("id", "name", "requested_name", "kind", "project_id", "project__name", "department_id", "cluster_id",
          "actual_phase", "phase_message", "desired_phase", "created_at", "updated_at", "phase_updated_at",
          "started_at", "completed_at", "deleted_at", "created_by_name", "running_pods", "requested_pods",
          "gpu_request", "source", "profile_id", "profile_name", "profile_revision")


def bare_workloads(request):
    """The same 100 rows as GET /api/v1/workloads?limit=100, with no authentication, DRF or filters."""
    rows = list(Workload.objects.filter(deleted_at__isnull=True).order_by("-created_at", "-id").values(*FIELDS)[:100])
    return JsonResponse({"workloads": rows, "next": 100})


urlpatterns = [path("bench/bare-workloads", bare_workloads), path("", include("config.urls"))]
