"""A pass that sees many workloads finish tells the apps to its right in a few messages, not one per workload (a
send costs the cluster's watcher ~0.5 ms of CPU: 20,000 sends were ~10 s of a 10,000-failure burst), and every
workload is still told once: each subscriber is notified of each failure, and each finished workload's logs are
asked for."""

from django.utils import timezone

from notifications import tasks
from notifications.models import Notification
from tests.notifications.test_delivery import subscribe
from tests.workloads.cluster_support import make_workload
from workloads.apps import LOGS_CAPTURE_BATCH
from workloads.models import Workload
from workloads.signals import phase_changed


def _sent(monkeypatch) -> list[tuple[str, list]]:
    sent = []
    monkeypatch.setattr("studio.queue.app.send_task", lambda name, args: sent.append((name, args)))
    return sent


def _failed(ids) -> list[dict]:
    return [{"workload_id": wid, "phase": "Failed", "reason": None, "message": "BackoffLimitExceeded",
             "at": timezone.now()} for wid in ids]


def test_a_pass_of_250_failures_sends_13_log_captures_and_3_notification_batches(
        db, monkeypatch, django_capture_on_commit_callbacks):
    sent = _sent(monkeypatch)
    ids = [f"00000000-0000-0000-0000-{i:012d}" for i in range(250)]
    changes = _failed(ids) + [{"workload_id": "running", "phase": "Running", "reason": None, "message": "",
                               "at": timezone.now()}]
    with django_capture_on_commit_callbacks(execute=True):
        phase_changed.send(sender=Workload, changes=changes)

    captures = [args[0] for name, args in sent if name == "workloads.tasks.workloads_logs_capture"]
    assert len(captures) == 13 and max(map(len, captures)) == LOGS_CAPTURE_BATCH
    assert [pair for batch in captures for pair in batch] == [[wid, "Failed"] for wid in ids]
    told = [args[0] for name, args in sent if name == "notifications.tasks.workloads_changed"]
    assert [len(batch) for batch in told] == [100, 100, 50]
    assert [row[:3] for batch in told for row in batch] == [
        [wid, "Workload status change", "Failed"] for wid in ids]
    assert {name for name, _ in sent} == {"workloads.tasks.workloads_logs_capture",
                                          "notifications.tasks.workloads_changed"}


def test_a_batch_tells_each_subscriber_of_each_failure_once(org, monkeypatch, django_capture_on_commit_callbacks):
    subscribe(org.users.member, [])
    workloads = [make_workload(org.a, f"train-{i}") for i in range(3)]
    sent = _sent(monkeypatch)
    with django_capture_on_commit_callbacks(execute=True):
        phase_changed.send(sender=Workload, changes=_failed([str(w.pk) for w in workloads]))
    (batch,) = [args[0] for name, args in sent if name == "notifications.tasks.workloads_changed"]

    tasks.workloads_changed.apply(args=[batch]).get()
    tasks.workloads_changed.apply(args=[batch]).get()  # delivered twice by the broker: told once all the same

    told = Notification.objects.filter(user=org.users.member, type="Failed")
    assert sorted(n.workload_id for n in told) == sorted(w.pk for w in workloads)
