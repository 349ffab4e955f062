from studio.listing import StudioFilterSet
from usage.models import Report


class ReportFilterSet(StudioFilterSet):
    """Run:ai's ReportFilterAndSortFields: name, createdAt, createdBy, status."""

    class Meta:
        model = Report
        fields = []
        api_fields = {"name": "name", "createdAt": "created_at", "createdBy": "created_by_name", "status": "status"}
        search_fields = ["name", "description"]
        default_sort = ["-created_at"]
