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
from workloads.models import Pod, Workload, WorkloadEvent

BATCH = 500
SMALL_BATCH = 100  # bulk_update's CASE expressions slow down with the square of the batch on SQLite
POD_FIELDS = ["name", "phase", "role", "node_name", "message", "created_at", "updated_at"]
WARNING_PHASES = {Workload.Phase.FAILED, Workload.Phase.DEGRADED, Workload.Phase.UNKNOWN}


def _chunks(items: list, size: int = BATCH):
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _event_type(phase: str) -> str:
    return WorkloadEvent.Type.WARNING if phase in WARNING_PHASES else WorkloadEvent.Type.NORMAL


class Changes:
    def __init__(self, *, cluster: Cluster, now: datetime):
        self.cluster, self.now = cluster, now
        self.deltas: dict = {}  # pk -> {field: new value}, the changed fields only
        self.read_as: dict = {}  # pk -> (desired, actual) when the round read the row
        self.transitions: list[WorkloadEvent] = []
        self.pods_now: dict = {}  # workload pk -> {uid: pod summary}
        self.warnings: dict = defaultdict(list)  # workload pk -> [v1 Event]

    def phase(self, workload: Workload, phase: str, message: str, *, primary: dict | None, running: int,
              endpoints: dict) -> None:
        new = {"actual_phase": phase, "phase_message": message, "running_pods": running, "endpoints": endpoints}
        if phase != workload.actual_phase:
            new["phase_updated_at"] = self.now
            self.transitions.append(WorkloadEvent(
                workload_id=workload.pk, at=self.now, type=_event_type(phase), reason=phase, message=message,
                phase=phase,
            ))
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

    def waiting(self, workload: Workload, reason: dict | None, position: int | None) -> None:
        """Why the workload waits and its place in its pool's queue (workloads.cluster.pending), when they changed."""
        new = {name: value for name, value in (("pending_reason", reason), ("queue_position", position))
               if getattr(workload, name) != value}
        if new:
            self.deltas.setdefault(workload.pk, {}).update(new)
            self.read_as.setdefault(workload.pk, (workload.desired_phase, workload.actual_phase))

    def pods(self, workload: Workload, pods: list[dict]) -> None:
        summaries = (phases.pod_summary(pod, now=self.now) for pod in pods)
        self.pods_now[workload.pk] = {s["id"]: s for s in summaries if s["id"]}

    def cluster_events(self, workload: Workload, events: list[dict]) -> None:
        if events:
            self.warnings[workload.pk].extend(events)

    def save(self) -> int:
        """Write everything in one transaction; the number of workload rows written."""
        with transaction.atomic():
            kept = self._still_as_read()
            _update_grouped(kept, self.deltas)
            WorkloadEvent.objects.bulk_create([e for e in self.transitions if e.workload_id in kept],
                                              batch_size=BATCH)
            self._save_pods()
            self._save_warnings()
        return len(kept)

    def _still_as_read(self) -> set:
        current = {}
        for chunk in _chunks(list(self.deltas)):
            rows = Workload.objects.select_for_update().filter(pk__in=chunk)
            current.update({pk: (desired, actual) for pk, desired, actual in
                            rows.values_list("pk", "desired_phase", "actual_phase")})
        return {pk for pk in self.deltas if current.get(pk) == self.read_as[pk]}

    def _save_pods(self) -> None:
        in_play = Q(workload__deleted_at__isnull=True) | ~Q(workload__actual_phase=Workload.Phase.DELETED)
        existing = Pod.objects.filter(workload__cluster=self.cluster).filter(in_play).only(
            "id", "workload_id", "uid", *POD_FIELDS)
        new, changed, gone, known = [], [], [], set()
        for row in existing:
            current = self.pods_now.get(row.workload_id)
            if current is None:
                continue  # a workload this round did not follow
            summary = current.get(row.uid)
            if summary is None:
                gone.append(row.pk)
                continue
            known.add((row.workload_id, row.uid))
            if _apply_pod(row, summary, self.now):
                changed.append(row)
        for workload_id, summaries in self.pods_now.items():
            for uid, summary in summaries.items():
                if (workload_id, uid) not in known:
                    row = Pod(workload_id=workload_id, uid=uid)
                    _apply_pod(row, summary, self.now)
                    new.append(row)
        Pod.objects.bulk_create(new, batch_size=BATCH, ignore_conflicts=True)
        Pod.objects.bulk_update(changed, POD_FIELDS, batch_size=SMALL_BATCH)
        for chunk in _chunks(gone):
            Pod.objects.filter(pk__in=chunk).delete()

    def _save_warnings(self) -> None:
        """Each Kubernetes Warning event once per workload, keyed by its uid."""
        if not self.warnings:
            return
        recorded = set()
        for chunk in _chunks(list(self.warnings)):
            recorded.update(WorkloadEvent.objects.filter(workload_id__in=chunk, source="cluster")
                            .values_list("workload_id", "dedup_key"))
        new = []
        for workload_id, events in self.warnings.items():
            for event in events:
                key = str((event.get("metadata") or {}).get("uid") or "")[:128]
                if not key or (workload_id, key) in recorded:
                    continue
                recorded.add((workload_id, key))
                new.append(WorkloadEvent(
                    workload_id=workload_id, at=_event_time(event) or self.now, type=WorkloadEvent.Type.WARNING,
                    reason=str(event.get("reason") or "Warning")[:64], message=str(event.get("message") or ""),
                    source="cluster", dedup_key=key,
                ))
        WorkloadEvent.objects.bulk_create(new, batch_size=BATCH, ignore_conflicts=True)


def _update_grouped(pks: set, deltas: dict) -> None:
    """Rows that get the same new values (a round stamps one `now`, and most rows share a phase and message)
    in one `UPDATE ... WHERE id IN (...)` per group; the odd ones out in a batched bulk_update. Faster than one
    bulk_update of them all, whose CASE per field grows with the batch."""
    groups: dict = defaultdict(list)
    for pk in pks:
        groups[json.dumps(deltas[pk], sort_keys=True, default=str)].append(pk)
    singles = []
    for members in groups.values():
        delta = deltas[members[0]]
        if len(members) == 1:
            singles.append(Workload(pk=members[0], **delta))
            continue
        for chunk in _chunks(members):
            Workload.objects.filter(pk__in=chunk).update(**delta)
    by_fields: dict = defaultdict(list)  # each row writes only the fields it changed
    for row in singles:
        by_fields[tuple(sorted(deltas[row.pk]))].append(row)
    for names, rows in by_fields.items():
        Workload.objects.bulk_update(rows, list(names), batch_size=SMALL_BATCH)


def _apply_pod(row: Pod, summary: dict, now: datetime) -> bool:
    values = {"name": summary["name"], "phase": summary["phase"], "role": summary["role"],
              "node_name": summary["nodeName"] or "",
              "message": summary["message"], "created_at": parse_datetime(summary["createdAt"] or "")}
    if all(getattr(row, name) == value for name, value in values.items()):
        return False
    for name, value in values.items():
        setattr(row, name, value)
    row.updated_at = now
    return True


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
    for chunk in _chunks(ids):
        Workload.objects.filter(pk__in=chunk).update(
            actual_phase=Workload.Phase.UNKNOWN, phase_message=message, phase_updated_at=now)
    WorkloadEvent.objects.bulk_create([
        WorkloadEvent(workload_id=pk, at=now, type=WorkloadEvent.Type.WARNING, reason=Workload.Phase.UNKNOWN,
                      message=message, phase=Workload.Phase.UNKNOWN) for pk in ids
    ], batch_size=BATCH)
    return len(ids)
