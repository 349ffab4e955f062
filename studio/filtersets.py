from studio.listing import StudioFilterSet
from studio.models import AuditEvent, Cluster, Department, Membership, Project


class ClusterFilterSet(StudioFilterSet):
    class Meta:
        model = Cluster
        fields = []
        api_fields = {"name": "name", "status": "status", "createdAt": "created_at", "lastSeenAt": "last_seen_at"}
        search_fields = ["name"]


class DepartmentFilterSet(StudioFilterSet):
    class Meta:
        model = Department
        fields = []
        api_fields = {"name": "name", "createdAt": "created_at"}
        search_fields = ["name", "description"]


class ProjectFilterSet(StudioFilterSet):
    class Meta:
        model = Project
        fields = []
        api_fields = {
            "name": "name", "departmentId": "department_id", "clusterId": "cluster_id",
            "namespace": "namespace", "createdAt": "created_at",
        }
        search_fields = ["name"]


class MemberFilterSet(StudioFilterSet):
    class Meta:
        model = Membership
        fields = []
        api_fields = {"username": "user__username", "role": "role", "createdAt": "created_at"}
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
