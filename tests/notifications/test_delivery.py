"""Deliveries to real servers on loopback, run as the worker runs them (the tasks, applied in this process): an
e-mail to an SMTP server that checks the login, a webhook whose HMAC signature the receiver recomputes, Slack's
incoming webhook and its Web API; retries with backoff while the receiver fails, a refusal when the address is
no longer allowed; and never a secret of the workload or of the channel in what is sent."""

import hashlib
import hmac
import json
from datetime import timedelta

import pytest
from django.utils import timezone

from kit.models import StreamSession
from notifications import events, services, tasks
from notifications.models import Channel, Delivery, Notification
from tests.conftest import bearer_client
from tests.notifications.test_api import PASSWORD, email_config
from tests.workloads.cluster_support import make_workload
from workloads.cluster import push

SECRET_VALUE = "env-secret-value-7c1"  # a workload's environment value: never sent
WEBHOOK_KEY = "webhook-hmac-key-0123456789"
SLACK_TOKEN = "xoxb-slack-token-5e3"


@pytest.fixture
def failing(org):
    """A training of alpha with an environment value, and bob subscribed to its failure."""
    return make_workload(org.a, "train-fail", environmentVariables=[{"name": "API_KEY", "value": SECRET_VALUE}])


def channel(admin, kind: str, name: str, config: dict) -> Channel:
    response = bearer_client(admin).post("/api/v1/notification-channels", {"type": kind, "name": name,
                                                                           "config": config}, format="json")
    assert response.status_code == 200, response.content
    return Channel.objects.get(name=name)


def subscribe(user, channels: list, *, category="Workload status change", types=("Failed",), **extra) -> None:
    response = bearer_client(user).post("/api/v1/subscriptions", {
        "events": [{"category": category, "types": list(types)}], "channels": channels, **extra}, format="json")
    assert response.status_code == 200, response.content


def fail(workload) -> list[Delivery]:
    """The workload fails as a refused push fails it; the task the announcement enqueues runs; its deliveries."""
    push.workload_fail(workload.pk, "BackoffLimitExceeded: Job has reached the specified backoff limit")
    workload.refresh_from_db()
    tasks.workload_changed.apply(args=[str(workload.pk), "Workload status change", "Failed",
                                       workload.phase_message, workload.phase_updated_at.isoformat()]).get()
    return list(Delivery.objects.filter(notification__workload=workload).select_related("channel"))


def send(deliveries) -> None:
    for delivery in deliveries:
        tasks.deliver.apply(args=[delivery.pk])


def test_a_failed_workload_is_mailed_through_a_real_smtp_server(org, failing, smtp):
    channel(org.users.platform_admin, "email", "email", email_config(smtp.port))
    subscribe(org.users.member, ["email"])
    deliveries = fail(failing)
    send(deliveries)
    assert [d.state for d in Delivery.objects.all()] == ["sent"]
    sender, recipients, message = smtp.messages[0]
    assert sender == "studio@example.com"
    assert sorted(recipients) == ["bob@example.com", "ops@example.com"]
    assert message["Subject"] == "PaaS Studio notification - Workload status change Failed"
    body = message.get_content()
    assert "train-fail" in body and "alpha" in body and "BackoffLimitExceeded" in body
    assert SECRET_VALUE not in message.as_string() and PASSWORD not in message.as_string()
    assert smtp.logins == [("LOGIN", "mailer")] or smtp.logins == [("PLAIN", "mailer")]
    # once per failure: the same announcement again tells nobody twice
    assert fail(failing) == deliveries and len(smtp.messages) == 1


def test_a_webhook_is_signed_with_hmac_and_carries_no_secret(org, failing, receiver):
    channel(org.users.platform_admin, "webhook", "hook", {"url": receiver.url + "/studio", "secret": WEBHOOK_KEY})
    subscribe(org.users.member, ["hook"])
    send(fail(failing))
    request = receiver.requests[0]
    headers, body = request["headers"], request["body"]
    expected = hmac.new(WEBHOOK_KEY.encode(), headers["X-Studio-Timestamp"].encode() + b"." + body,
                        hashlib.sha256).hexdigest()
    assert headers["X-Studio-Signature"] == f"sha256={expected}"
    payload = json.loads(body)
    assert payload["type"] == "Failed" and payload["workload"]["name"] == "train-fail"
    assert payload["workload"]["projectName"] == "alpha" and payload["workload"]["phase"] == "Failed"
    assert SECRET_VALUE.encode() not in body and WEBHOOK_KEY.encode() not in body


def test_a_failing_receiver_is_retried_with_backoff_until_it_takes_it(org, failing, receiver):
    channel(org.users.platform_admin, "webhook", "hook", {"url": receiver.url + "/studio", "secret": WEBHOOK_KEY})
    subscribe(org.users.member, ["hook"])
    receiver.statuses.extend([503, 502])
    assert tasks.deliver.retry_backoff and tasks.deliver.retry_jitter and tasks.deliver.max_retries >= 2
    send(fail(failing))
    delivery = Delivery.objects.get()
    assert (delivery.state, delivery.attempts, delivery.error) == ("sent", 3, "")
    assert len(receiver.requests) == 3


def test_a_receiver_that_keeps_failing_fails_the_delivery_after_the_last_retry(org, failing, receiver, settings):
    channel(org.users.platform_admin, "webhook", "hook", {"url": receiver.url + "/studio", "secret": WEBHOOK_KEY})
    subscribe(org.users.member, ["hook"])
    receiver.statuses.extend([500] * (tasks.deliver.max_retries + 1))
    send(fail(failing))
    delivery = Delivery.objects.get()
    assert (delivery.state, delivery.attempts) == ("failed", tasks.deliver.max_retries + 1)
    assert delivery.error == "config.url: answered HTTP 500."


def test_an_address_refused_since_it_was_saved_is_refused_when_sent(org, failing, receiver, settings):
    channel(org.users.platform_admin, "webhook", "hook", {"url": receiver.url + "/studio", "secret": WEBHOOK_KEY})
    subscribe(org.users.member, ["hook"])
    settings.CLUSTER_ALLOWED_NETWORKS = ["10.0.0.0/8"]  # loopback no longer allowed
    send(fail(failing))
    delivery = Delivery.objects.get()
    assert (delivery.state, delivery.attempts) == ("failed", 1)
    assert "loopback" in delivery.error and receiver.requests == []


def test_slack_through_its_web_api_and_through_an_incoming_webhook(org, failing, receiver, settings):
    settings.NOTIFICATIONS_SLACK_API_URL = receiver.url + "/api"
    channel(org.users.platform_admin, "slack", "slack", {"apiToken": SLACK_TOKEN, "recipients": ["#gpu-ops"]})
    channel(org.users.platform_admin, "slack", "slack-hook", {"webhookUrl": receiver.url + "/services/T/B/x"})
    subscribe(org.users.member, ["slack", "slack-hook"])
    send(fail(failing))
    assert sorted(d.state for d in Delivery.objects.all()) == ["sent", "sent"]
    by_path = {r["path"]: r for r in receiver.requests}
    api = by_path["/api/chat.postMessage"]
    assert api["headers"]["Authorization"] == f"Bearer {SLACK_TOKEN}"
    posted = json.loads(api["body"])
    assert posted["channel"] == "#gpu-ops" and "train-fail" in posted["text"]
    hook = json.loads(by_path["/services/T/B/x"]["body"])
    assert "train-fail" in hook["text"]
    for request in receiver.requests:
        assert SECRET_VALUE.encode() not in request["body"] and SLACK_TOKEN.encode() not in request["body"]


def test_slack_direct_notifications_reach_the_subscriber_found_by_email(org, failing, receiver, settings):
    settings.NOTIFICATIONS_SLACK_API_URL = receiver.url + "/api"
    receiver.answers["/api/users.lookupByEmail"] = {"ok": True, "user": {"id": "U0BOB"}}
    channel(org.users.platform_admin, "slack", "slack", {"apiToken": SLACK_TOKEN, "recipients": ["#gpu-ops"],
                                                         "directNotifications": True})
    channel(org.users.platform_admin, "slack", "slack-quiet", {"apiToken": SLACK_TOKEN, "recipients": ["#quiet"],
                                                               "directNotifications": False})
    subscribe(org.users.member, ["slack", "slack-quiet"])
    send(fail(failing))
    assert sorted(d.state for d in Delivery.objects.all()) == ["sent", "sent"]
    lookups = [json.loads(r["body"]) for r in receiver.requests if r["path"] == "/api/users.lookupByEmail"]
    assert lookups == [{"email": org.users.member.email}]  # the quiet channel asks for no one
    posted = [json.loads(r["body"]) for r in receiver.requests if r["path"] == "/api/chat.postMessage"]
    assert sorted(p["channel"] for p in posted) == ["#gpu-ops", "#quiet", "U0BOB"]
    assert all("train-fail" in p["text"] for p in posted)


def test_a_subscriber_missing_from_the_slack_workspace_still_gets_the_channel_message(org, failing, receiver,
                                                                                     settings):
    settings.NOTIFICATIONS_SLACK_API_URL = receiver.url + "/api"
    receiver.answers["/api/users.lookupByEmail"] = {"ok": False, "error": "users_not_found"}
    channel(org.users.platform_admin, "slack", "slack", {"apiToken": SLACK_TOKEN, "recipients": ["#gpu-ops"],
                                                         "directNotifications": True})
    subscribe(org.users.member, ["slack"])
    send(fail(failing))
    assert Delivery.objects.get().state == "sent"
    assert [json.loads(r["body"])["channel"] for r in receiver.requests if r["path"] == "/api/chat.postMessage"] == [
        "#gpu-ops"]


def test_only_subscribers_who_may_see_the_workload_and_whose_scope_holds_it_are_told(org, failing):
    subscribe(org.users.member, [])  # alpha's member: told
    subscribe(org.users.viewer, [], scope={"projectId": org.a.pk})  # scoped to alpha: told
    subscribe(org.users.admin, [], scope={"departmentId": org.department.pk})  # alpha's department: told
    subscribe(org.users.other, [])  # beta's member: may not see alpha's workload
    subscribe(org.users.platform_admin, [], types=("Completed",))  # another type
    fail(failing)
    told = set(Notification.objects.values_list("user__username", flat=True))
    assert told == {"bob", "carol", "alice"}
    assert Notification.objects.filter(read_at__isnull=True).count() == 3


def test_a_switched_off_channel_type_sends_nothing(org, failing, smtp):
    channel(org.users.platform_admin, "email", "email", email_config(smtp.port))
    subscribe(org.users.member, ["email"])
    bearer_client(org.users.platform_admin).patch("/api/v1/notification-state", {"email": {"enabled": False}},
                                                  format="json")
    assert fail(failing) == [] and Notification.objects.count() == 1  # still in the portal


def test_pending_too_long_is_told_once_per_wait(org):
    waiting = make_workload(org.a, "waits")
    waiting.actual_phase, waiting.phase_updated_at = "Pending", timezone.now() - timedelta(minutes=20)
    waiting.save()
    subscribe(org.users.member, [], types=("PendingTooLong",), pendingMinutes=15)
    subscribe(org.users.admin, [], types=("PendingTooLong",))  # the default: 30 minutes
    assert events.pending_scan() == 1
    assert events.pending_scan() == 0
    assert list(Notification.objects.values_list("user__username", "type")) == [("bob", "PendingTooLong")]


def test_a_quota_reached_and_a_preemption_are_told_from_the_waiting_reason(org):
    from notifications.catalogue import workload_types

    assert workload_types({"phase": None, "reason": "OverQuota"}) == [("Quota", "QuotaReached")]
    assert workload_types({"phase": "Pending", "reason": "Preempted"}) == [("Workload status change", "Preempted")]
    assert workload_types({"phase": "Stopping", "reason": "IdleGpuReclaimed"}) == [
        ("Workload status change", "Reclaimed")]
    assert workload_types({"phase": "Running", "reason": None}) == []
    workload = make_workload(org.a, "over")
    subscribe(org.users.member, [], category="Quota", types=("QuotaReached",))
    tasks.workload_changed.apply(args=[str(workload.pk), "Quota", "QuotaReached", "Over quota",
                                       timezone.now().isoformat()]).get()
    assert Notification.objects.get().title == "over: QuotaReached"


def test_an_idle_kit_stream_is_told(org):
    from tests.api.world import make_world

    world = make_world(org)
    subscribe(org.users.member, [], category="Kit stream", types=("IdleStopped",))
    session = StreamSession.objects.get(pk=world.stream.pk)
    tasks.stream_ended.apply(args=[str(session.pk), True, "Idle for 10 minutes."]).get()
    note = Notification.objects.get(type="IdleStopped")  # make_world has a notification of its own
    assert (note.type, note.message, note.details["stream"]["projectName"]) == ("IdleStopped",
                                                                                 "Idle for 10 minutes.", "alpha")


def test_the_services_never_copy_a_spec_into_a_notification(org, failing):
    details = services.workload_details(failing, category="c", type_="t", message="m", at=timezone.now())
    assert SECRET_VALUE not in json.dumps(details)
