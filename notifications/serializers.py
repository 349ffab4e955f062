"""Input serializers of the notifications API (Run:ai's shapes, with PaaS Studio's additions noted) and the
answers' data."""

from rest_framework import serializers

from notifications.channel_config import SECRET_FIELDS, TOKEN, TOKEN_RULE
from notifications.models import Channel, Notification, State, Subscription
from studio.serializers import NameField, StrictSerializer

_time = serializers.DateTimeField().to_representation


class ChannelSerializer(StrictSerializer):
    """NotificationChannel (POST, PUT; `name` for POST, ours: Run:ai's create answers the name it chose).
    `config` is checked per type by notifications.channel_config."""

    name = NameField(required=False)
    type = serializers.ChoiceField(Channel.Type.choices)
    config = serializers.DictField()


class ChannelPatchSerializer(StrictSerializer):
    type = serializers.ChoiceField(Channel.Type.choices, required=False)
    config = serializers.DictField(required=False)


class ChannelValidateSerializer(StrictSerializer):
    type = serializers.ChoiceField(Channel.Type.choices)
    config = serializers.DictField()


class SlackAppSerializer(StrictSerializer):
    accessToken = serializers.RegexField(TOKEN, max_length=1000, error_messages=TOKEN_RULE)


class _SwitchSerializer(StrictSerializer):
    enabled = serializers.BooleanField(allow_null=True, required=False)


class _SlackSwitchSerializer(_SwitchSerializer):
    workspaceName = serializers.CharField(allow_null=True, required=False, max_length=200, allow_blank=True)


class StateSerializer(StrictSerializer):
    enabled = serializers.BooleanField(required=False, help_text="Read-only: whether any channel type sends.")
    email = _SwitchSerializer(required=False)
    slack = _SlackSwitchSerializer(required=False)


class EventSerializer(StrictSerializer):
    category = serializers.CharField(max_length=64)
    types = serializers.ListField(child=serializers.CharField(max_length=64), max_length=50)


class ScopeSerializer(StrictSerializer):
    projectId = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=2**63 - 1)
    departmentId = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=2**63 - 1)


class SubscriptionSerializer(StrictSerializer):
    """SubscriptionForPut; `id` is taken and ignored (Run:ai's Subscription carries it). PaaS Studio's additions:
    `scope` (a project or a department; none: every workload the user may see) and `pendingMinutes` (when a
    PendingTooLong is due)."""

    id = serializers.CharField(required=False, max_length=64)
    events = EventSerializer(many=True, max_length=50)
    channels = serializers.ListField(child=serializers.CharField(max_length=63), max_length=20)
    scope = ScopeSerializer(required=False, allow_null=True)
    pendingMinutes = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=60 * 24 * 30)


class NotificationPatchSerializer(StrictSerializer):
    read = serializers.BooleanField()


def channel_data(channel: Channel) -> dict:
    """NotificationChannelResponse: the configuration without its secrets (write-only)."""
    config = {k: v for k, v in channel.config.items() if k not in SECRET_FIELDS[channel.type]}
    return {"name": channel.name, "type": channel.type, "config": config}


def state_data(state: State, *, enabled: bool) -> dict:
    return {"enabled": enabled, "email": {"enabled": state.email_enabled},
            "slack": {"enabled": state.slack_enabled, "workspaceName": state.slack_workspace_name}}


def subscription_data(subscription: Subscription) -> dict:
    scope = {"projectId": subscription.project_id, "departmentId": subscription.department_id}
    return {"id": str(subscription.id), "events": subscription.events, "channels": subscription.channels,
            "scope": {k: str(v) for k, v in scope.items() if v is not None},
            "pendingMinutes": subscription.pending_minutes}


def notification_data(notification: Notification) -> dict:
    return {"id": str(notification.id), "category": notification.category, "type": notification.type,
            "title": notification.title, "message": notification.message,
            "workloadId": str(notification.workload_id) if notification.workload_id else None,
            "projectId": str(notification.project_id) if notification.project_id else None,
            "createdAt": _time(notification.created_at), "read": notification.read_at is not None,
            "readAt": _time(notification.read_at) if notification.read_at else None}
