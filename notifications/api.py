"""Run:ai latest's Notification Types, Notification State, NotificationChannels and Subscriptions tags, and PaaS
Studio's in-portal notifications (a user's own, read or unread).

Who: every signed-in user reads the types, the state and the channels' names and types (to subscribe), and
manages their own subscriptions and notifications (another user's are a 404); platform admins configure channels
and the state. A channel's secrets (an SMTP password, a Slack token or webhook URL, a webhook's key) are
write-only."""

import uuid

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from notifications import api_schemas as schemas
from notifications import selectors, senders, services
from notifications.catalogue import TYPES
from notifications.models import Channel, State
from notifications.serializers import (
    ChannelPatchSerializer,
    ChannelSerializer,
    ChannelValidateSerializer,
    NotificationPatchSerializer,
    SlackAppSerializer,
    StateSerializer,
    SubscriptionSerializer,
    channel_data,
    notification_data,
    state_data,
    subscription_data,
)
from studio.errors import ServiceUnavailable
from studio.iam.models import is_platform_admin
from studio.iam.permissions import IsPlatformAdmin
from studio.listing import DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET, int_query_param

CHANNEL_TAGS, SUBSCRIPTION_TAGS = ["NotificationChannels"], ["Subscriptions"]
OWN_TAGS = ["Notifications"]
SLACK_MANIFEST = {"display_information": {"name": "PaaS Studio"}, "features": {"bot_user": {
    "display_name": "PaaS Studio", "always_online": True}}, "oauth_config": {"scopes": {"bot": ["chat:write"]}}}


def _valid(serializer_class, data):
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def _admin_only(request) -> None:
    if not is_platform_admin(request.user):
        raise PermissionDenied("Only platform admins may do this.")


class NotificationTypesView(APIView):
    @extend_schema(tags=["Notification Types"], operation_id="get_notification_types",
                   responses={200: schemas.NOTIFICATION_TYPES})
    def get(self, request):
        return Response([{"category": c, "type": t, "description": d} for c, t, d in TYPES])


class NotificationStateView(APIView):
    @extend_schema(tags=["Notification State"], operation_id="get_notification_state", responses={200: schemas.STATE})
    def get(self, request):
        return Response(_state_answer(State.current()))

    @extend_schema(tags=["Notification State"], operation_id="update_notification_state", request=StateSerializer,
                   responses={200: schemas.STATE})
    def patch(self, request):
        _admin_only(request)
        data = _valid(StateSerializer, request.data)
        state = services.state_update(actor=request.user, email=data.get("email"), slack=data.get("slack"))
        return Response(_state_answer(state))


def _state_answer(state: State) -> dict:
    kinds = set(Channel.objects.values_list("type", flat=True))
    return state_data(state, enabled=any(services.type_enabled(state, kind) for kind in kinds))


def _channel(name: str) -> Channel:
    channel = Channel.objects.filter(name=name).first()
    if channel is None:
        raise Http404
    return channel


class ChannelListView(APIView):
    @extend_schema(tags=CHANNEL_TAGS, operation_id="get_notification_channels", responses={200: schemas.CHANNELS})
    def get(self, request):
        return Response([{"name": name, "type": kind} for name, kind in Channel.objects.values_list("name", "type")])

    @extend_schema(tags=CHANNEL_TAGS, operation_id="create_notification_channel_config", request=ChannelSerializer,
                   responses={200: OpenApiResponse(description="Created; GET it by its name.")})
    def post(self, request):
        _admin_only(request)
        data = _valid(ChannelSerializer, request.data)
        services.channel_create(actor=request.user, name=data.get("name") or data["type"], kind=data["type"],
                                config=data["config"])
        return Response(status=status.HTTP_200_OK)  # Run:ai's 200 has no body


class ChannelDetailView(APIView):
    permission_classes = [IsPlatformAdmin]

    @extend_schema(tags=CHANNEL_TAGS, operation_id="get_notification_channel_config", responses={200: schemas.CHANNEL})
    def get(self, request, name: str):
        return Response(channel_data(_channel(name)))

    @extend_schema(tags=CHANNEL_TAGS, operation_id="update_notification_channel_config", request=ChannelSerializer,
                   responses={200: OpenApiResponse(description="Updated.")})
    def put(self, request, name: str):
        channel = _channel(name)
        data = _valid(ChannelSerializer, request.data)
        if data.get("name") not in (None, channel.name):
            raise ValidationError({"name": ["A channel's name cannot change."]})
        services.channel_update(actor=request.user, channel=channel, kind=data["type"], config=data["config"],
                                merge=False)
        return Response(status=status.HTTP_200_OK)

    @extend_schema(tags=CHANNEL_TAGS, operation_id="patch_notification_channel_config",
                   request=ChannelPatchSerializer, responses={200: OpenApiResponse(description="Patched.")})
    def patch(self, request, name: str):
        channel = _channel(name)
        data = _valid(ChannelPatchSerializer, request.data)
        services.channel_update(actor=request.user, channel=channel, kind=data.get("type"),
                                config=data.get("config"), merge=True)
        return Response(status=status.HTTP_200_OK)

    @extend_schema(tags=CHANNEL_TAGS, operation_id="delete_notification_channel_config",
                   responses={204: OpenApiResponse(description="Deleted.")})
    def delete(self, request, name: str):
        services.channel_delete(actor=request.user, channel=_channel(name))
        return Response(status=status.HTTP_204_NO_CONTENT)


class ChannelValidateView(APIView):
    permission_classes = [IsPlatformAdmin]

    @extend_schema(tags=CHANNEL_TAGS, operation_id="validate_notification_channel",
                   request=ChannelValidateSerializer, responses={200: schemas.VALID})
    def post(self, request):
        data = _valid(ChannelValidateSerializer, request.data)
        return Response(services.channel_valid(kind=data["type"], config=data["config"]))


class SlackAppView(APIView):
    permission_classes = [IsPlatformAdmin]

    @extend_schema(tags=CHANNEL_TAGS, operation_id="create_slack_app", request=SlackAppSerializer,
                   responses={200: schemas.SLACK_APP})
    def post(self, request):
        data = _valid(SlackAppSerializer, request.data)
        try:
            url = senders.slack_app_create(data["accessToken"], SLACK_MANIFEST)
        except senders.Refused as exc:
            raise ValidationError({"accessToken": [str(exc)]}) from None
        except senders.Failed as exc:
            raise ServiceUnavailable(str(exc)) from None
        return Response({"slackAppUrl": url})


def _subscription(request, subscription_id: str):
    try:
        key = uuid.UUID(str(subscription_id))
    except ValueError:
        raise Http404 from None
    subscription = selectors.subscriptions_of(request.user).filter(pk=key).first()
    if subscription is None:
        raise Http404
    return subscription


def _subscription_fields(data: dict) -> dict:
    return {"events": [dict(e) for e in data["events"]], "channels": data["channels"],
            "scope": dict(data["scope"]) if data.get("scope") else None,
            "pending_minutes": data.get("pendingMinutes")}


class SubscriptionListView(APIView):
    @extend_schema(tags=SUBSCRIPTION_TAGS, operation_id="get_my_subscriptions", responses={200: schemas.SUBSCRIPTIONS})
    def get(self, request):
        return Response([subscription_data(s) for s in selectors.subscriptions_of(request.user)])

    @extend_schema(tags=SUBSCRIPTION_TAGS, operation_id="create_subscription", request=SubscriptionSerializer,
                   responses={200: schemas.SUBSCRIPTION})
    def post(self, request):
        data = _valid(SubscriptionSerializer, request.data)
        subscription = services.subscription_create(user=request.user, **_subscription_fields(data))
        return Response(subscription_data(subscription))


class SubscriptionDetailView(APIView):
    @extend_schema(tags=SUBSCRIPTION_TAGS, operation_id="update_subscription", request=SubscriptionSerializer,
                   responses={200: schemas.SUBSCRIPTION})
    def put(self, request, id: str):
        subscription = _subscription(request, id)
        data = _valid(SubscriptionSerializer, request.data)
        subscription = services.subscription_update(user=request.user, subscription=subscription,
                                                    **_subscription_fields(data))
        return Response(subscription_data(subscription))

    @extend_schema(tags=SUBSCRIPTION_TAGS, operation_id="delete_subscription",
                   responses={204: OpenApiResponse(description="Deleted.")})
    def delete(self, request, id: str):
        services.subscription_delete(user=request.user, subscription=_subscription(request, id))
        return Response(status=status.HTTP_204_NO_CONTENT)


UNREAD = OpenApiParameter("unread", bool, required=False, description="Only unread (true) or read (false) ones.")


def _unread(request):
    raw = request.query_params.get("unread")
    if raw in (None, ""):
        return None
    if raw.lower() not in ("true", "false"):
        raise ValidationError({"unread": ["Must be true or false."]})
    return raw.lower() == "true"


class NotificationListView(APIView):
    @extend_schema(tags=OWN_TAGS, operation_id="get_my_notifications", parameters=[
        UNREAD, OpenApiParameter("offset", int, required=False),
        OpenApiParameter("limit", int, required=False)], responses={200: schemas.NOTIFICATIONS})
    def get(self, request):
        offset = int_query_param(request, "offset", 0, 0, MAX_OFFSET)
        limit = int_query_param(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
        rows = list(selectors.notifications_of(request.user, unread=_unread(request))[offset:offset + limit + 1])
        return Response({"notifications": [notification_data(n) for n in rows[:limit]],
                         "next": offset + limit if len(rows) > limit else None})


class NotificationCountView(APIView):
    @extend_schema(tags=OWN_TAGS, operation_id="count_my_notifications", parameters=[UNREAD],
                   responses={200: schemas.COUNT})
    def get(self, request):
        return Response({"count": selectors.notifications_of(request.user, unread=_unread(request)).count()})


class NotificationDetailView(APIView):
    @extend_schema(tags=OWN_TAGS, operation_id="update_my_notification", request=NotificationPatchSerializer,
                   responses={200: schemas.NOTIFICATION})
    def patch(self, request, id: str):
        try:
            key = uuid.UUID(str(id))
        except ValueError:
            raise Http404 from None
        notification = selectors.notifications_of(request.user).filter(pk=key).first()
        if notification is None:
            raise Http404
        data = _valid(NotificationPatchSerializer, request.data)
        return Response(notification_data(services.notification_mark(notification=notification, read=data["read"])))
