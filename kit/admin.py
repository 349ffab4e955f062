from django.contrib import admin

from kit.models import Application, ApplicationProfile, ApplicationVersion


class VersionInline(admin.TabularInline):
    model = ApplicationVersion
    extra = 0


@admin.register(Application)
class ApplicationAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "updated_at"]
    search_fields = ["id", "name"]
    inlines = [VersionInline]


@admin.register(ApplicationProfile)
class ApplicationProfileAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "owner_project", "sharing_mode", "service_type", "encryption", "revision"]
    list_filter = ["sharing_mode", "service_type", "encryption"]
    search_fields = ["slug", "name"]
    filter_horizontal = ["shared_with"]
