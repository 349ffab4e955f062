"""Run:ai's Notification Types, Notification State, NotificationChannels and Subscriptions operations, and our
in-portal notifications, through the API: shapes (Run:ai's schemas), who may do what, every bad input a 400 naming
its fields, secrets write-only and encrypted at rest."""

import json

import pytest
from django.db import connection

from notifications.models import Notification
from studio.audit import AuditEvent
from tests.conftest import bearer_client
from tests.notifications.servers import free_port
from tests.runai_spec import assert_matches_spec

CHANNELS = "/api/v1/notification-channels"
PASSWORD = "smtp-pass-9f2"


def email_config(smtp_port: int = 2525, **extra) -> dict:
    return {"smtpHost": "127.0.0.1", "smtpPort": smtp_port, "from": "studio@example.com", "username": "mailer",
            "password": PASSWORD, "authType": "auth_login", "smtpTlsEnabled": False, "recipients": ["ops@example.com"],
            **extra}


@pytest.fixture
def admin(org):
    return bearer_client(org.users.platform_admin)


@pytest.fixture
def member(org):
    return bearer_client(org.users.member)


def test_the_types_are_runais_shape_for_any_signed_in_user(member, anon):
    response = member.get("/api/v1/notification-types")
    assert response.status_code == 200
    assert_matches_spec(response, "get", "/api/v1/notification-types")
    pairs = {(t["category"], t["type"]) for t in response.json()}
    assert {("Workload status change", "Failed"), ("Workload status change", "Preempted"),
            ("Workload status change", "PendingTooLong"), ("Quota", "QuotaReached"),
            ("Kit stream", "IdleStopped")} <= pairs
    assert anon.get("/api/v1/notification-types").status_code == 401


def test_an_email_channel_keeps_its_password_encrypted_and_never_answers_it(admin, member):
    created = admin.post(CHANNELS, {"type": "email", "config": email_config()}, format="json")
    assert created.status_code == 200, created.content
    assert_matches_spec(created, "post", CHANNELS)
    got = admin.get(f"{CHANNELS}/email")
    assert got.status_code == 200
    assert_matches_spec(got, "get", f"{CHANNELS}/{{name}}")
    assert got.json()["config"]["smtpHost"] == "127.0.0.1" and "password" not in got.json()["config"]
    listed = member.get(CHANNELS)
    assert listed.json() == [{"name": "email", "type": "email"}]
    assert_matches_spec(listed, "get", CHANNELS)
    with connection.cursor() as cursor:
        cursor.execute("SELECT config, secrets FROM notifications_channel")
        raw = " ".join(str(v) for v in cursor.fetchone())
    assert PASSWORD not in raw
    audit = json.dumps(list(AuditEvent.objects.filter(object_type="notifications.channel").values("changes")))
    assert PASSWORD not in audit and "***" in audit


def test_a_put_without_the_password_keeps_it_and_a_patch_merges(admin):
    admin.post(CHANNELS, {"type": "email", "name": "ops-mail", "config": email_config()}, format="json")
    config = {k: v for k, v in email_config(smtp_port=2526).items() if k != "password"}
    put = admin.put(f"{CHANNELS}/ops-mail", {"type": "email", "config": config}, format="json")
    assert put.status_code == 200, put.content
    patched = admin.patch(f"{CHANNELS}/ops-mail", {"config": {"subject": "{{ .reason }} happened"}}, format="json")
    assert patched.status_code == 200, patched.content
    from notifications.models import Channel
    from notifications.services import channel_secrets

    channel = Channel.objects.get(name="ops-mail")
    assert channel.config["smtpPort"] == 2526 and channel.config["subject"] == "{{ .reason }} happened"
    assert channel_secrets(channel) == {"password": PASSWORD}


def test_bad_channels_are_400s_naming_every_field(admin):
    response = admin.post(CHANNELS, {"type": "email", "config": {"smtpPort": 0, "recipients": ["nope"]}},
                          format="json")
    assert response.status_code == 400
    fields = {e["field"] for e in response.json()["errors"]}
    assert {"config.smtpHost", "config.from", "config.smtpPort", "config.recipients[0]"} <= fields, fields
    unknown = admin.post(CHANNELS, {"type": "carrier-pigeon", "config": {}, "colour": 1}, format="json")
    assert unknown.status_code == 400
    assert {e["field"] for e in unknown.json()["errors"]} >= {"type", "colour"}
    twice = [admin.post(CHANNELS, {"type": "webhook", "name": "hook", "config": {
        "url": "http://127.0.0.1:9/hook", "secret": "0123456789abcdef"}}, format="json") for _ in range(2)]
    assert [r.status_code for r in twice] == [200, 409]


@pytest.mark.parametrize(("kind", "config", "field"), [
    ("webhook", {"url": "http://169.254.169.254/latest/meta-data", "secret": "0123456789abcdef"}, "config.url"),
    ("slack", {"webhookUrl": "http://169.254.169.254/hooks/x"}, "config.webhookUrl"),
    ("email", {**email_config(), "smtpHost": "169.254.169.254"}, "config.smtpHost"),
])
def test_an_address_the_network_rules_refuse_is_a_400_when_saved(admin, kind, config, field):
    response = admin.post(CHANNELS, {"type": kind, "config": config}, format="json")
    assert response.status_code == 400, response.content
    assert [e["field"] for e in response.json()["errors"]] == [field]
    assert "link-local" in response.json()["errors"][0]["message"]


def test_only_platform_admins_configure_channels(admin, member):
    admin.post(CHANNELS, {"type": "email", "config": email_config()}, format="json")
    assert member.post(CHANNELS, {"type": "email", "name": "mine", "config": email_config()},
                       format="json").status_code == 403
    assert member.get(f"{CHANNELS}/email").status_code == 403
    assert member.delete(f"{CHANNELS}/email").status_code == 403
    assert admin.delete(f"{CHANNELS}/email").status_code == 204
    assert admin.get(f"{CHANNELS}/email").status_code == 404


def test_validate_logs_in_to_a_real_smtp_server(admin, smtp):
    good = admin.post("/api/v1/validate-notification-channel",
                      {"type": "email", "config": email_config(smtp.port)}, format="json")
    assert (good.status_code, good.json()) == (200, True)
    assert_matches_spec(good, "post", "/api/v1/validate-notification-channel")
    wrong = admin.post("/api/v1/validate-notification-channel",
                       {"type": "email", "config": email_config(smtp.port, password="wrong")}, format="json")
    down = admin.post("/api/v1/validate-notification-channel",
                      {"type": "email", "config": email_config(free_port())}, format="json")
    assert (wrong.json(), down.json()) == (False, False)
    assert smtp.logins and all(login == "mailer" for _, login in smtp.logins)


def test_creating_a_slack_app_asks_slacks_api(admin, receiver, settings):
    settings.NOTIFICATIONS_SLACK_API_URL = receiver.url + "/api"
    response = admin.post(f"{CHANNELS}/slack/create-app", {"accessToken": "xoxe-config-token"}, format="json")
    assert response.status_code == 200, response.content
    assert_matches_spec(response, "post", f"{CHANNELS}/slack/create-app")
    assert response.json() == {"slackAppUrl": "https://api.slack.com/apps/A0TEST"}
    call = receiver.requests[0]
    assert call["path"] == "/api/apps.manifest.create"
    assert call["headers"]["Authorization"] == "Bearer xoxe-config-token"
    receiver.statuses.append(400)
    refused = admin.post(f"{CHANNELS}/slack/create-app", {"accessToken": "bad"}, format="json")
    assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "accessToken"


def test_the_state_is_read_by_all_and_switched_by_platform_admins(admin, member):
    got = member.get("/api/v1/notification-state")
    assert got.status_code == 200 and got.json()["enabled"] is False  # no channel yet
    assert_matches_spec(got, "get", "/api/v1/notification-state")
    admin.post(CHANNELS, {"type": "email", "config": email_config()}, format="json")
    assert member.get("/api/v1/notification-state").json()["enabled"] is True
    body = {"enabled": True, "email": {"enabled": False}, "slack": {"enabled": True, "workspaceName": "lab"}}
    assert member.patch("/api/v1/notification-state", body, format="json").status_code == 403
    patched = admin.patch("/api/v1/notification-state", body, format="json")
    assert patched.status_code == 200
    assert_matches_spec(patched, "patch", "/api/v1/notification-state")
    assert patched.json() == {"enabled": False, "email": {"enabled": False},
                              "slack": {"enabled": True, "workspaceName": "lab"}}
    assert admin.patch("/api/v1/notification-state", {"email": {"enabled": "maybe"}},
                       format="json").status_code == 400


def _subscribe(client, **extra):
    body = {"events": [{"category": "Workload status change", "types": ["Failed", "Preempted"]}],
            "channels": ["email"], **extra}
    return client.post("/api/v1/subscriptions", body, format="json")


def test_subscriptions_are_each_users_own(admin, member, org):
    admin.post(CHANNELS, {"type": "email", "config": email_config()}, format="json")
    created = _subscribe(member, scope={"projectId": org.a.pk}, pendingMinutes=15)
    assert created.status_code == 200, created.content
    assert_matches_spec(created, "post", "/api/v1/subscriptions")
    sub = created.json()
    assert sub["scope"] == {"projectId": str(org.a.pk)} and sub["pendingMinutes"] == 15
    listed = member.get("/api/v1/subscriptions")
    assert_matches_spec(listed, "get", "/api/v1/subscriptions")
    assert [s["id"] for s in listed.json()] == [sub["id"]]
    other = bearer_client(org.users.other)
    assert other.get("/api/v1/subscriptions").json() == []
    body = {"events": [{"category": "Quota", "types": ["QuotaReached"]}], "channels": []}
    assert other.put(f"/api/v1/subscriptions/{sub['id']}", body, format="json").status_code == 404
    assert other.delete(f"/api/v1/subscriptions/{sub['id']}").status_code == 404
    put = member.put(f"/api/v1/subscriptions/{sub['id']}", body, format="json")
    assert put.status_code == 200
    assert_matches_spec(put, "put", "/api/v1/subscriptions/{id}")
    assert put.json()["events"] == body["events"] and put.json()["scope"] == {}
    assert member.delete(f"/api/v1/subscriptions/{sub['id']}").status_code == 204
    assert member.get("/api/v1/subscriptions").json() == []


def test_a_bad_subscription_names_each_problem(member, org):
    response = member.post("/api/v1/subscriptions", {
        "events": [{"category": "Weather", "types": ["Rain"]},
                   {"category": "Workload status change", "types": ["Failed", "Exploded"]}],
        "channels": ["nowhere"], "scope": {"projectId": org.b.pk}}, format="json")
    assert response.status_code == 400
    fields = {e["field"] for e in response.json()["errors"]}
    assert fields == {"events[0].category", "events[1].types[1]", "channels[0]", "scope.projectId"}, fields


def test_in_portal_notifications_are_read_and_unread_by_their_user(member, org):
    mine = [Notification.objects.create(user=org.users.member, key=f"k{i}", category="Quota", type="QuotaReached",
                                        title=f"t{i}") for i in range(3)]
    Notification.objects.create(user=org.users.other, key="k0", category="Quota", type="QuotaReached", title="x")
    assert member.get("/api/v1/notifications/count?unread=true").json() == {"count": 3}
    read = member.patch(f"/api/v1/notifications/{mine[0].pk}", {"read": True}, format="json")
    assert read.status_code == 200 and read.json()["read"] is True
    unread = member.get("/api/v1/notifications?unread=true&limit=1").json()
    assert len(unread["notifications"]) == 1 and unread["next"] == 1
    assert member.get("/api/v1/notifications/count?unread=true").json() == {"count": 2}
    assert member.get("/api/v1/notifications?unread=maybe").status_code == 400
    theirs = Notification.objects.get(user=org.users.other)
    assert member.patch(f"/api/v1/notifications/{theirs.pk}", {"read": True}, format="json").status_code == 404
