"""PaaS Studio's own Kit APIs beside `/cfg` and `/streaming`: client URLs (`/api/v1/kit/client-urls`) and a
project's cap on concurrent streams (`/api/v1/kit/projects/{projectId}/stream-limit`). Thin views."""

from datetime import timedelta

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from kit import client_urls, sessions
from kit.models import ClientUrl, StreamSession
from studio.iam.auth import token_credential
from studio.iam.permissions import has_project_role
from studio.ids import IntegerId, parse_id
from studio.listing import DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET, int_query_param
from studio.models import Level, Project
from workloads.specs.fields import Integer, StrictSerializer, Text

LIFETIME_MAX = int(client_urls.MAX_LIFETIME.total_seconds())


class ClientUrlIn(StrictSerializer):
    projectId = IntegerId()
    name = Text(max_length=100, allow_blank=False)
    expiresInSeconds = Integer(required=False, min_value=60, max_value=LIFETIME_MAX)


class StreamLimitIn(StrictSerializer):
    maxSessions = Integer(allow_null=True, min_value=1, max_value=10_000)


def client_url_data(link: ClientUrl, *, url: str | None = None) -> dict:
    body = {"id": str(link.pk), "name": link.name, "projectId": link.project_id, "projectName": link.project.name,
            "hint": link.hint, "createdBy": link.created_by.get_username(),
            "createdAt": serializers.DateTimeField().to_representation(link.created_at),
            "expiresAt": serializers.DateTimeField().to_representation(link.expires_at),
            "revokedAt": serializers.DateTimeField().to_representation(link.revoked_at) if link.revoked_at else None,
            "lastUsedAt": (serializers.DateTimeField().to_representation(link.last_used_at)
                           if link.last_used_at else None),
            "origin": link.origin, "active": client_urls.is_active(link)}
    if url is not None:
        body["url"] = url  # in the answer that made it, never again
    return body


def _valid(serializer_class, data) -> dict:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


class ClientUrlListView(APIView):
    pagination_class = None

    @extend_schema(operation_id="kit_client_urls_list", responses=OpenApiTypes.OBJECT)
    def get(self, request):
        offset = int_query_param(request, "offset", 0, 0, MAX_OFFSET)
        limit = int_query_param(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
        rows = client_urls.client_urls_visible(user=request.user)
        return Response({"count": rows.count(), "limit": limit, "offset": offset,
                         "items": [client_url_data(link) for link in rows[offset:offset + limit]]})

    @extend_schema(operation_id="kit_client_urls_create", request=OpenApiTypes.OBJECT,
                   responses={201: OpenApiTypes.OBJECT})
    def post(self, request):
        data = _valid(ClientUrlIn, request.data)
        project = Project.objects.visible_to(request.user).filter(pk=data["projectId"]).first()
        if project is None:
            raise exceptions.ValidationError({"projectId": ["No such project, or you are not a member of it."]})
        lifetime = timedelta(seconds=data.get("expiresInSeconds", int(client_urls.DEFAULT_LIFETIME.total_seconds())))
        origin, access_key_id = token_credential(request.auth)  # the URL ends with the credential that made it
        link, token = client_urls.client_url_create(user=request.user, project=project, name=data["name"],
                                                    lifetime=lifetime, origin=origin, access_key_id=access_key_id)
        return Response(client_url_data(link, url=client_urls.base_url(request, token)),
                        status=status.HTTP_201_CREATED)


class ClientUrlDetailView(APIView):
    @extend_schema(operation_id="kit_client_urls_retrieve", responses=OpenApiTypes.OBJECT)
    def get(self, request, clientUrlId):
        return Response(client_url_data(client_urls.client_url_get(user=request.user, client_url_id=clientUrlId)))

    @extend_schema(operation_id="kit_client_urls_revoke", responses={204: None})
    def delete(self, request, clientUrlId):
        link = client_urls.client_url_get(user=request.user, client_url_id=clientUrlId)
        client_urls.client_url_revoke(user=request.user, link=link)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _project(request, project_id) -> Project:
    number = parse_id(project_id)
    project = Project.objects.visible_to(request.user).filter(pk=number).first() if number else None
    if project is None:
        raise exceptions.NotFound("The requested project was not found.")
    return project


def stream_limit_data(project: Project) -> dict:
    return {"projectId": project.pk, "maxSessions": sessions.cap_of(project.pk),
            "runningSessions": sessions.running_count(project.pk),
            "queuedSessions": StreamSession.objects.filter(project=project, state=StreamSession.State.QUEUED).count()}


class StreamLimitView(APIView):
    """A project's cap on concurrent streams: members read it, project admins and platform admins set it."""

    @extend_schema(operation_id="kit_stream_limit_retrieve", responses=OpenApiTypes.OBJECT)
    def get(self, request, projectId):
        return Response(stream_limit_data(_project(request, projectId)))

    @extend_schema(operation_id="kit_stream_limit_update", request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT)
    def put(self, request, projectId):
        project = _project(request, projectId)
        if not has_project_role(request.user, project, Level.ADMIN):
            raise exceptions.PermissionDenied("Only an admin of the project may set its cap on streams.")
        data = _valid(StreamLimitIn, request.data)
        sessions.limit_set(actor=request.user, project=project, max_sessions=data["maxSessions"])
        return Response(stream_limit_data(project))
