"""The `/cfg` and `/streaming` APIs of Kit App Streaming, as its services answer. Thin views: parse, authorize,
call one selector or service, render. Errors carry Kit's messages and `detail` (kit.errors); a request that does
not validate is a 422.

The same views answer under a client URL, `/kit-client/<token>/cfg/...` and `/kit-client/<token>/streaming/...`
(kit.client_urls): there they read the catalogue and run the streams of the URL's project, and change nothing
else."""

from django.db import transaction
from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from kit import errors, selectors, services, sessions
from kit.client_urls import ClientUrlAuthentication, client_url_of
from kit.filtersets import ApplicationFilterSet, ProfileFilterSet
from kit.serializers import (
    ApplicationIn,
    ApplicationUpdateIn,
    ProfileIn,
    ProfileUpdateIn,
    SessionIn,
    SessionRef,
    VersionIn,
    VersionRef,
    application_data,
    profile_data,
    profile_fields,
    profile_summary,
    session_data,
    session_http_status,
    version_data,
)
from studio.concurrency import current_etag, etag_of, locked_if_match
from studio.listing import DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET, int_query_param
from studio.models import is_platform_admin
from studio.schema import IF_MATCH

PAGE = [OpenApiParameter("offset", OpenApiTypes.INT, required=False),
        OpenApiParameter("limit", OpenApiTypes.INT, required=False, description="1-500, default 50")]
LISTED = [*PAGE, *(OpenApiParameter(name, OpenApiTypes.STR, required=False)
                   for name in ("search", "sortBy", "sortOrder", "filterBy"))]
TAGS = OpenApiParameter("tags", OpenApiTypes.STR, required=False, many=True,
                        description="Applications carrying every tag given (comma-separated or repeated).")


def page(request, rows, *, keys=("count", "limit", "offset", "items")) -> dict:
    """The list convention (studio.listing): offset/limit over a queryset or a list, with the total `count`; `keys` picks and orders
    the keys of the answer (Kit's own lists answer only count and items)."""
    offset = int_query_param(request, "offset", 0, 0, MAX_OFFSET)
    limit = int_query_param(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    count = rows.count() if isinstance(rows, QuerySet) else len(rows)
    body = {"count": count, "limit": limit, "offset": offset, "items": list(rows[offset : offset + limit])}
    return {key: body[key] for key in keys}


def filtered(filterset_class, request, queryset):
    filterset = filterset_class(request.query_params, queryset=queryset, request=request)
    if not filterset.is_valid():
        raise ValidationError(filterset.errors)
    return filterset.qs


def valid(serializer_class, data) -> dict:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def require_platform_admin(request, message: str = errors.RESOURCE_FORBIDDEN) -> None:
    if client_url_of(request) is not None:
        raise errors.forbidden(errors.CLIENT_URL_READS_ONLY)
    if not is_platform_admin(request.user):
        raise errors.forbidden(message)


def tags_param(request) -> list[str]:
    """`?tags=a,b` or `?tags=a&tags=b`: the tags an application must all carry."""
    return [tag.strip() for value in request.query_params.getlist("tags") for tag in value.split(",") if tag.strip()]


def _same_id(data: dict, current: str) -> None:
    if "id" in data and data.pop("id") != current:
        raise ValidationError({"id": ["The id cannot be changed."]})


class KitView(APIView):
    pagination_class = None
    filter_backends: list = []
    client_token: str | None = None

    def dispatch(self, request, *args, **kwargs):
        self.client_token = kwargs.pop("client_token", None)  # a client URL's token (kit.client_urls)
        return super().dispatch(request, *args, **kwargs)

    def get_authenticators(self):
        """Under a client URL its token alone authenticates; elsewhere the API's usual credentials."""
        if self.client_token is not None:
            return [ClientUrlAuthentication()]
        return super().get_authenticators()

    def get_exception_handler(self):
        return errors.kit_exception_handler


# --- /cfg/apps ---------------------------------------------------------------------------------------

class ApplicationListView(KitView):
    @extend_schema(operation_id="cfg_apps_list", parameters=[*LISTED, TAGS], responses=OpenApiTypes.OBJECT)
    def get(self, request):
        apps = filtered(ApplicationFilterSet, request, selectors.applications(tags=tags_param(request)))
        body = page(request, apps)
        body["items"] = [application_data(app) for app in body["items"]]
        return Response(body)

    @extend_schema(request=OpenApiTypes.OBJECT, responses={201: OpenApiTypes.OBJECT})
    def post(self, request):
        require_platform_admin(request)
        data = valid(ApplicationIn, request.data)
        app = services.application_create(actor=request.user, app_id=data.pop("id"), **data)
        return Response(application_data(app), status=status.HTTP_201_CREATED)


class ApplicationDetailView(KitView):
    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request, app_id):
        return Response(application_data(selectors.application_get(app_id=app_id)))

    @extend_schema(request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT)
    def put(self, request, app_id):
        app = selectors.application_get(app_id=app_id)
        require_platform_admin(request)
        data = valid(ApplicationUpdateIn, request.data)
        _same_id(data, app.id)
        return Response(application_data(services.application_update(actor=request.user, application=app, **data)))

    patch = put  # absent fields keep their values either way

    @extend_schema(responses={204: None})
    def delete(self, request, app_id):
        app = selectors.application_get(app_id=app_id)
        require_platform_admin(request)
        services.application_delete(actor=request.user, application=app)
        return Response(status=status.HTTP_204_NO_CONTENT)


class VersionListView(KitView):
    @extend_schema(operation_id="cfg_apps_versions_list", parameters=PAGE, responses=OpenApiTypes.OBJECT)
    def get(self, request, app_id):
        app = selectors.application_get(app_id=app_id)
        body = page(request, selectors.versions_newest_first(app=app))
        body["items"] = [{"version": row.version} for row in body["items"]]
        return Response(body)

    @extend_schema(request=OpenApiTypes.OBJECT, responses={201: OpenApiTypes.OBJECT})
    def post(self, request, app_id):
        app = selectors.application_get(app_id=app_id)
        require_platform_admin(request)
        data = valid(VersionIn, request.data)
        version = services.version_create(actor=request.user, application=app, **data)
        return Response(version_data(version), status=status.HTTP_201_CREATED)

    @extend_schema(request=OpenApiTypes.OBJECT, responses={204: None})
    def delete(self, request, app_id):
        app = selectors.application_get(app_id=app_id)
        require_platform_admin(request)
        data = valid(VersionRef, request.data)
        services.version_delete(actor=request.user, version=selectors.version_get(app=app, version=data["version"]))
        return Response(status=status.HTTP_204_NO_CONTENT)


class VersionDetailView(KitView):
    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request, app_id, version):
        app = selectors.application_get(app_id=app_id)
        return Response(version_data(selectors.version_get(app=app, version=version)))


class VersionProfileListView(KitView):
    """Seed 000: profiles for an app version; `*` for the app id, the version or both."""

    @extend_schema(operation_id="cfg_apps_versions_profiles_list", parameters=PAGE, responses=OpenApiTypes.OBJECT)
    def get(self, request, app_id, version):
        profiles = selectors.profiles_for_path(user=request.user, app_id=app_id, version=version,
                                               client_url=client_url_of(request))
        body = page(request, profiles, keys=("count", "items"))
        body["items"] = [profile_summary(p) for p in body["items"]]
        return Response(body)


class VersionProfileDetailView(KitView):
    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request, app_id, version, profile_id):
        profile = selectors.profile_for_path(user=request.user, app_id=app_id, version=version, profile_id=profile_id,
                                             client_url=client_url_of(request))
        return Response(profile_summary(profile))


# --- /cfg/profiles -----------------------------------------------------------------------------------

class ProfileListView(KitView):
    @extend_schema(operation_id="cfg_profiles_list", parameters=LISTED, responses=OpenApiTypes.OBJECT)
    def get(self, request):
        link = client_url_of(request)
        if not selectors.may_see_profiles(request.user, link):
            raise errors.forbidden(errors.RESOURCE_FORBIDDEN)
        queryset = selectors.profiles_visible(user=request.user, client_url=link).prefetch_related("shared_with")
        body = page(request, filtered(ProfileFilterSet, request, queryset))
        body["items"] = [profile_data(p) for p in body["items"]]
        return Response(body)

    @extend_schema(request=OpenApiTypes.OBJECT, responses={201: OpenApiTypes.OBJECT})
    def post(self, request):
        require_platform_admin(request)
        data = valid(ProfileIn, request.data)
        profile = services.profile_create(
            actor=request.user, profile_id=data["id"], fields=profile_fields(data),
            owner_project_id=data.get("projectId"), sharing=data.get("sharing"),
        )
        return Response(profile_data(profile), status=status.HTTP_201_CREATED)


class ProfileDetailView(KitView):
    """A GET answers an ETag; a PUT, PATCH or DELETE whose If-Match names an older one is a 412."""

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def get(self, request, profile_id):
        profile = selectors.profile_get(user=request.user, profile_id=profile_id, client_url=client_url_of(request))
        return Response(profile_data(profile), headers={"ETag": etag_of(profile)})

    @extend_schema(request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT, parameters=[IF_MATCH])
    @transaction.atomic
    def put(self, request, profile_id):
        profile = selectors.profile_get(user=request.user, profile_id=profile_id)
        require_platform_admin(request, errors.PROFILE_FORBIDDEN)
        profile = locked_if_match(request, profile)
        data = valid(ProfileUpdateIn, request.data)
        _same_id(data, profile.slug)
        profile = services.profile_update(
            actor=request.user, profile=profile, fields=profile_fields(data),
            owner_project_id=data.get("projectId", services.KEEP), sharing=data.get("sharing"),
        )
        return Response(profile_data(selectors.profile_get(user=request.user, profile_id=profile.slug)),
                        headers={"ETag": current_etag(profile)})

    patch = put  # absent fields keep their values either way

    @extend_schema(responses={204: None}, parameters=[IF_MATCH])
    @transaction.atomic
    def delete(self, request, profile_id):
        profile = selectors.profile_get(user=request.user, profile_id=profile_id)
        require_platform_admin(request, errors.PROFILE_FORBIDDEN)
        profile = locked_if_match(request, profile)
        services.profile_delete(actor=request.user, profile=profile)
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- /streaming/stream -------------------------------------------------------------------------------

class StreamView(KitView):
    @extend_schema(operation_id="streaming_stream_list", parameters=PAGE, responses=OpenApiTypes.OBJECT)
    def get(self, request):
        rows = selectors.sessions_visible(user=request.user, client_url=client_url_of(request))
        body = page(request, rows, keys=("offset", "limit", "count", "items"))
        positions = selectors.queue_positions(body["items"])
        body["items"] = [session_data(s, position=positions.get(s.pk)) for s in body["items"]]
        return Response(body)

    @extend_schema(request=OpenApiTypes.OBJECT, responses={202: OpenApiTypes.OBJECT})
    def post(self, request):
        data = valid(SessionIn, request.data)
        session = sessions.session_request(
            user=request.user, app_id=data["id"], profile_id=data["profile"], version=data.get("version"),
            arguments=data.get("arguments"), project_id=data.get("projectId"), client_url=client_url_of(request),
        )
        position = selectors.queue_positions([session]).get(session.pk)
        return Response(session_data(session, position=position), status=status.HTTP_202_ACCEPTED,
                        headers={"Location": f"{request.path.rstrip('/')}/{session.pk}"})

    @extend_schema(operation_id="streaming_stream_destroy_by_body", request=OpenApiTypes.OBJECT, responses={204: None})
    def delete(self, request):
        data = valid(SessionRef, request.data)
        found = selectors.session_get(user=request.user, session_id=data["id"], client_url=client_url_of(request))
        sessions.session_end(user=request.user, session=found)
        return Response(status=status.HTTP_204_NO_CONTENT)


class StreamDetailView(KitView):
    """202 while the session waits or starts, 200 once a client can connect (or it failed), as Kit App Streaming
    answers it: clients poll until then. Each read counts as the session being in use (kit.governance)."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT, 202: OpenApiTypes.OBJECT})
    def get(self, request, session_id):
        found = selectors.session_get(user=request.user, session_id=session_id, client_url=client_url_of(request))
        sessions.session_touch(session=found)
        body = session_data(found, position=selectors.queue_positions([found]).get(found.pk))
        return Response(body, status=session_http_status(body))

    @extend_schema(responses={204: None})
    def delete(self, request, session_id):
        found = selectors.session_get(user=request.user, session_id=session_id, client_url=client_url_of(request))
        sessions.session_end(user=request.user, session=found)
        return Response(status=status.HTTP_204_NO_CONTENT)
