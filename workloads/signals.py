"""What the workloads app announces, for the apps to its right (which it never imports): they connect receivers
and enqueue work of their own (the notifications app tells the subscribers).

`phase_changed` is sent once the transaction that wrote the changes has committed (`announce`), by every path
that moves a workload's phase or its reason to wait: the sync's rounds (workloads.cluster.sync_writes), a push the
cluster refused for good (workloads.cluster.push), a suspend the platform decided (workloads.services). Its
keyword `changes` is a list of dicts, one per workload: `workload_id` (str), `phase` (the new actual phase, or
None when only the reason changed), `reason` (the type of the new pending reason, e.g. "OverQuota", "Preempted",
"Reclaimed", or the platform's reason of a suspend; None when none), `message`, `at` (a datetime)."""

from django.db import transaction
from django.dispatch import Signal

phase_changed = Signal()  # sender: Workload; keyword: changes


def announce(sender, changes: list[dict]) -> None:
    """Send `phase_changed` once the current transaction commits (at once outside one); nothing when no change."""
    if changes:
        transaction.on_commit(lambda: phase_changed.send(sender=sender, changes=changes))
