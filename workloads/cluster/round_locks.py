"""One periodic round (sync, metrics) of a cluster at a time, held by a lock that dies with its holder.

A lease row with an expiry outlived a holder that died mid-round: when the database went away during a round,
the round could not release its row, and every later round was skipped until the expiry (two minutes). So the
exclusivity is one the operating system or the database drops the moment the holder goes:

- PostgreSQL: a session-level advisory lock (`pg_try_advisory_lock`) on the round's own database connection.
  A killed worker, a closed connection or a restarted server ends the session and with it the lock. The lock
  and the round's writes share that session, so a round that lost its lock has also lost its way to write.
- Any other database (SQLite: one host by nature): an exclusive `flock` on a file under STUDIO_VAR_DIR, which
  the kernel drops when the holder's process exits, however it exits.

Either way it is never waited for (a busy cluster's round is skipped, the next beat tries again), and it is not
re-entrant: a second round of the same cluster in the same process is refused as any other would be. A round
that hangs keeps its lock; the cluster client's request timeout bounds how long.
"""

import fcntl
import hashlib
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import DatabaseError, connection

log = logging.getLogger(__name__)

_held: set[str] = set()  # names held by this process, so that a lock is never taken twice by one holder
_held_guard = threading.Lock()


def lock_name(cluster_id, purpose: str, *, database: str | None = None) -> str:
    """The lock's name, unique per database (two test databases on one host do not share locks)."""
    return f"paas-studio:{database or settings.DATABASES['default']['NAME']}:{purpose}:{cluster_id}"


def advisory_key(name: str) -> int:
    """The lock's key in PostgreSQL's advisory lock space (per database): a signed 64-bit hash of its name."""
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "big", signed=True)


@contextmanager
def cluster_round(cluster_id, purpose: str) -> Iterator[bool]:
    """`with cluster_round(cluster.pk, "sync") as held:` — held is False when another round has the cluster.
    The lock is released on any exit, and by the database or the kernel when the holder dies instead."""
    name = lock_name(cluster_id, purpose)
    with _held_guard:
        if name in _held:
            yield False
            return
        _held.add(name)
    try:
        lock = _AdvisoryLock(name) if connection.vendor == "postgresql" else _FileLock(name)
        held = lock.acquire()
        try:
            yield held
        finally:
            if held:
                lock.release()
    finally:
        with _held_guard:
            _held.discard(name)


class _AdvisoryLock:
    def __init__(self, name: str):
        self.key = advisory_key(name)

    def acquire(self) -> bool:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [self.key])
            return bool(cursor.fetchone()[0])

    def release(self) -> None:
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [self.key])
        except DatabaseError as exc:  # the session is gone (a database outage), and the lock went with it
            log.info("advisory lock %s released with its session: %s", self.key, exc)


class _FileLock:
    def __init__(self, name: str):
        folder = settings.VAR_DIR / "locks"
        folder.mkdir(parents=True, exist_ok=True)
        # Lock files are never deleted: removing one while another process holds it open would let a third
        # process lock a new file of the same name.
        self.path = folder / (hashlib.sha256(name.encode()).hexdigest()[:32] + ".lock")
        self.fd: int | None = None

    def acquire(self) -> bool:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self.fd = fd
        return True

    def release(self) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)
        self.fd = None


class ClusterLease:
    """A cluster's round lock held for as long as its holder follows the cluster (a watcher), on the database
    session of the thread that took it: the thread's writes go through that session, so a holder whose
    session ended (a restart of the database, a cut connection) has lost its lock and its way to write at once.
    `held()` says whether that session is still the thread's. Released by `release()`, by the session's end, or
    by the kernel when the process exits (flock)."""

    def __init__(self, cluster_id, purpose: str):
        self.name = lock_name(cluster_id, purpose)
        self._lock = None
        self._session = None

    def acquire(self) -> bool:
        with _held_guard:
            if self.name in _held:
                return False
            _held.add(self.name)
        try:
            lock = _AdvisoryLock(self.name) if connection.vendor == "postgresql" else _FileLock(self.name)
            if lock.acquire():
                self._lock, self._session = lock, connection.connection
                return True
        except Exception:
            with _held_guard:
                _held.discard(self.name)
            raise
        with _held_guard:
            _held.discard(self.name)
        return False

    def held(self) -> bool:
        if self._lock is None:
            return False
        if isinstance(self._lock, _FileLock):
            return True
        return connection.connection is self._session and self._session is not None and not self._session.closed

    def release(self) -> None:
        lock, self._lock = self._lock, None
        if lock is None:
            return
        try:
            if isinstance(lock, _FileLock) or connection.connection is self._session:
                lock.release()
        finally:
            self._session = None
            with _held_guard:
                _held.discard(self.name)
