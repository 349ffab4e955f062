"""The notification pages over HTTP: the bell (count, menu, mark read; each user's own only), the notifications
page, subscriptions (with the API's rules and errors) and, for platform admins only, the channels."""

import json
import re

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from notifications.models import Channel, Notification, Subscription
from tests.factories import NotificationFactory

pytestmark = pytest.mark.django_db


def client_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_every_page_loads_the_bell(org):
    html = client_of(org.users.member).get(reverse("home")).content.decode()
    assert f'hx-get="{reverse("notification-bell")}" hx-trigger="load"' in html


def test_the_bell_counts_and_lists_the_users_unread_only(org, django_assert_max_num_queries):
    bob = org.users.member
    for n in range(12):
        NotificationFactory(user=bob, title=f"Workload w{n} failed")
    NotificationFactory(user=bob, title="Old news", read_at=timezone.now())
    NotificationFactory(user=org.users.other, title="Not for bob")
    client = client_of(bob)
    bell = client.get(reverse("notification-bell")).content.decode()
    assert 'data-testid="bell-count">12<' in bell and ", 12 unread" in bell
    with django_assert_max_num_queries(6):
        menu = client.get(reverse("notification-bell"), {"part": "menu"}).content.decode()
    assert menu.count('class="dropdown-item-text d-flex') == 8 and "the 8 newest of 12" in menu
    assert "Old news" not in menu and "Not for bob" not in menu
    count = client.get(reverse("notification-bell"), {"part": "count"}).content.decode()
    assert 'data-count="12"' in count and 'hx-trigger="every 15s"' in count


def test_marking_read_from_the_bell_and_the_page(org):
    bob = org.users.member
    first = NotificationFactory(user=bob, title="First")
    NotificationFactory(user=bob, title="Second")
    theirs = NotificationFactory(user=org.users.other, title="Theirs")
    client = client_of(bob)
    menu = client.post(reverse("notification-read", args=[first.pk]), HTTP_HX_REQUEST="true").content.decode()
    assert 'hx-swap-oob="true"' in menu and 'data-count="1"' in menu and ">First<" not in menu
    first.refresh_from_db()
    assert first.read_at is not None
    # another user's notification is not found
    assert client.post(reverse("notification-read", args=[theirs.pk])).status_code == 404
    theirs.refresh_from_db()
    assert theirs.read_at is None
    assert client.get(reverse("notification-read", args=[first.pk])).status_code == 405
    response = client.post(reverse("notifications-read-all"))
    assert response.status_code == 302
    assert not Notification.objects.filter(user=bob, read_at__isnull=True).exists()
    assert Notification.objects.filter(user=org.users.other, read_at__isnull=True).count() == 1
    page = client.get(reverse("notifications")).content.decode()
    assert 'data-notification="First" data-read="true"' in page and "Theirs" not in page


def test_subscribing_with_the_apis_rules(org):
    Channel.objects.create(name="ops-hook", type="webhook", config={"url": "https://hooks.example.com/x"})
    client = client_of(org.users.member)
    response = client.post(reverse("notifications"), {
        "form": "subscription", "events": ["Workload status change|Failed", "Quota|QuotaReached"],
        "channels": ["ops-hook"], "scope": f"project:{org.a.pk}", "pending_minutes": "30"})
    assert response.status_code == 302
    subscription = Subscription.objects.get(user=org.users.member)
    assert subscription.events == [{"category": "Workload status change", "types": ["Failed"]},
                                   {"category": "Quota", "types": ["QuotaReached"]}]
    assert subscription.channels == ["ops-hook"] and subscription.project == org.a
    assert subscription.pending_minutes == 30
    html = client.get(reverse("notifications")).content.decode()
    assert "Project alpha" in html and "through ops-hook and the portal" in html
    # each problem named: no event, a project the user may not see, a channel that does not exist, bad minutes
    response = client.post(reverse("notifications"), {"form": "subscription", "pending_minutes": "soon"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "Choose at least one event." in html and "Minutes pending: a whole number" in html
    response = client.post(reverse("notifications"), {
        "form": "subscription", "events": ["Workload status change|Failed"], "channels": ["nope"],
        "scope": f"project:{org.b.pk}"})
    html = response.content.decode()
    assert response.status_code == 400
    assert "No project you may see has this id." in html and "No notification channel is named" in html
    assert Subscription.objects.count() == 1
    # deleting one's own; another's is not found
    other = client_of(org.users.other)
    assert other.post(reverse("notification-subscription-delete", args=[subscription.pk])).status_code == 404
    assert client.post(reverse("notification-subscription-delete", args=[subscription.pk])).status_code == 302
    assert not Subscription.objects.exists()


def test_channels_are_for_platform_admins_and_keep_their_secrets(org):
    member = client_of(org.users.member)
    assert "Add a channel" not in member.get(reverse("notifications")).content.decode()
    response = member.post(reverse("notifications"), {"form": "channel", "name": "x", "type": "webhook",
                                                      "config": '{"url": "https://hooks.example.com/x"}'})
    assert response.status_code == 403 and not Channel.objects.exists()
    admin = client_of(org.users.platform_admin)
    secret = "a-webhook-secret-0123456789"
    response = admin.post(reverse("notifications"), {
        "form": "channel", "name": "ops-hook", "type": "webhook",
        "config": json.dumps({"url": "https://hooks.example.com/x", "secret": secret})})
    assert response.status_code == 302, response.content.decode()[:2000]
    channel = Channel.objects.get(name="ops-hook")
    assert channel.type == "webhook" and secret not in str(channel.config)
    page = admin.get(reverse("notifications")).content.decode()
    assert "ops-hook" in page and secret not in page
    # bad input: each problem named; a refused address is refused as the API refuses it
    response = admin.post(reverse("notifications"), {"form": "channel", "name": "", "type": "fax", "config": "[1"})
    html = response.content.decode()
    assert response.status_code == 400
    assert "A channel needs a name." in html and "Type: one of" in html and "is a JSON object" in html
    response = admin.post(reverse("notifications"), {"form": "channel", "name": "local", "type": "webhook",
                                                     "config": json.dumps({"url": "http://169.254.169.254/x",
                                                                           "secret": secret})})
    assert response.status_code == 400 and re.search(r"<code>config\.url</code>", response.content.decode())
    assert member.post(reverse("notification-channel-delete", args=["ops-hook"])).status_code == 403
    assert admin.post(reverse("notification-channel-delete", args=["ops-hook"])).status_code == 302
    assert not Channel.objects.exists()


def test_the_notifications_page_reads_a_fixed_number_of_queries(org, django_assert_max_num_queries):
    from notifications import services

    Channel.objects.create(name="ops-hook", type="webhook", config={"url": "https://hooks.example.com/x"})
    client = client_of(org.users.member)
    counts = []
    for _round in range(2):
        for i in range(5):
            NotificationFactory(user=org.users.member)
            services.subscription_create(user=org.users.member, channels=["ops-hook"],
                                         events=[{"category": "Quota", "types": ["QuotaReached"]}],
                                         scope={"projectId": org.a.pk} if i % 2 else None)
        with django_assert_max_num_queries(16) as captured:
            assert client.get(reverse("notifications")).status_code == 200
        counts.append(len(captured))
    assert counts[0] == counts[1]


def test_no_bell_on_the_password_page_a_temporary_password_keeps_the_user_on(org):
    """With a temporary password every other page (the bell's too) answers with the password page: a bell there
    would send the browser round in circles."""
    admin = client_of(org.users.platform_admin)
    admin.post(reverse("portal-user", args=[org.users.member.pk]), {"action": "reset-password"})
    org.users.member.refresh_from_db()  # its new password: the session is made for it
    bob = client_of(org.users.member)
    session = bob.session
    from studio.iam.passwords import SESSION_KEY

    session[SESSION_KEY] = True
    session.save()
    page = bob.get(reverse("account-password"))
    assert page.status_code == 200 and b'data-testid="temporary-password"' in page.content
    assert reverse("notification-bell").encode() not in page.content
    bell = bob.get(reverse("notification-bell"), HTTP_HX_REQUEST="true")
    assert bell["HX-Redirect"] == reverse("account-password")
    assert reverse("notification-bell").encode() in client_of(org.users.other).get(
        reverse("account-password")).content


def test_platform_admins_switch_channel_types(org):
    from notifications.models import State

    admin = client_of(org.users.platform_admin)
    assert 'name="email_enabled" checked' in admin.get(reverse("notifications")).content.decode()  # never set: on
    assert admin.post(reverse("notifications"), {"form": "state", "slack_enabled": "on"}).status_code == 302
    state = State.current()
    assert state.email_enabled is False and state.slack_enabled is True
    html = admin.get(reverse("notifications")).content.decode()
    assert 'name="email_enabled">' in html and 'name="slack_enabled" checked' in html
    member = client_of(org.users.member)
    assert 'data-testid="state-form"' not in member.get(reverse("notifications")).content.decode()
    assert member.post(reverse("notifications"), {"form": "state"}).status_code == 403
    state.refresh_from_db()
    assert state.slack_enabled is True
