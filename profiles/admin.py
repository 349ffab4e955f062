"""Read-only views for support: every change goes through the API or the pages, where the services validate,
audit and count revisions. Launch secrets are not shown at all."""

from django.contrib import admin

from profiles.models import EnvironmentTemplate, ServiceProfile, TemplateVersion


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class TemplateVersionInline(admin.TabularInline):
    model = TemplateVersion
    fields = ["version", "kind", "state", "created_at"]
    readonly_fields = fields
    extra = 0

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(EnvironmentTemplate)
class EnvironmentTemplateAdmin(ReadOnlyAdmin):
    list_display = ["name", "system", "sharing_mode", "owner_project", "created_at"]
    search_fields = ["name", "display_name"]
    inlines = [TemplateVersionInline]


@admin.register(ServiceProfile)
class ServiceProfileAdmin(ReadOnlyAdmin):
    list_display = ["name", "service_type", "sharing_mode", "revision", "system", "created_at"]
    list_filter = ["service_type", "sharing_mode", "system"]
    search_fields = ["name", "display_name"]
