"""One FilterSet per listed kind, shared by the API lists (admin list, catalog) and the pages."""

import django_filters

from profiles.models import EnvironmentTemplate, ServiceProfile
from studio.listing import StudioFilterSet


class ServiceProfileFilterSet(StudioFilterSet):
    serviceType = django_filters.ChoiceFilter(field_name="service_type", choices=ServiceProfile.ServiceType.choices)

    class Meta:
        model = ServiceProfile
        fields = []
        api_fields = {
            "name": "name", "displayName": "display_name", "serviceType": "service_type",
            "sharing": "sharing_mode", "createdAt": "created_at", "updatedAt": "updated_at",
            "projectId": "owner_project_id", "system": "system", "revision": "revision",
            "environmentTemplate": "template_version__template__name", "kind": "template_version__kind",
        }
        search_fields = ["name", "display_name"]
        default_sort = ["name"]


class EnvironmentTemplateFilterSet(StudioFilterSet):
    class Meta:
        model = EnvironmentTemplate
        fields = []
        api_fields = {
            "name": "name", "displayName": "display_name", "sharing": "sharing_mode", "createdAt": "created_at",
            "projectId": "owner_project_id", "system": "system",
        }
        search_fields = ["name", "display_name"]
        default_sort = ["name"]
