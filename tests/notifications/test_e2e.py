"""The issue's "must show": a workload that failed on a cluster, and the e-mail and the webhook real servers
received for it, through the whole path — the workloads API, a real Celery worker pushing to kubesim, sync rounds
(in this process) that see the pod crash and announce the failure, the worker running the notifications' tasks
(fan-out, then each delivery), an SMTP server and an HTTP receiver on loopback."""

import hashlib
import hmac
import json

import pytest
from django.utils import timezone

from notifications.models import Delivery, Notification
from tests.conftest import bearer_client
from tests.factories import UserFactory
from tests.notifications.test_api import PASSWORD, email_config
from tests.workloads.cluster_support import training_body, wait_for
from workloads import tasks as workload_tasks

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
SECRET_VALUE = "env-secret-value-7c1"
WEBHOOK_KEY = "webhook-hmac-key-0123456789"


def test_a_workload_that_fails_on_the_cluster_is_mailed_and_posted(worker, sim_org, smtp, receiver):
    root = bearer_client(UserFactory(username="root-e2e", platform_admin=True))
    for body in ({"type": "email", "name": "email", "config": email_config(smtp.port)},
                 {"type": "webhook", "name": "hook", "config": {"url": receiver.url + "/studio",
                                                                "secret": WEBHOOK_KEY}}):
        assert root.post("/api/v1/notification-channels", body, format="json").status_code == 200
    subscription = sim_org.api.post("/api/v1/subscriptions", {
        "events": [{"category": "Workload status change", "types": ["Failed"]}], "channels": ["email", "hook"],
        "scope": {"projectId": sim_org.project.pk}}, format="json")
    assert subscription.status_code == 200, subscription.content

    body = training_body(sim_org.project, "crashes", image="python:3.11-crashloop",
                         environmentVariables=[{"name": "API_KEY", "value": SECRET_VALUE}], backoffLimit=0)
    submitted = sim_org.api.post("/api/v1/workloads/trainings", body, format="json")
    assert submitted.status_code == 200, submitted.content
    workload_id = submitted.json()["workloadId"]

    def failed():
        workload_tasks.cluster_sync.apply(args=[str(sim_org.cluster.pk)])
        return sim_org.api.get(f"/api/v1/workloads/{workload_id}").json()["phase"] == "Failed"

    wait_for(failed, timeout=60, what="the training to fail")
    wait_for(lambda: smtp.messages and receiver.requests, timeout=60, what="the e-mail and the webhook")

    _, recipients, message = smtp.messages[0]
    assert set(recipients) == {sim_org.user.email, "ops@example.com"}
    assert "crashes" in message.get_content() and "Failed" in message["Subject"]
    request = receiver.requests[0]
    signed = hmac.new(WEBHOOK_KEY.encode(), request["headers"]["X-Studio-Timestamp"].encode() + b"." +
                      request["body"], hashlib.sha256).hexdigest()
    assert request["headers"]["X-Studio-Signature"] == f"sha256={signed}"
    payload = json.loads(request["body"])
    assert (payload["workload"]["id"], payload["type"]) == (workload_id, "Failed")
    for sent in (message.as_string(), request["body"].decode()):
        assert SECRET_VALUE not in sent and PASSWORD not in sent and WEBHOOK_KEY not in sent
    wait_for(lambda: Delivery.objects.filter(state="sent").count() == 2, what="both deliveries recorded sent")
    note = Notification.objects.get(user=sim_org.user)
    assert note.read_at is None and note.created_at <= timezone.now()
