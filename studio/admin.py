from django.contrib import admin

from studio.audit import AuditEvent
from studio.clusters.models import Cluster
from studio.iam.models import AccessKey, AccessRule, Role
from studio.org.models import Department, Project


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    list_display = ["name", "api_server_url", "status", "last_seen_at"]
    exclude = ["token", "kubeconfig"]


@admin.register(Department)
class DepartmentAdmin(admin.ModelAdmin):
    list_display = ["name", "created_at"]


class AccessRuleInline(admin.TabularInline):
    model = AccessRule
    fk_name = "project"
    fields = ["subject_type", "subject_id", "role", "created_by"]
    readonly_fields = ["subject_type", "subject_id", "role", "created_by"]
    extra = 0


@admin.register(Role)
class RoleAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "level"]


@admin.register(AccessRule)
class AccessRuleAdmin(admin.ModelAdmin):
    list_display = ["id", "subject_type", "subject_id", "role", "scope_type", "scope_id"]
    list_filter = ["subject_type", "scope_type", "role"]


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ["name", "department", "cluster", "namespace", "gpu_deserved", "gpu_limit"]
    inlines = [AccessRuleInline]


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
