"""One FilterSet per listed kind, for the `/cfg` lists and the portal pages (search, filterBy, sortBy)."""

from kit.models import Application, ApplicationProfile
from studio.listing import StudioFilterSet


class ApplicationFilterSet(StudioFilterSet):
    class Meta:
        model = Application
        fields = []
        api_fields = {"id": "id", "name": "name", "description": "description"}
        search_fields = ["id", "name", "description"]
        default_sort = ["id"]


class ProfileFilterSet(StudioFilterSet):
    class Meta:
        model = ApplicationProfile
        fields = []
        api_fields = {
            "id": "slug", "name": "name", "projectId": "owner_project_id", "serviceType": "service_type",
            "encryption": "encryption", "authorization": "authorization",
        }
        search_fields = ["slug", "name", "description"]
        default_sort = ["slug"]
