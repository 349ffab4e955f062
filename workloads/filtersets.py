import django_filters

from studio.listing import StudioFilterSet
from workloads.models import Workload


class WorkloadFilterSet(StudioFilterSet):
    """One FilterSet for the API list and the workloads page."""

    deleted = django_filters.BooleanFilter(method="filter_deleted", help_text="true lists deleted workloads.")
    projectId = django_filters.NumberFilter(field_name="project_id")

    class Meta:
        model = Workload
        fields = []
        api_fields = {
            "name": "name", "type": "kind", "phase": "actual_phase", "desiredPhase": "desired_phase",
            "projectId": "project_id", "projectName": "project__name", "departmentId": "department_id",
            "clusterId": "cluster_id", "createdAt": "created_at", "submittedBy": "created_by_name",
            "source": "source", "runningPods": "running_pods", "deletedAt": "deleted_at",
        }
        search_fields = ["name", "project__name", "created_by_name"]
        default_sort = ["-created_at"]

    def filter_deleted(self, queryset, name, value):
        return queryset.filter(deleted_at__isnull=not value)

    def filter_queryset(self, queryset):
        if self.form.cleaned_data.get("deleted") is None:
            queryset = queryset.filter(deleted_at__isnull=True)
        return super().filter_queryset(queryset)
