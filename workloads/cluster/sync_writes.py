"""The database side of a sync round: collect what changed, then write it in one short transaction, in bulk.

Only rows whose phase, message or counters changed are written, and only the fields that changed; each
transition gets one event, pods are upserted, and the cluster's Warning events are recorded once each (by
uid). A row whose intent or phase changed while the round talked to the cluster (a suspend, a push that
failed) is left alone: the next round sees it fresh.
"""

import json
from collections import defaultdict
from datetime import datetime

from django.db import transaction
from django.db.models import Q
from django.utils.dateparse import parse_datetime

from studio.models import Cluster
from workloads.cluster import phases
from workloads.cluster.bulk_rows import insert_rows, pk_in, update_rows
from workloads.models import Pod, Workload, WorkloadEvent
from workloads.signals import announce

CHUNK = 2000  # rows per statement (ids bound as one array on PostgreSQL)
POD_COMPARED = ["name", "phase", "role", "node_name", "message", "created_at"]
POD_FIELDS = [*POD_COMPARED, "updated_at"]
WARNING_PHASES = {Workload.Phase.FAILED, Workload.Phase.DEGRADED, Workload.Phase.UNKNOWN}


def _chunks(items: list, size: int):
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _event_type(phase: str) -> str:
    return WorkloadEvent.Type.WARNING if phase in WARNING_PHASES else WorkloadEvent.Type.NORMAL


class Changes:
    def __init__(self, *, cluster: Cluster, now: datetime, whole: bool = True):
        """`whole`: the changes of every followed row of the cluster (a round), else of some (a watcher's pass)."""
        self.cluster, self.now, self.whole = cluster, now, whole
        self.deltas: dict = {}  # pk -> {field: new value}, the changed fields only
        self.read_as: dict = {}  # pk -> (desired, actual) when the round read the row
        self.transitions: list[dict] = []  # WorkloadEvent rows
        self.pods_now: dict = {}  # workload pk -> {uid: pod summary}
        self.warnings: dict = defaultdict(list)  # workload pk -> [v1 Event]
        self.kept: set = set()  # the rows save() wrote

    def phase(self, workload: Workload, phase: str, message: str, *, primary: dict | None, running: int,
              endpoints: dict) -> None:
        new = {"actual_phase": phase, "phase_message": message, "running_pods": running, "endpoints": endpoints}
        if phase != workload.actual_phase:
            new["phase_updated_at"] = self.now
            self.transitions.append({"workload_id": workload.pk, "at": self.now, "type": _event_type(phase),
                                     "reason": phase, "message": message, "phase": phase})
        if primary is not None and workload.submitted_at is None:
            new["submitted_at"] = self.now
        if phase == Workload.Phase.RUNNING and workload.started_at is None:
            new["started_at"] = self.now
        if phase in Workload.FINISHED and workload.completed_at is None:
            new["completed_at"] = self.now
        delta = {name: value for name, value in new.items() if getattr(workload, name) != value}
        if delta:
            self.deltas[workload.pk] = delta
            self.read_as[workload.pk] = (workload.desired_phase, workload.actual_phase)

    def waiting(self, pk, reason: dict | None, position: int | None, *, read_as: tuple[str, str]) -> None:
        """Why the workload waits and its place in its pool's queue (workloads.cluster.pending), which changed; written
        only while its row is still `read_as` (desired, actual)."""
        delta = self.deltas.setdefault(pk, {})
        delta.update({"pending_reason": reason, "queue_position": position})
        self.read_as.setdefault(pk, read_as)

    def pods(self, workload: Workload, pods: list[dict]) -> None:
        summaries = (phases.pod_summary(pod, now=self.now) for pod in pods)
        self.pods_now[workload.pk] = {s["id"]: s for s in summaries if s["id"]}

    def cluster_events(self, workload: Workload, events: list[dict]) -> None:
        if events:
            self.warnings[workload.pk].extend(events)

    def save(self) -> int:
        """Write everything in one transaction; the number of workload rows written."""
        with transaction.atomic():
            kept = self.kept = self._still_as_read()
            _update_grouped(kept, self.deltas)
            insert_rows(WorkloadEvent, [e for e in self.transitions if e["workload_id"] in kept])
            self._save_pods()
            self._save_warnings()
            announce(Workload, self._announced(kept))
        return len(kept)

    def _announced(self, kept: set) -> list[dict]:
        """The written phase and waiting-reason changes, as workloads.signals.phase_changed tells them."""
        changes = []
        for pk in kept:
            delta = self.deltas[pk]
            phase = delta.get("actual_phase") if "phase_updated_at" in delta else None
            reason = (delta.get("pending_reason") or {}).get("type") if "pending_reason" in delta else None
            if phase or reason:
                changes.append({"workload_id": str(pk), "phase": phase, "reason": reason,
                                "message": delta.get("phase_message", ""), "at": self.now})
        return changes

    def answers_written(self) -> dict:
        """pk -> (pending_reason, queue_position) of each row whose answer this save wrote."""
        return {pk: (self.deltas[pk]["pending_reason"], self.deltas[pk]["queue_position"])
                for pk in self.kept if "pending_reason" in self.deltas[pk]}

    def not_written(self) -> set:
        """Rows left alone because their intent or phase changed meanwhile: to be derived again."""
        return set(self.deltas) - self.kept

    def _still_as_read(self) -> set:
        current = {}
        for chunk in _chunks(list(self.deltas), CHUNK):
            rows = Workload.objects.select_for_update().filter(pk_in(Workload, chunk))
            current.update({pk: (desired, actual) for pk, desired, actual in
                            rows.values_list("pk", "desired_phase", "actual_phase")})
        return {pk for pk in self.deltas if current.get(pk) == self.read_as[pk]}

    def _save_pods(self) -> None:
        in_play = Q(workload__deleted_at__isnull=True) | ~Q(workload__actual_phase=Workload.Phase.DELETED)
        rows = Pod.objects.filter(workload__cluster=self.cluster).filter(in_play).values_list(
            "id", "workload_id", "uid", *POD_COMPARED)
        if self.whole:
            existing = list(rows)
        else:  # the pods of the workloads derived, not all the cluster's
            existing = [pod for chunk in _chunks(list(self.pods_now), CHUNK)
                        for pod in rows.filter(pk_in(Pod, chunk, field="workload_id"))]
        new, changed, gone, known = [], [], [], set()
        for pk, workload_id, uid, *stored in existing:
            current = self.pods_now.get(workload_id)
            if current is None:
                continue  # a workload this round did not follow
            summary = current.get(uid)
            if summary is None:
                gone.append(pk)
                continue
            known.add((workload_id, uid))
            values = _pod_values(summary)
            if list(values.values()) != stored:
                changed.append({"pk": pk, "updated_at": self.now, **values})
        for workload_id, summaries in self.pods_now.items():
            for uid, summary in summaries.items():
                if (workload_id, uid) not in known:
                    new.append({"workload_id": workload_id, "uid": uid, "updated_at": self.now,
                                **_pod_values(summary)})
        insert_rows(Pod, new, ignore_conflicts=True)
        update_rows(Pod, changed, POD_FIELDS)
        for chunk in _chunks(gone, CHUNK):
            Pod.objects.filter(pk_in(Pod, chunk)).delete()

    def _save_warnings(self) -> None:
        """Each Kubernetes Warning event once per workload, keyed by its uid."""
        if not self.warnings:
            return
        recorded = set()
        for chunk in _chunks(list(self.warnings), CHUNK):
            recorded.update(WorkloadEvent.objects.filter(pk_in(WorkloadEvent, chunk, field="workload_id"),
                                                         source="cluster").values_list("workload_id", "dedup_key"))
        new = []
        for workload_id, events in self.warnings.items():
            for event in events:
                key = str((event.get("metadata") or {}).get("uid") or "")[:128]
                if not key or (workload_id, key) in recorded:
                    continue
                recorded.add((workload_id, key))
                new.append({"workload_id": workload_id, "at": _event_time(event) or self.now,
                            "type": WorkloadEvent.Type.WARNING, "reason": str(event.get("reason") or "Warning")[:64],
                            "message": str(event.get("message") or ""), "source": "cluster", "dedup_key": key})
        insert_rows(WorkloadEvent, new, ignore_conflicts=True)


# A queued row's place differs from its neighbours' while the rest of its change (its reason, with the queue's
# length) is theirs: a watcher rewrote every place of a 4,000-row queue as it moved, each row with its own copy of
# the reason, quoted into the statement (a fifth of the watcher's CPU at 5,000, docs/performance.md).
PER_ROW = frozenset({"queue_position"})


def _update_grouped(pks: set, deltas: dict) -> None:
    """Rows that get the same new values (a pass stamps one `now`, and most rows share a phase and message)
    in one `UPDATE ... WHERE id IN (...)` per group; rows that share all but their place, with their places in
    one array (`update_rows`'s `same`); the odd ones out with `update_rows`, by the fields they change."""
    groups: dict = defaultdict(list)
    for pk in pks:
        delta = deltas[pk]
        shared = {k: v for k, v in delta.items() if k not in PER_ROW}
        groups[(tuple(sorted(delta)), json.dumps(shared, sort_keys=True, default=str))].append(pk)
    by_fields: dict = defaultdict(list)  # each row writes only the fields it changed
    for (names, _), members in groups.items():
        delta = deltas[members[0]]
        if len(members) == 1:
            by_fields[names].append({"pk": members[0], **delta})
            continue
        varying = [name for name in names if name in PER_ROW]
        if len({tuple(deltas[m][name] for name in varying) for m in members}) > 1:
            shared = {k: v for k, v in delta.items() if k not in PER_ROW}
            for chunk in _chunks(members, CHUNK):
                update_rows(Workload, [{"pk": m, **{name: deltas[m][name] for name in varying}} for m in chunk],
                            varying, same=shared)
            continue
        for chunk in _chunks(members, CHUNK):
            Workload.objects.filter(pk_in(Workload, chunk)).update(**delta)
    for names, rows in by_fields.items():
        update_rows(Workload, rows, list(names))


def _pod_values(summary: dict) -> dict:
    """A pod's row (POD_COMPARED, in order) from its summary (phases.pod_summary)."""
    return {"name": summary["name"], "phase": summary["phase"], "role": summary["role"],
            "node_name": summary["nodeName"] or "", "message": summary["message"],
            "created_at": parse_datetime(summary["createdAt"] or "")}


def _event_time(event: dict) -> datetime | None:
    for value in (event.get("lastTimestamp"), event.get("eventTime"), (event.get("metadata") or {}).get(
            "creationTimestamp")):
        moment = parse_datetime(value) if isinstance(value, str) else None
        if moment:
            return moment
    return None


def mark_unknown(cluster: Cluster, message: str, *, now: datetime) -> int:
    """Unfinished workloads of a cluster that stopped answering become Unknown, with one event each."""
    finished_or_known = [*Workload.FINISHED, Workload.Phase.UNKNOWN]
    rows = Workload.objects.select_for_update().filter(cluster=cluster, deleted_at__isnull=True).exclude(
        actual_phase__in=finished_or_known)
    ids = list(rows.values_list("pk", flat=True))
    for chunk in _chunks(ids, CHUNK):
        Workload.objects.filter(pk_in(Workload, chunk)).update(
            actual_phase=Workload.Phase.UNKNOWN, phase_message=message, phase_updated_at=now)
    insert_rows(WorkloadEvent, [{"workload_id": pk, "at": now, "type": WorkloadEvent.Type.WARNING,
                                 "reason": Workload.Phase.UNKNOWN, "message": message, "phase": Workload.Phase.UNKNOWN}
                                for pk in ids])
    return len(ids)
