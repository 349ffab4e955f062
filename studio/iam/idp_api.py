"""Run:ai's Idps tag (7 operations): the organisation's identity provider, set by platform admins.

Only OpenID Connect (`type: oidc`) is offered: SAML and OpenShift are a 400 that says so. The client secret is
write-only: stored encrypted (studio.crypto) and answered as a mask, as Run:ai answers it. A provider set in
the environment (`OIDC_DISCOVERY_URL`, ...) is listed as well, and cannot be changed through the API (409)."""

from urllib.parse import urlsplit

from django.conf import settings
from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from studio.errors import Conflict
from studio.iam import sso_services
from studio.iam.claims import MAPPER_NAMES, mappers_with_defaults
from studio.iam.models import IdentityProvider
from studio.iam.permissions import IsPlatformAdmin
from studio.iam.providers import Provider, environment_provider, provider_of
from studio.serializers import StrictSerializer

TAGS = ["Idps"]
SECRET_MASK = "*******"
SCOPE_PATTERN = r"^([a-zA-Z0-9-._:]+)(\s[a-zA-Z0-9-._:]+)*$"
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class MandatoryClaimSerializer(StrictSerializer):
    claim = serializers.RegexField(r".*[a-zA-Z].*", max_length=200)
    values = serializers.ListField(child=serializers.RegexField(r"^(?!.*\s).*?[a-zA-Z].*$", max_length=200),
                                   min_length=1, max_length=100)


class MappersSerializer(StrictSerializer):
    gid = serializers.CharField(required=False, allow_blank=True, max_length=200)
    uid = serializers.CharField(required=False, allow_blank=True, max_length=200)
    groups = serializers.CharField(required=False, allow_blank=True, max_length=200)
    supplementaryGroups = serializers.CharField(required=False, allow_blank=True, max_length=200)
    email = serializers.CharField(required=False, allow_blank=True, max_length=200)
    alias = serializers.CharField(required=False, max_length=63)  # Run:ai's Mappers schema names it; unused


class OidcDataSerializer(StrictSerializer):
    clientId = serializers.CharField(max_length=255)
    # Required to create; on an update, left out keeps the stored secret (it is never answered back).
    clientSecret = serializers.CharField(max_length=2000, required=False, trim_whitespace=False)
    discoverDocumentUrl = serializers.URLField(max_length=500)
    scopes = serializers.ListField(child=serializers.RegexField(SCOPE_PATTERN, max_length=200), required=False,
                                   max_length=50)
    mandatoryClaim = MandatoryClaimSerializer(required=False, allow_null=True)

    def validate_discoverDocumentUrl(self, value):
        parts = urlsplit(value)
        if parts.scheme != "https" and parts.hostname not in LOOPBACK and not settings.DEBUG:
            raise serializers.ValidationError("Must be an https URL (the client secret is sent to this provider).")
        return value


class IdpCreationSerializer(StrictSerializer):
    """IdpCreationRequest, for `type: oidc`."""

    name = serializers.CharField(required=False, allow_blank=True, max_length=100)
    type = serializers.ChoiceField(choices=["oidc", "saml", "openshift-v4"])
    oidcData = OidcDataSerializer(required=False)
    samlData = serializers.DictField(required=False, allow_null=True)
    ocpData = serializers.DictField(required=False, allow_null=True)
    mappers = MappersSerializer(required=False)

    def validate(self, attrs):
        if attrs["type"] != "oidc":
            raise serializers.ValidationError({"type": [f"{attrs['type']} is not offered here: only oidc (OpenID "
                                                        "Connect) providers are."]})
        if not attrs.get("oidcData"):
            raise serializers.ValidationError({"oidcData": ["This field is required for type oidc."]})
        if self.context.get("creating") and not attrs["oidcData"].get("clientSecret"):
            raise serializers.ValidationError({"oidcData": {"clientSecret": ["This field is required."]}})
        return attrs


def _fields(data: dict) -> dict:
    oidc = data["oidcData"]
    scopes = list(oidc.get("scopes") or ["openid", "email", "profile"])
    scopes = [scope for entry in scopes for scope in entry.split()]
    if "openid" not in scopes:
        scopes.insert(0, "openid")
    return {"name": data.get("name") or "", "discovery_url": oidc["discoverDocumentUrl"],
            "client_id": oidc["clientId"], "client_secret": oidc.get("clientSecret") or "",
            "scopes": scopes, "mandatory_claim": oidc.get("mandatoryClaim") or None,
            "mappers": _mappers(data.get("mappers") or {})}


def _mappers(data: dict) -> dict:
    return {k: v for k, v in data.items() if k in MAPPER_NAMES}


def idp_data(provider: Provider, request) -> dict:
    """Idp1: the secret masked, the redirect URI the provider must allow for the portal's login."""
    oidc = {"clientId": provider.client_id, "clientSecret": SECRET_MASK, "discoverDocumentUrl": provider.discovery_url,
            "scopes": list(provider.scopes)}
    if provider.mandatory_claim:
        oidc["mandatoryClaim"] = provider.mandatory_claim
    return {"alias": provider.alias, "type": "oidc", "redirectUri": request.build_absolute_uri(reverse("sso-callback")),
            "oidcData": oidc, "mappers": mappers_with_defaults(provider.mappers)}


def _providers() -> list[Provider]:
    env = environment_provider()
    return ([env] if env else []) + [provider_of(row) for row in IdentityProvider.objects.all()]


def _provider(alias: str) -> Provider:
    found = next((p for p in _providers() if p.alias == alias), None)
    if found is None:
        raise Http404
    return found


def _stored(alias: str) -> IdentityProvider:
    provider = _provider(alias)
    if provider.from_environment:
        raise Conflict("This identity provider is set in the environment (OIDC_DISCOVERY_URL, ...): change it there.")
    return IdentityProvider.objects.get(alias=alias)


class IdpListView(APIView):
    permission_classes = [IsPlatformAdmin]

    @extend_schema(tags=TAGS, operation_id="get_idps", responses={200: OpenApiResponse(description="Idps")})
    def get(self, request):
        return Response([idp_data(p, request) for p in _providers()])

    @extend_schema(tags=TAGS, operation_id="create_idp", request=IdpCreationSerializer,
                   responses={201: OpenApiResponse(description="IdpPostResponse: {alias}")})
    def post(self, request):
        serializer = IdpCreationSerializer(data=request.data, context={"creating": True})
        serializer.is_valid(raise_exception=True)
        if environment_provider() is not None:
            raise Conflict("An identity provider is set in the environment (OIDC_DISCOVERY_URL): unset it first.")
        row = sso_services.idp_create(actor=request.user, alias="oidc", **_fields(serializer.validated_data))
        return Response({"alias": row.alias}, status=status.HTTP_201_CREATED)


class IdpDetailView(APIView):
    permission_classes = [IsPlatformAdmin]

    @extend_schema(tags=TAGS, operation_id="get_idp", responses={200: OpenApiResponse(description="Idp1")})
    def get(self, request, idp: str):
        return Response(idp_data(_provider(idp), request))

    @extend_schema(tags=TAGS, operation_id="update_idp", request=IdpCreationSerializer,
                   responses={200: OpenApiResponse(description="Idp1")})
    def put(self, request, idp: str):
        row = _stored(idp)
        serializer = IdpCreationSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        fields = _fields(serializer.validated_data)
        if "mappers" not in serializer.validated_data:
            fields.pop("mappers")
        row = sso_services.idp_update(row, actor=request.user, **fields)
        return Response(idp_data(provider_of(row), request))

    @extend_schema(tags=TAGS, operation_id="delete_idp", responses={200: OpenApiResponse(description="Deleted.")})
    def delete(self, request, idp: str):
        sso_services.idp_delete(_stored(idp), actor=request.user)
        return Response({"code": 200, "message": "Idp successfully deleted"})


class IdpMappersView(APIView):
    permission_classes = [IsPlatformAdmin]

    @extend_schema(tags=TAGS, operation_id="get_idp_mappers", responses={200: MappersSerializer})
    def get(self, request, idp: str):
        return Response({"alias": idp, **mappers_with_defaults(_provider(idp).mappers)})

    @extend_schema(tags=TAGS, operation_id="update_idp_mappers", request=MappersSerializer,
                   responses={202: OpenApiResponse(description="Accepted.")})
    def put(self, request, idp: str):
        row = _stored(idp)
        serializer = MappersSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        sso_services.idp_mappers_update(row, actor=request.user, mappers=_mappers(serializer.validated_data))
        return Response({"code": 202, "message": "Request accepted successfully."}, status=status.HTTP_202_ACCEPTED)
