"""Run:ai's Service Accounts tag (6 operations): non-personal identities for automation, managed by platform
admins. A service account gets tokens with its client id and secret (`client_credentials`, or `app_token` as
runapy asks), and acts with the roles of the access rules whose subject it is (`subjectType:
service-account`, `subjectId`: its client id). Its secret is answered once, at creation and at regeneration."""

import uuid

from django.http import Http404
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from studio.iam import sso_services
from studio.iam.models import AccessRule, ServiceAccount
from studio.iam.permissions import IsPlatformAdmin
from studio.serializers import StrictSerializer

TAGS = ["Service Accounts"]
NAME_PATTERN = r"^[a-z][-_a-z0-9]*[a-z0-9]$"
_datetime = serializers.DateTimeField().to_representation


def _time(value):
    return None if value is None else _datetime(value)


def service_account_data(account: ServiceAccount) -> dict:
    return {"id": str(account.id), "name": account.name, "clientId": account.client_id,
            "createdBy": account.created_by, "createdAt": _time(account.created_at),
            "updatedAt": _time(account.updated_at), "enabled": account.enabled,
            "tenantId": str(AccessRule.TENANT_ID), "lastLogin": _time(account.last_login)}


class ServiceAccountCreationSerializer(StrictSerializer):
    name = serializers.RegexField(NAME_PATTERN, max_length=63, error_messages={
        "invalid": "Lowercase letters, digits, '-' and '_', starting with a letter and ending with a letter or digit."})


class ServiceAccountPatchSerializer(StrictSerializer):
    enabled = serializers.BooleanField()


def _account(service_account_id: str) -> ServiceAccount:
    try:
        key = uuid.UUID(str(service_account_id))
    except ValueError:
        raise Http404 from None
    account = ServiceAccount.objects.select_related("user").filter(pk=key).first()
    if account is None:
        raise Http404
    return account


class ServiceAccountListView(APIView):
    permission_classes = [IsPlatformAdmin]

    @extend_schema(tags=TAGS, operation_id="get_service_accounts",
                   responses={200: OpenApiResponse(description="ServiceAccounts")})
    def get(self, request):
        return Response([service_account_data(a) for a in ServiceAccount.objects.all()])

    @extend_schema(tags=TAGS, operation_id="create_service_account", request=ServiceAccountCreationSerializer,
                   responses={201: OpenApiResponse(description="ServiceAccountPostResponse")})
    def post(self, request):
        serializer = ServiceAccountCreationSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        account, secret = sso_services.service_account_create(actor=request.user,
                                                              name=serializer.validated_data["name"])
        return Response({"id": str(account.id), "name": account.name, "clientId": account.client_id,
                         "clientSecret": secret}, status=status.HTTP_201_CREATED)


class ServiceAccountDetailView(APIView):
    permission_classes = [IsPlatformAdmin]

    @extend_schema(tags=TAGS, operation_id="get_service_account_by_id",
                   responses={200: OpenApiResponse(description="ServiceAccount")})
    def get(self, request, serviceAccountId: str):
        return Response(service_account_data(_account(serviceAccountId)))

    @extend_schema(tags=TAGS, operation_id="update_service_account_by_id", request=ServiceAccountPatchSerializer,
                   responses={200: OpenApiResponse(description="ServiceAccount")})
    def patch(self, request, serviceAccountId: str):
        account = _account(serviceAccountId)
        serializer = ServiceAccountPatchSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        account = sso_services.service_account_set_enabled(account, actor=request.user,
                                                           enabled=serializer.validated_data["enabled"])
        return Response(service_account_data(account))

    @extend_schema(tags=TAGS, operation_id="delete_service_account_by_id",
                   responses={204: OpenApiResponse(description="Deleted.")})
    def delete(self, request, serviceAccountId: str):
        sso_services.service_account_delete(_account(serviceAccountId), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ServiceAccountSecretView(APIView):
    permission_classes = [IsPlatformAdmin]

    @extend_schema(tags=TAGS, operation_id="regenerate_service_account_secret", request=None,
                   responses={200: OpenApiResponse(description="RegenerateServiceAccountSecretResponse")})
    def post(self, request, serviceAccountId: str):
        secret = sso_services.service_account_secret_regenerate(_account(serviceAccountId), actor=request.user)
        return Response({"clientSecret": secret})
