"""Run:ai's identity shapes: Roles, Access rules, Users — field names and types as its OpenAPI documents spell them."""

from rest_framework import serializers

from studio.iam.models import AccessRule, Role
from studio.iam.roles import permissions_of
from studio.serializers import StrictSerializer

_datetime = serializers.DateTimeField().to_representation


def _time(value):
    return None if value is None else _datetime(value)


def role_data(role: Role) -> dict:
    """Role1 (2.18) ∪ RoleV1 (latest)."""
    return {
        "id": role.pk, "name": role.name, "description": role.description,
        "permissions": permissions_of(role.name, role.level),
        "createdAt": _time(role.created_at), "updatedAt": _time(role.updated_at), "deletedAt": None,
        "createdBy": "system", "tenantId": AccessRule.TENANT_ID,
        "custom": False, "enabled": True, "effectiveEnabled": True, "kubernetesPermissions": {"predefinedRole": None},
        "level": role.level,  # PaaS Studio's permission level of the role (admin / member / viewer)
    }


def access_rule_data(rule: AccessRule) -> dict:
    """AccessRule (2.18) ∪ latest (with `status`); `scopePath` as AccessRuleById has it."""
    scope_path = {
        AccessRule.Scope.PROJECT: lambda: f"{rule.project.department.name}/{rule.project.name}",
        AccessRule.Scope.DEPARTMENT: lambda: rule.department.name,
        AccessRule.Scope.CLUSTER: lambda: rule.cluster.name,
    }.get(rule.scope_type, lambda: None)()
    data = {
        "id": rule.pk, "subjectId": rule.subject_id, "subjectType": rule.subject_type, "roleId": rule.role_id,
        "roleName": rule.role.name, "scopeId": rule.scope_id, "scopeType": rule.scope_type,
        "scopeName": rule.scope_name, "scopePath": scope_path, "tenantId": AccessRule.TENANT_ID,
        "createdAt": _time(rule.created_at), "updatedAt": _time(rule.updated_at), "deletedAt": None,
        "createdBy": rule.created_by, "status": {"phase": "Ready", "message": "", "details": ""},
    }
    cluster_id = rule.cluster_id or (rule.project.cluster_id if rule.project_id else None)
    if cluster_id is not None:
        data["clusterId"] = str(cluster_id)
    return data


class AccessRuleCreateSerializer(StrictSerializer):
    """AccessRuleCreationFields: `roleId` an integer, `scopeId` a string (a number is accepted and read as one)."""

    subjectId = serializers.CharField(max_length=255)
    subjectType = serializers.ChoiceField(choices=AccessRule.Subject.choices)
    roleId = serializers.PrimaryKeyRelatedField(queryset=Role.objects.all(),
                                                error_messages={"does_not_exist": "No role with id {pk_value}."})
    scopeId = serializers.CharField(max_length=64)
    scopeType = serializers.ChoiceField(choices=AccessRule.Scope.choices)
    clusterId = serializers.UUIDField(required=False)

    def validate(self, attrs):
        if attrs["scopeType"] in AccessRule.TENANT_WIDE and attrs["scopeId"] != str(AccessRule.TENANT_ID):
            raise serializers.ValidationError({"scopeId": [f"The tenant's id is {AccessRule.TENANT_ID}."]})
        return attrs


def user_data(user, created_by: str | None = None) -> dict:
    """User2: `id` a string; `isLocal` false for a user of the identity provider (studio/iam)."""
    return {
        "id": str(user.pk), "username": user.username, "email": user.email,
        "createdBy": created_by or getattr(user, "created_by", None) or "system",
        "createdAt": _time(user.date_joined), "updatedAt": _time(user.date_joined), "lastLogin": _time(user.last_login),
        "isLocal": not hasattr(user, "external_identity"), "groups": [group.name for group in user.groups.all()],
    }


class UserCreateSerializer(StrictSerializer):
    """UserCreationRequest: a local user named by its email. `resetPassword` is accepted: every new user gets a
    temporary password anyway."""

    email = serializers.EmailField(max_length=150)
    resetPassword = serializers.BooleanField(required=False, allow_null=True)


class PasswordChangeSerializer(StrictSerializer):
    currentPassword = serializers.CharField(trim_whitespace=False)
    newPassword = serializers.CharField(trim_whitespace=False, max_length=128)
