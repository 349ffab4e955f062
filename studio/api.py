"""API views of the organisation and identity (Run:ai's Organizations and Authorization tags). Thin: parse, authorize, call a service, render."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView

from studio import api_schemas, services
from studio.audit import AuditEvent
from studio.clusters.models import Cluster
from studio.concurrency import ETagMixin
from studio.errors import error_body
from studio.filtersets import (
    AuditEventFilterSet,
    ClusterFilterSet,
    DepartmentFilterSet,
    MemberFilterSet,
    ProjectFilterSet,
)
from studio.iam import auth
from studio.iam import tokens as iam_tokens
from studio.iam.models import AccessKey, AccessRule, Level
from studio.iam.permissions import IsPlatformAdmin, IsPlatformAdminOrReadOnly, has_project_role
from studio.iam.throttling import LOGIN_THROTTLES
from studio.org.models import Department, Project
from studio.org.overtime import attach_overtime
from studio.org.permissions import ChangesProjectsOfManagedDepartments, require_manages
from studio.org.units import DepartmentSerializer, ProjectSerializer
from studio.selectors import attach_gpu_use, org_departments, org_projects, project_members
from studio.serializers import (
    AccessKeySerializer,
    AuditEventSerializer,
    ClusterSerializer,
    MemberSerializer,
    MeSerializer,
    TokenRequestSerializer,
    TokenResponseSerializer,
)

# Path ids that are not of the key's form never reach the database (a 404, not a 500 on a failed cast).
INTEGER_REGEX = r"[0-9]{1,18}"
UUID_REGEX = r"[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}"


class ServiceViewSet(
    ETagMixin,
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin, viewsets.GenericViewSet
):
    """CRUD whose writes go through services (audited); subclasses may override `perform_*`."""

    def get_queryset(self):
        return self.queryset.model.objects.visible_to(self.request.user)  # authorization as a queryset

    def check_permissions(self, request):
        # A write to an object the caller cannot see is a 404 (no leak); a role that may not write, a 403.
        lookup = self.lookup_url_kwarg or self.lookup_field
        if request.method not in ("GET", "HEAD", "OPTIONS") and lookup in self.kwargs and request.user.is_authenticated:
            get_object_or_404(self.get_queryset(), **{self.lookup_field: self.kwargs[lookup]})
        super().check_permissions(request)

    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        instance = self.perform_create(serializer)
        return Response(self.get_serializer(instance).data, status=status.HTTP_201_CREATED)

    def update(self, request, *args, partial=False, **kwargs):
        instance = self.get_object()
        serializer = self.get_serializer(instance, data=request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        instance = self.updated_instance = self.perform_update(serializer)
        return Response(self.get_serializer(instance).data)

    def partial_update(self, request, *args, **kwargs):
        return self.update(request, *args, partial=True, **kwargs)

    def perform_create(self, serializer):
        return services.model_create(self.queryset.model, actor=self.request.user, **serializer.validated_data)

    def perform_update(self, serializer):
        return services.model_update(serializer.instance, actor=self.request.user, **serializer.validated_data)

    def perform_destroy(self, instance):
        services.model_delete(instance, actor=self.request.user)


@extend_schema_view(
    list=extend_schema(tags=["Clusters"], responses={200: api_schemas.CLUSTER}),  # as an array (many)
    retrieve=extend_schema(tags=["Clusters"], responses={200: api_schemas.CLUSTER}),
    create=extend_schema(tags=["Clusters"], responses={201: api_schemas.CLUSTER}),
    update=extend_schema(tags=["Clusters"], responses={204: None}),
    partial_update=extend_schema(tags=["Clusters"], responses={200: api_schemas.CLUSTER}),
    destroy=extend_schema(tags=["Clusters"]),
)
class ClusterViewSet(ServiceViewSet):
    queryset = Cluster.objects.all()
    serializer_class = ClusterSerializer
    filterset_class = ClusterFilterSet
    permission_classes = [IsPlatformAdminOrReadOnly]
    results_key = "clusters"
    lookup_url_kwarg = "clusterId"
    pagination_class = None  # Run:ai's get_clusters is one bare array
    lookup_value_regex = UUID_REGEX

    def list(self, request, *args, **kwargs):
        # Run:ai's get_clusters answers a bare array of DisplayedCluster, unpaged.
        clusters = self.filter_queryset(self.get_queryset())
        return Response(self.get_serializer(clusters, many=True).data)

    def update(self, request, *args, partial=False, **kwargs):
        response = super().update(request, *args, partial=partial, **kwargs)
        if not partial:  # Run:ai 2.18's updateCluster answers 204; PATCH (ours) keeps the body
            return Response(status=status.HTTP_204_NO_CONTENT, headers={"ETag": response.get("ETag", "")})
        return response

    def perform_create(self, serializer):
        return services.cluster_create(actor=self.request.user, **serializer.validated_data)


class OrgUnitViewSet(ServiceViewSet):
    """Run:ai's Projects and Departments (studio.org_units): PUT takes Run:ai's update body (every field optional,
    as PATCH), answers are re-read with their GPU use; `/count` counts the list's filters."""

    permission_classes = [IsPlatformAdminOrReadOnly]
    lookup_value_regex = INTEGER_REGEX
    omit_last_next = True  # Run:ai types `next` as an integer: left out on the last page

    gpu_use_field = "project_id"  # how a workload names the unit (attach_gpu_use)

    def update(self, request, *args, partial=False, **kwargs):
        return super().update(request, *args, partial=True, **kwargs)

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        attach_gpu_use(page, self.gpu_use_field)  # one query for the page
        attach_overtime(page, self.gpu_use_field)  # and one of the usage history
        return self.get_paginated_response(self.get_serializer(page, many=True).data)

    def get_object(self):
        unit = super().get_object()
        attach_gpu_use([unit], self.gpu_use_field)
        attach_overtime([unit], self.gpu_use_field)
        return unit

    def _answer(self, instance):
        unit = self.get_queryset().get(pk=instance.pk)
        attach_gpu_use([unit], self.gpu_use_field)
        attach_overtime([unit], self.gpu_use_field)
        return unit

    def count(self, request):
        return Response({"count": self.filter_queryset(self.get_queryset()).count()})


@extend_schema_view(
    list=extend_schema(tags=["Departments"], operation_id="get_departments", responses={200: api_schemas.DEPARTMENT}),
    retrieve=extend_schema(tags=["Departments"], operation_id="get_department",
                           responses={200: api_schemas.DEPARTMENT}),
    create=extend_schema(tags=["Departments"], operation_id="create_department",
                         responses={201: api_schemas.DEPARTMENT}),
    update=extend_schema(tags=["Departments"], operation_id="update_department",
                         responses={200: api_schemas.DEPARTMENT}),
    partial_update=extend_schema(tags=["Departments"], responses={200: api_schemas.DEPARTMENT}),
    destroy=extend_schema(tags=["Departments"], operation_id="delete_department"),
)
class DepartmentViewSet(OrgUnitViewSet):
    queryset = Department.objects.all()
    serializer_class = DepartmentSerializer
    filterset_class = DepartmentFilterSet
    results_key = "departments"
    lookup_url_kwarg = "departmentId"
    gpu_use_field = "department_id"  # a workload keeps its department

    def get_queryset(self):
        return org_departments(self.request.user)

    @extend_schema(tags=["Departments"], operation_id="count_departments", responses={200: api_schemas.COUNT})
    def count(self, request):
        return super().count(request)

    def perform_create(self, serializer):
        return self._answer(services.department_create(actor=self.request.user, **serializer.service_fields()))

    def perform_update(self, serializer):
        return self._answer(services.department_update(serializer.instance, actor=self.request.user,
                                                       **serializer.service_fields()))


@extend_schema_view(
    list=extend_schema(tags=["Projects"], operation_id="get_projects", responses={200: api_schemas.PROJECT}),
    retrieve=extend_schema(tags=["Projects"], operation_id="get_project", responses={200: api_schemas.PROJECT}),
    create=extend_schema(tags=["Projects"], operation_id="create_project",
                         responses={201: api_schemas.PROJECT}),
    update=extend_schema(tags=["Projects"], operation_id="update_project",
                         responses={200: api_schemas.PROJECT}),
    partial_update=extend_schema(tags=["Projects"], responses={200: api_schemas.PROJECT}),
    destroy=extend_schema(tags=["Projects"], operation_id="delete_project"),
)
class ProjectViewSet(OrgUnitViewSet):
    permission_classes = [ChangesProjectsOfManagedDepartments]  # department admins change their projects
    queryset = Project.objects.all()
    serializer_class = ProjectSerializer
    filterset_class = ProjectFilterSet
    results_key = "projects"
    lookup_url_kwarg = "projectId"

    def get_queryset(self):
        return org_projects(self.request.user)

    @extend_schema(tags=["Projects"], operation_id="count_projects", responses={200: api_schemas.COUNT})
    def count(self, request):
        return super().count(request)

    def perform_create(self, serializer):
        fields = serializer.service_fields()
        require_manages(self.request.user, fields.get("department"))
        return self._answer(services.project_create(actor=self.request.user, **fields))

    def perform_update(self, serializer):
        fields = serializer.service_fields()
        require_manages(self.request.user, fields.get("department"))  # moved to another department
        return self._answer(services.project_update(serializer.instance, actor=self.request.user, **fields))


class MemberViewSet(ServiceViewSet):
    """Members of one project — a view over its project-scope user access rules (one row per user, the
    highest level): read by its members, changed by platform admins and project admins."""

    serializer_class = MemberSerializer
    filterset_class = MemberFilterSet
    queryset = AccessRule.objects.all()
    results_key = "members"
    lookup_field = "user_id"
    lookup_url_kwarg = "userId"
    lookup_value_regex = INTEGER_REGEX

    def project(self) -> Project:
        if not hasattr(self, "_project"):
            self._project = get_object_or_404(Project.objects.visible_to(self.request.user), pk=self.kwargs["projectId"])
        return self._project

    def get_queryset(self):
        return project_members(self.project())

    def check_permissions(self, request):
        super().check_permissions(request)
        if request.method not in ("GET", "HEAD", "OPTIONS") and not has_project_role(
            request.user, self.project(), Level.ADMIN
        ):
            raise PermissionDenied("Only project admins and platform admins may manage members.")

    def perform_create(self, serializer):
        return services.membership_set(actor=self.request.user, project=self.project(), **serializer.validated_data)

    def perform_update(self, serializer):
        # A PATCH may leave the role out: then it stays as it is.
        role = serializer.validated_data.get("role", serializer.instance.role.level)
        return services.membership_set(actor=self.request.user, project=self.project(), user=serializer.instance.user,
                                       role=role)

    def perform_destroy(self, instance):
        services.membership_remove(actor=self.request.user, project=self.project(), user=instance.user)


class AccessKeyViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin, viewsets.GenericViewSet
):
    queryset = AccessKey.objects.all()
    serializer_class = AccessKeySerializer
    results_key = "accessKeys"
    lookup_value_regex = UUID_REGEX
    filterset_class = None

    def get_queryset(self):
        return AccessKey.objects.filter(user=self.request.user)  # another user's key is a 404

    def create(self, request):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        key, secret = services.access_key_create(user=request.user, name=serializer.validated_data["name"],
                                                 by_client=auth.from_client_credentials(request.auth))
        return Response({**self.get_serializer(key).data, "clientSecret": secret}, status=status.HTTP_201_CREATED)

    def perform_destroy(self, instance):
        services.model_delete(instance, actor=self.request.user)


class AuditEventViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    queryset = AuditEvent.objects.all()
    serializer_class = AuditEventSerializer
    filterset_class = AuditEventFilterSet
    permission_classes = [IsPlatformAdmin]
    results_key = "auditEvents"
    lookup_value_regex = INTEGER_REGEX


class MeView(APIView):
    @extend_schema(responses=MeSerializer)
    def get(self, request):
        return Response(MeSerializer(request.user).data)


class TokenView(APIView):
    authentication_classes = []
    permission_classes = [AllowAny]
    throttle_classes = LOGIN_THROTTLES  # per client address and per account tried: a 429 with Retry-After

    def get_authenticate_header(self, request):
        return 'Bearer realm="api"'  # bad credentials are a 401, not a 403

    @extend_schema(request=TokenRequestSerializer, responses=TokenResponseSerializer, auth=[], tags=["Tokens"])
    def post(self, request):
        serializer = TokenRequestSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        grant = data["grantType"]
        if grant == "password":
            return Response(iam_tokens.grant_password(username=data["username"], password=data["password"]))
        if grant in ("client_credentials", "app_token"):  # an access key's or a service account's id and secret
            return Response(auth.grant_client_credentials(client_id=data["clientId"],
                                                          client_secret=data["clientSecret"]))
        try:
            if grant == "refresh_token":
                return Response(iam_tokens.grant_refresh(refresh_token=data["refreshToken"]))
            if grant == "exchange_token":
                return Response(iam_tokens.grant_authorization_code(
                    code=data["code"], redirect_uri=data["redirectUri"], code_verifier=data.get("codeVerifier", "")))
            return Response(iam_tokens.grant_external_token(external_token=data["externalToken"]))
        except iam_tokens.GrantRefused as exc:
            return Response(error_body(exc.status, str(exc)), status=exc.status,
                            headers={"WWW-Authenticate": self.get_authenticate_header(request)}
                            if exc.status == 401 else None)


class TokenRevokeView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={204: None})
    def post(self, request):
        if request.auth is not None:
            auth.revoke(str(request.auth))
        return Response(status=status.HTTP_204_NO_CONTENT)
