import django_filters
from django.contrib.auth import get_user_model
from django.db.models import Case, CharField, Q, Value, When

from studio.audit import AuditEvent
from studio.clusters.models import Cluster
from studio.iam.models import AccessRule
from studio.ids import IdFilter
from studio.listing import StudioFilterSet, split_list_param
from studio.org.models import Department, Project
from studio.org.overtime import AVERAGE_FIELDS, overtime_expression
from studio.selectors import gpu_allocated_expression


class ClusterFilterSet(StudioFilterSet):
    class Meta:
        model = Cluster
        fields = []
        api_fields = {"name": "name", "status": "status", "createdAt": "created_at", "lastSeenAt": "last_seen_at"}
        search_fields = ["name"]


def _project_phase():
    # studio.org.units.project_phase, as an expression (the phase follows the project's cluster).
    return Case(When(cluster__status=Cluster.Status.CONNECTED, then=Value("Ready")),
                When(cluster__status=Cluster.Status.DISCONNECTED, then=Value("NotReady")),
                default=Value("Unknown"), output_field=CharField())


def _averages(model, field: str) -> dict:
    """Run:ai's avgGpuAllocation24h … avgGpuMemoryUtilization30d, from the usage history (studio.org.overtime)."""
    return {name: (lambda name=name: overtime_expression(model, field, name)) for name in AVERAGE_FIELDS}


class DepartmentFilterSet(StudioFilterSet):
    """Run:ai's DepartmentsFilterBy/SortBy: name, clusterId, gpuAllocated, createdAt and the 24h/7d/30d averages
    (the department's quota is per pool: naming totalGpuQuota is a 400)."""

    class Meta:
        model = Department
        fields = []
        api_fields = {"name": "name", "clusterId": "cluster_id", "createdAt": "created_at",
                      "description": "description"}
        api_expressions = {"gpuAllocated": lambda: gpu_allocated_expression("department_id"),
                           **_averages(Department, "department_id")}
        search_fields = ["name", "description"]


class ProjectFilterSet(StudioFilterSet):
    """Run:ai's ProjectsFilterBy/SortBy: name, clusterId, departmentId, parentId, parentName, phase,
    totalGpuQuota, gpuAllocated, createdAt and the 24h/7d/30d averages."""

    class Meta:
        model = Project
        fields = []
        api_fields = {
            "name": "name", "departmentId": "department_id", "clusterId": "cluster_id",
            "namespace": "namespace", "createdAt": "created_at", "parentId": "department_id",
            "parentName": "department__name", "totalGpuQuota": "gpu_deserved",
        }
        api_expressions = {"phase": _project_phase, "gpuAllocated": gpu_allocated_expression,
                           **_averages(Project, "project_id")}
        search_fields = ["name"]


class MemberFilterSet(StudioFilterSet):
    class Meta:
        model = AccessRule
        fields = []
        api_fields = {"username": "user__username", "role": "role__level", "createdAt": "created_at"}
        search_fields = ["user__username", "user__email"]
        default_sort = ["user__username"]


class AuditEventFilterSet(StudioFilterSet):
    class Meta:
        model = AuditEvent
        fields = []
        api_fields = {
            "at": "at", "actor": "actor_name", "action": "action",
            "objectType": "object_type", "objectId": "object_id",
        }
        search_fields = ["object_repr", "actor_name"]
        default_sort = ["-at"]


def _scope_name():
    from django.db.models import CharField, Value
    from django.db.models.functions import Coalesce

    return Coalesce("project__name", "department__name", "cluster__name", Value("tenant"), output_field=CharField())


class AccessRuleFilterSet(StudioFilterSet):
    """Run:ai's access-rule list parameters: the plain ones (subjectType, subjectIdFilter, subjectIds, scopeType,
    scopeId, roleId, clusterId, lastUpdated) and filterBy/sortBy over AccessRulesSortFilterFields."""

    subjectType = django_filters.CharFilter(field_name="subject_type")
    subjectIdFilter = django_filters.CharFilter(field_name="subject_id")  # the spec's name of the parameter
    subjectId = django_filters.CharFilter(field_name="subject_id")
    subjectIds = django_filters.CharFilter(method="_subject_ids")
    scopeType = django_filters.CharFilter(field_name="scope_type")
    scopeId = django_filters.CharFilter(field_name="scope_id")
    roleId = IdFilter(field_name="role_id")
    clusterId = django_filters.UUIDFilter(method="_cluster")
    lastUpdated = django_filters.IsoDateTimeFilter(field_name="updated_at", lookup_expr="gte")
    includeDeleted = django_filters.BooleanFilter(method="_noop")  # rules are deleted for good: nothing to include

    class Meta:
        model = AccessRule
        fields = []
        api_fields = {
            "subjectId": "subject_id", "subjectType": "subject_type", "roleId": "role_id", "scopeId": "scope_id",
            "scopeType": "scope_type", "roleName": "role__name", "createdAt": "created_at", "createdBy": "created_by",
        }
        api_expressions = {"scopeName": _scope_name}
        search_fields = ["subject_id", "role__name"]
        default_sort = ["id"]

    def _subject_ids(self, queryset, name, value):
        return queryset.filter(subject_id__in=split_list_param([value]))

    def _cluster(self, queryset, name, value):
        return queryset.filter(Q(cluster_id=value) | Q(project__cluster_id=value))


class UserFilterSet(StudioFilterSet):
    """Run:ai's users list: filterBy/sortBy over username, lastLogin, creationTime (UsersFilterSortFields)."""

    class Meta:
        model = get_user_model()
        fields = []
        api_fields = {"username": "username", "lastLogin": "last_login", "creationTime": "date_joined",
                      "lastUpdated": "date_joined"}
        search_fields = ["username", "email"]
        default_sort = ["username"]
