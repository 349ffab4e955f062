"""Run:ai's identity API: Roles, Access rules, Users and /me/password (its tags of the same names).

Shapes and codes are Run:ai's (2.18 codes, the union of both versions' fields): lists of roles and users are
bare arrays, access rules `{totalRecords, displayRecords, accessRules}`, creates 201, deletes 204."""

from django.contrib.auth import get_user_model
from django.db.models import CharField, OuterRef, Subquery
from django.db.models.functions import Cast
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from studio import api_schemas as schemas
from studio import services
from studio.audit import AuditEvent
from studio.filtersets import AccessRuleFilterSet, UserFilterSet
from studio.iam.models import AccessRule, Level, Role, is_platform_admin
from studio.iam.permissions import IsPlatformAdmin, has_project_role
from studio.iam.serializers import (
    AccessRuleCreateSerializer,
    PasswordChangeSerializer,
    UserCreateSerializer,
    access_rule_data,
    role_data,
)
from studio.iam.serializers import user_data as _user_data
from studio.ids import is_id, parse_id
from studio.listing import DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET, int_query_param

SCHEMA_TAGS = {"Roles": ["Roles"], "Access rules": ["Access rules"], "Users": ["Users"]}


def _page(request, queryset):
    offset = int_query_param(request, "offset", 0, 0, MAX_OFFSET)
    limit = int_query_param(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    return list(queryset[offset : offset + limit])


# --- Roles ----------------------------------------------------------------------------------------------------

class RoleListView(APIView):
    @extend_schema(tags=SCHEMA_TAGS["Roles"], operation_id="get_roles", responses={200: schemas.ROLES})
    def get(self, request):
        return Response([role_data(role) for role in Role.objects.all()])


class RoleDetailView(APIView):
    @extend_schema(tags=SCHEMA_TAGS["Roles"], operation_id="get_role", responses={200: schemas.ROLE})
    def get(self, request, roleIdPath: int):
        return Response(role_data(get_object_or_404(Role, pk=roleIdPath)))


# --- Access rules -----------------------------------------------------------------------------------------------

def _rules(user):
    return AccessRule.objects.visible_to(user).select_related("role", "project__department", "department", "cluster")


def _filtered_rules(request):
    filterset = AccessRuleFilterSet(request.query_params, queryset=_rules(request.user), request=request)
    if not filterset.is_valid():
        raise ValidationError(filterset.errors)
    return filterset.qs


def _may_grant(user, *, scope_type: str, scope_id: str) -> bool:
    """Platform admins grant anything; a project's admins grant roles on that project."""
    if is_platform_admin(user):
        return True
    return scope_type == AccessRule.Scope.PROJECT and is_id(scope_id) and has_project_role(
        user, parse_id(scope_id), Level.ADMIN)


class AccessRuleListView(APIView):
    @extend_schema(tags=SCHEMA_TAGS["Access rules"], operation_id="get_access_rules", responses={200: schemas.ACCESS_RULES})
    def get(self, request):
        rules = _filtered_rules(request)
        page = _page(request, rules)
        return Response({"totalRecords": rules.count(), "displayRecords": len(page),
                         "accessRules": [access_rule_data(rule) for rule in page]})

    @extend_schema(tags=SCHEMA_TAGS["Access rules"], operation_id="create_access_rule",
                   request=AccessRuleCreateSerializer, responses={201: schemas.ACCESS_RULE})
    def post(self, request):
        serializer = AccessRuleCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if not _may_grant(request.user, scope_type=data["scopeType"], scope_id=data["scopeId"]):
            raise PermissionDenied("Only platform admins, and a project's admins on that project, may grant roles.")
        rule = services.access_rule_create(
            actor=request.user, subject_type=data["subjectType"], subject_id=data["subjectId"], role=data["roleId"],
            scope_type=data["scopeType"], scope_id=data["scopeId"],
        )
        return Response(access_rule_data(_rules(request.user).get(pk=rule.pk)), status=status.HTTP_201_CREATED)


class AccessRuleCountView(APIView):
    @extend_schema(tags=SCHEMA_TAGS["Access rules"], operation_id="count_access_rules", responses={200: schemas.COUNT})
    def get(self, request):
        return Response({"count": _filtered_rules(request).count()})


class AccessRuleDetailView(APIView):
    @extend_schema(tags=SCHEMA_TAGS["Access rules"], operation_id="get_access_rule", responses={200: schemas.ACCESS_RULE})
    def get(self, request, accessRuleId: int):
        return Response(access_rule_data(get_object_or_404(_rules(request.user), pk=accessRuleId)))

    @extend_schema(tags=SCHEMA_TAGS["Access rules"], operation_id="delete_access_rule",
                   responses={204: OpenApiResponse(description="Deleted.")})
    def delete(self, request, accessRuleId: int):
        rule = get_object_or_404(_rules(request.user), pk=accessRuleId)
        if not _may_grant(request.user, scope_type=rule.scope_type, scope_id=rule.scope_id):
            raise PermissionDenied("Only platform admins, and a project's admins on that project, may revoke roles.")
        services.access_rule_delete(rule, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- Users ----------------------------------------------------------------------------------------------------

def _users():
    """Users with who created them (from the audit trail, in the same query), whether the identity provider's
    (the same query), and their groups (one more)."""
    created_by = AuditEvent.objects.filter(
        object_type="auth.user", action=AuditEvent.Action.CREATE, object_id=Cast(OuterRef("pk"), CharField()),
    ).values("actor_name")[:1]
    return people().annotate(created_by=Subquery(created_by)).select_related("external_identity") \
        .prefetch_related("groups")


def people():
    """The users that are people: service accounts have user rows too, and are listed under their own tag."""
    return get_user_model().objects.filter(service_account__isnull=True)


class UserListView(APIView):
    permission_classes = [IsPlatformAdmin]

    @extend_schema(tags=SCHEMA_TAGS["Users"], operation_id="get_users", responses={200: schemas.USERS})
    def get(self, request):
        filterset = UserFilterSet(request.query_params, queryset=_users(), request=request)
        if not filterset.is_valid():
                raise ValidationError(filterset.errors)
        return Response([_user_data(user) for user in _page(request, filterset.qs)])

    @extend_schema(tags=SCHEMA_TAGS["Users"], operation_id="create_user", request=UserCreateSerializer,
                   responses={201: schemas.USER_CREATED})
    def post(self, request):
        serializer = UserCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user, password = services.user_create(actor=request.user, email=serializer.validated_data["email"])
        return Response({"id": str(user.pk), "username": user.username, "tempPassword": password},
                        status=status.HTTP_201_CREATED)


class UserCountView(APIView):
    permission_classes = [IsPlatformAdmin]

    @extend_schema(tags=SCHEMA_TAGS["Users"], operation_id="count_users", responses={200: schemas.COUNT})
    def get(self, request):
        filterset = UserFilterSet(request.query_params, queryset=people(), request=request)
        if not filterset.is_valid():
                raise ValidationError(filterset.errors)
        return Response({"count": filterset.qs.count()})


def _user(user_id: str):
    if not is_id(str(user_id)):
        raise Http404
    return get_object_or_404(_users(), pk=parse_id(str(user_id)))


class UserDetailView(APIView):
    permission_classes = [IsPlatformAdmin]

    @extend_schema(tags=SCHEMA_TAGS["Users"], operation_id="get_user_by_id", responses={200: schemas.USER})
    def get(self, request, userId: str):
        return Response(_user_data(_user(userId)))

    @extend_schema(tags=SCHEMA_TAGS["Users"], operation_id="delete_user_by_id",
                   responses={204: OpenApiResponse(description="Deleted.")})
    def delete(self, request, userId: str):
        services.user_delete(_user(userId), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class UserPasswordResetView(APIView):
    permission_classes = [IsPlatformAdmin]

    @extend_schema(tags=SCHEMA_TAGS["Users"], operation_id="reset_user_password", request=None,
                   responses={200: schemas.TEMP_PASSWORD})
    def post(self, request, userId: str):
        return Response({"tempPassword": services.user_password_reset(_user(userId), actor=request.user)})


class MePasswordView(APIView):
    @extend_schema(tags=SCHEMA_TAGS["Users"], operation_id="change_user_password", request=PasswordChangeSerializer,
                   responses={200: schemas.MESSAGE})
    def post(self, request):
        serializer = PasswordChangeSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        services.me_password_change(user=request.user, current_password=serializer.validated_data["currentPassword"],
                                    new_password=serializer.validated_data["newPassword"])
        return Response({"code": 200, "message": "Password changed successfully."})


