"""Reads of the notifications app: a user's own subscriptions and notifications (authorization is the owner)."""

from notifications.models import Notification, Subscription


def subscriptions_of(user):
    return Subscription.objects.filter(user=user) if user.is_authenticated else Subscription.objects.none()


def notifications_of(user, *, unread: bool | None = None):
    rows = Notification.objects.filter(user=user) if user.is_authenticated else Notification.objects.none()
    if unread is not None:
        rows = rows.filter(read_at__isnull=unread)
    return rows
