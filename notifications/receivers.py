"""Receivers of what the lower apps announce: each picks the changes that are notification types (pure,
notifications.catalogue) and enqueues a task (by name, as services do: studio.queue); the work is the task's.
They run after the announcer's commit, so the task is sent at once; a broker that cannot be reached is logged and
does not fail the announcer (a sync round, a suspend)."""

from notifications import catalogue
from studio.queue import enqueue_on_commit


def workload_phase_changed(sender, changes: list[dict], **kwargs):
    for change in changes:
        for category, type_ in catalogue.workload_types(change):
            enqueue_on_commit("notifications.tasks.workload_changed", change["workload_id"], category, type_,
                              change.get("message") or "", change["at"].isoformat())


def stream_ended(sender, session_id: str, idle: bool, message: str, **kwargs):
    enqueue_on_commit("notifications.tasks.stream_ended", session_id, idle, message)
