"""What a watcher's full pass derived, kept so that a watcher started again need not derive it all again.

At 100,000 workloads a full pass derives ~137 µs a workload (13.7 s): decoding, deriving, comparing pods, writing.
A watcher that starts again (a deploy, a standby taking the lease) finds most workloads as the last full pass left
them. The checkpoint is one row per cluster (`WatchCheckpoint`): the time that pass began, the fingerprint of the
code that derived it, and for each workload a fingerprint of what it was derived from (its objects' and Warning
events' resourceVersions, `informer.Store.versions`) and of the phase it got.

A workload of a later full pass is left as it is (`Checkpoint.unchanged`) only where nothing a derivation reads
can have moved since: the same objects and events at the same versions, the phase its row holds is the one the
pass gave it, its intent is older than that pass by the repair grace (so every repair that the intent could owe
was already weighed then), and it is live in a phase that time alone does not change (`STABLE`: the watcher
between passes derives those again only when their objects change, so a skipped one is one it would leave too).
Everything else, and every workload of a cluster scheduled by KAI (whose reasons read every PodGroup), is derived
as before. A fingerprint taken before the pass read the objects is conservative: the objects can only be newer.
"""

import functools
import hashlib
import uuid
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings

from studio.models import Cluster
from workloads.models import WatchCheckpoint, Workload

STABLE = frozenset({Workload.Phase.RUNNING, Workload.Phase.COMPLETED, Workload.Phase.FAILED})
RECORD = 24  # a workload's 16 id bytes, then its 8 fingerprint bytes
DERIVING = ("phases", "pending", "endpoints", "sync", "sync_writes")  # of workloads.cluster, with runai_fields


@functools.cache
def _code() -> str:
    """The fingerprint of the modules that derive a workload's phase, waiting reason, pods and endpoints: a
    checkpoint written by other code (an upgrade) is not used. Read as files: importing them here would make a
    circle (`sync` uses this module)."""
    here = Path(__file__).parent
    digest = hashlib.blake2b(digest_size=16)
    for path in (*(here / f"{name}.py" for name in DERIVING), here.parent / "runai_fields.py"):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def fingerprint(versions: bytes, phase: str) -> bytes:
    """What a workload was derived from (`informer.Store.versions`) and the phase it got."""
    return hashlib.blake2b(versions + b"\0" + phase.encode(), digest_size=8).digest()


class Checkpoint:
    """A cluster's checkpoint as read, for a full pass that asks about its workloads in the order of their ids (the
    order its parts go in): a cursor over the records, which are in that order too. The records stay one bytes
    object: 100,000 small objects made at the start of a pass and freed at its end pinned pymalloc's arenas among
    the pass's own (docs/performance.md)."""

    def __init__(self, passed_at: datetime, records: bytes):
        self.passed_at, self.records = passed_at, records
        self.count = len(records) // RECORD
        self.cursor = 0

    @classmethod
    def load(cls, cluster: Cluster) -> "Checkpoint | None":
        row = WatchCheckpoint.objects.filter(cluster=cluster).first()
        if row is None or row.code != _code():
            return None
        return cls(row.passed_at, bytes(row.fingerprints))

    def recorded(self, pk: uuid.UUID) -> bytes | None:
        """The workload's fingerprint, if recorded; None too for a workload asked about out of order."""
        key, records = pk.bytes, self.records
        while self.cursor < self.count and records[self.cursor * RECORD:self.cursor * RECORD + 16] < key:
            self.cursor += 1
        at = self.cursor * RECORD
        if self.cursor < self.count and records[at:at + 16] == key:
            return records[at + 16:at + RECORD]
        return None

    def unchanged(self, row, versions: bytes) -> bool:
        """Whether the row (`sync.Followed`) is as the checkpoint's pass left it, its objects as it saw them."""
        if row.actual_phase not in STABLE or row.desired_phase != Workload.Desired.RUNNING or row.deleted_at:
            return False
        if row.updated_at > self.passed_at - timedelta(seconds=settings.SYNC_REPAIR_GRACE_SECONDS):
            return False
        return self.recorded(row.pk) == fingerprint(versions, row.actual_phase)


class Recorder:
    """The fingerprints of a full pass, as its parts are written (in the order of their ids), then saved as the
    cluster's checkpoint: one growing buffer, for the reason `Checkpoint` keeps one."""

    def __init__(self, passed_at: datetime):
        self.passed_at = passed_at
        self.records = bytearray()

    def add(self, prints: dict[str, bytes], left_out: set[str]) -> None:
        """A part's fingerprints (wid -> fingerprint), less its rows not written (to derive again)."""
        for wid in sorted(prints):
            if wid not in left_out:
                self.records += uuid.UUID(wid).bytes + prints[wid]

    def save(self, cluster: Cluster) -> None:
        WatchCheckpoint.objects.update_or_create(cluster=cluster, defaults={
            "passed_at": self.passed_at, "code": _code(), "fingerprints": bytes(self.records)})
        self.records = bytearray()
