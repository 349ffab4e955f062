"""Environment templates, service profiles and the catalog. Thin views: parse, authorize, call
one service, render. The launch (`POST /api/v1/service-profiles/{id}/launch`) is workloads' (workloads.api.launch).

Visibility is the queryset (a platform admin sees all; anyone else what their projects own or are shared):
outside it, a 404, for writes too. Writes are for platform admins (403 for others), and system rows refuse
them with a 403 that says why."""

from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, permissions, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from profiles import selectors, services
from profiles.filtersets import EnvironmentTemplateFilterSet, ServiceProfileFilterSet
from profiles.models import EnvironmentTemplate, ServiceProfile, TemplateVersion
from profiles.serializers import (
    CatalogEntrySerializer,
    CloneSerializer,
    EnvironmentTemplateSerializer,
    ServiceProfileSerializer,
    TemplateVersionSerializer,
)
from sharing.serializers import SharingSerializer
from studio.concurrency import ETagMixin
from studio.iam.permissions import IsPlatformAdminOrReadOnly, visible_project
from studio.ids import is_id, parse_id
from studio.models import Project

VERSION_REGEX = r"[0-9A-Za-z.-]+"


class AdminWritesViewSet(ETagMixin, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Reads scoped by the queryset, writes for platform admins; a write to what the caller cannot see is a
    404 before it is a 403, so nothing leaks. A GET answers an ETag; a write with a stale If-Match, a 412."""

    permission_classes = [IsPlatformAdminOrReadOnly]
    lookup_value_regex = r"[0-9]+"  # ASCII: \d takes any Unicode digit (٣ is 3 to int)

    def check_permissions(self, request):
        lookup = self.lookup_url_kwarg or self.lookup_field
        if request.method not in permissions.SAFE_METHODS and lookup in self.kwargs and request.user.is_authenticated:
            get_object_or_404(self.get_queryset(), **{self.lookup_field: self.kwargs[lookup]})
        super().check_permissions(request)

    def _validated(self, serializer_class, *, instance=None, partial=False):
        serializer = serializer_class(instance, data=self.request.data, partial=partial)
        serializer.is_valid(raise_exception=True)
        return serializer


class EnvironmentTemplateViewSet(AdminWritesViewSet):
    serializer_class = EnvironmentTemplateSerializer
    filterset_class = EnvironmentTemplateFilterSet
    results_key = "environmentTemplates"

    def get_queryset(self):
        return selectors.templates_visible_to(self.request.user)

    def create(self, request):
        fields = self._validated(EnvironmentTemplateSerializer).service_fields()
        template = services.template_create(actor=request.user, **fields)
        return Response(EnvironmentTemplateSerializer(template).data, status=status.HTTP_201_CREATED)

    def update(self, request, pk=None, partial=False):
        template = self.get_object()
        services.ensure_editable(template)
        fields = self._validated(EnvironmentTemplateSerializer, instance=template, partial=partial).service_fields()
        template = self.updated_instance = services.template_update(actor=request.user, template=template, **fields)
        return Response(EnvironmentTemplateSerializer(self.get_queryset().get(pk=template.pk)).data)

    def partial_update(self, request, pk=None):
        return self.update(request, pk, partial=True)

    def destroy(self, request, pk=None):
        services.template_delete(actor=request.user, template=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=SharingSerializer, responses=SharingSerializer)
    @action(detail=True, methods=["put"], filterset_class=None)
    def sharing(self, request, pk=None):
        template = self.get_object()
        services.ensure_editable(template)
        data = self._validated(SharingSerializer).validated_data
        template = self.updated_instance = services.template_update(actor=request.user, template=template,
                                                                    sharing=dict(data))
        return Response(template.sharing())


class TemplateVersionViewSet(AdminWritesViewSet):
    """`/environment-templates/{templateId}/versions[/{version}]`, reads for whoever may see the template."""

    serializer_class = TemplateVersionSerializer
    filterset_class = None
    results_key = "versions"
    lookup_field = "version"
    lookup_value_regex = VERSION_REGEX

    def template(self) -> EnvironmentTemplate:
        if not hasattr(self, "_template"):
            visible = EnvironmentTemplate.objects.visible_to(self.request.user)
            self._template = get_object_or_404(visible, pk=self.kwargs["templateId"])
        return self._template

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator, with no URL arguments
            return TemplateVersion.objects.none()
        return self.template().versions.select_related("template").order_by("created_at", "id")

    def check_permissions(self, request):
        if request.user.is_authenticated:
            self.template()  # a template the caller cannot see is a 404 for every method
        super().check_permissions(request)

    def create(self, request, templateId=None):
        services.ensure_editable(self.template())
        fields = self._validated(TemplateVersionSerializer).service_fields()
        version = services.version_create(actor=request.user, template=self.template(), **fields)
        return Response(TemplateVersionSerializer(version).data, status=status.HTTP_201_CREATED)

    def update(self, request, templateId=None, version=None, partial=False):
        row = self.get_object()
        services.ensure_editable(row.template)
        fields = self._validated(TemplateVersionSerializer, instance=row, partial=partial).service_fields()
        row = self.updated_instance = services.version_update(actor=request.user, template_version=row, **fields)
        return Response(TemplateVersionSerializer(row).data)

    def partial_update(self, request, templateId=None, version=None):
        return self.update(request, templateId, version, partial=True)

    def destroy(self, request, templateId=None, version=None):
        services.version_delete(actor=request.user, template_version=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)


class ServiceProfileViewSet(AdminWritesViewSet):
    serializer_class = ServiceProfileSerializer
    filterset_class = ServiceProfileFilterSet
    results_key = "serviceProfiles"

    def get_queryset(self):
        return selectors.profiles_visible_to(self.request.user)

    def _body(self, profile: ServiceProfile, code=status.HTTP_200_OK) -> Response:
        return Response(ServiceProfileSerializer(self.get_queryset().get(pk=profile.pk)).data, status=code)

    def create(self, request):
        fields = self._validated(ServiceProfileSerializer).service_fields()
        return self._body(services.profile_create(actor=request.user, **fields), status.HTTP_201_CREATED)

    def update(self, request, pk=None, partial=False):
        profile = self.get_object()
        services.ensure_editable(profile)
        fields = self._validated(ServiceProfileSerializer, instance=profile, partial=partial).service_fields()
        self.updated_instance = services.profile_update(actor=request.user, profile=profile, **fields)
        return self._body(self.updated_instance)

    def partial_update(self, request, pk=None):
        return self.update(request, pk, partial=True)

    def destroy(self, request, pk=None):
        services.profile_delete(actor=request.user, profile=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=SharingSerializer, responses=SharingSerializer)
    @action(detail=True, methods=["put"], filterset_class=None)
    def sharing(self, request, pk=None):
        profile = self.get_object()
        services.ensure_editable(profile)
        data = self._validated(SharingSerializer).validated_data
        profile = self.updated_instance = services.profile_share(actor=request.user, profile=profile, mode=data["mode"],
                                                                 project_ids=data["projectIds"])
        return Response(profile.sharing())

    @extend_schema(request=CloneSerializer, responses={201: ServiceProfileSerializer})
    @action(detail=True, methods=["post"], filterset_class=None)
    def clone(self, request, pk=None):
        source = self.get_object()
        data = self._validated(CloneSerializer).validated_data
        owner = None
        if data.get("projectId") is not None:
            owner = Project.objects.filter(pk=data["projectId"]).first()
            if owner is None:
                raise ValidationError({"projectId": ["No such project."]})
        copy = services.profile_clone(actor=request.user, profile=source, name=data["name"], owner_project=owner,
                                      display_name=data.get("displayName"))
        return self._body(copy, status.HTTP_201_CREATED)


PROJECT_PARAMETER = OpenApiParameter("projectId", OpenApiTypes.INT, required=True,
                                     description="The project whose catalog to read; its members only.")


@extend_schema(parameters=[PROJECT_PARAMETER])
class CatalogViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """`GET /api/v1/catalog?projectId=…`: what the project's members may launch."""

    serializer_class = CatalogEntrySerializer
    filterset_class = ServiceProfileFilterSet
    own_query_params = frozenset({"projectId"})  # the view's, not a filter (studio.listing.FilterBackend)
    results_key = "profiles"
    lookup_value_regex = r"[0-9]+"  # ASCII: \d takes any Unicode digit (٣ is 3 to int)

    def project(self) -> Project:
        raw = self.request.query_params.get("projectId")
        if not raw:
            raise ValidationError({"projectId": ["This query parameter is required."]})
        if not is_id(raw):
            raise ValidationError({"projectId": ["Must be a project id."]})
        project = visible_project(self.request.user, parse_id(raw))
        if project is None:
            raise Http404
        return project

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return ServiceProfile.objects.none()
        if self.action == "list":
            return selectors.catalog_rows_for(self.project())
        return selectors.catalog_entries_for(self.project())

    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        # One entry serializer, not a ListSerializer (many=True): that one and its data (a ReturnList) refer to
        # each other, a cycle that held every page's entries until Python's cyclic collector ran; its passes over
        # them were the catalog's p99 under load.
        entry = self.get_serializer()
        return self.get_paginated_response([entry.to_representation(p) for p in selectors.listed_profiles(page)])

    def get_object(self):
        return selectors.with_versions([super().get_object()])[0]
