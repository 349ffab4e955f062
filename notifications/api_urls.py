"""/api/v1 routes of the notifications (config/urls.py includes them)."""

from django.urls import path

from notifications import api

urlpatterns = [
    path("notification-types", api.NotificationTypesView.as_view(), name="notification-types"),
    path("notification-state", api.NotificationStateView.as_view(), name="notification-state"),
    path("notification-channels", api.ChannelListView.as_view(), name="notification-channels"),
    path("notification-channels/slack/create-app", api.SlackAppView.as_view(), name="notification-slack-app"),
    path("notification-channels/<str:name>", api.ChannelDetailView.as_view(), name="notification-channel"),
    path("validate-notification-channel", api.ChannelValidateView.as_view(), name="notification-channel-validate"),
    path("subscriptions", api.SubscriptionListView.as_view(), name="subscriptions"),
    path("subscriptions/<str:id>", api.SubscriptionDetailView.as_view(), name="subscription"),
    path("notifications", api.NotificationListView.as_view(), name="notifications"),
    path("notifications/count", api.NotificationCountView.as_view(), name="notifications-count"),
    path("notifications/<str:id>", api.NotificationDetailView.as_view(), name="notification"),
]
