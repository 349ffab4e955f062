from django.contrib import admin

from studio.models import AccessKey, AuditEvent, Cluster, Department, Membership, Project


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    list_display = ["name", "api_server_url", "status", "last_seen_at"]
    exclude = ["token", "kubeconfig"]


@admin.register(Department)
class DepartmentAdmin(admin.ModelAdmin):
    list_display = ["name", "created_at"]


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "department", "cluster", "namespace", "gpu_deserved", "gpu_limit"]
    inlines = [MembershipInline]


@admin.register(AccessKey)
class AccessKeyAdmin(admin.ModelAdmin):
    list_display = ["name", "user", "client_id", "created_at", "last_used_at"]
    readonly_fields = ["client_id", "secret_hash"]


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ["at", "actor_name", "action", "object_type", "object_repr"]
    list_filter = ["action", "object_type"]

    def has_change_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False
