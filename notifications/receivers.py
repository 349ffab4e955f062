"""Receivers of what the lower apps announce: each picks the changes that are notification types (pure,
notifications.catalogue) and enqueues a task (by name, as services do: studio.queue); the work is the task's.
They run after the announcer's commit, so the task is sent at once; a broker that cannot be reached is logged and
does not fail the announcer (a sync round, a suspend)."""

from notifications import catalogue
from studio.queue import enqueue_on_commit

# Changes a message: a send costs the sender (the cluster's watcher, in a pass) ~0.5 ms of CPU; a pass that sees
# 10,000 workloads fail sends 100 messages, not 10,000.
WORKLOAD_CHANGES_BATCH = 100


def workload_phase_changed(sender, changes: list[dict], **kwargs):
    found = [[change["workload_id"], category, type_, change.get("message") or "", change["at"].isoformat()]
             for change in changes for category, type_ in catalogue.workload_types(change)]
    for start in range(0, len(found), WORKLOAD_CHANGES_BATCH):
        enqueue_on_commit("notifications.tasks.workloads_changed", found[start:start + WORKLOAD_CHANGES_BATCH])


def stream_ended(sender, session_id: str, idle: bool, message: str, **kwargs):
    enqueue_on_commit("notifications.tasks.stream_ended", session_id, idle, message)
