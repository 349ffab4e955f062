"""One Celery beat at a time, whatever runs: a second beat (a rolling update, a replica too many, a node that
came back) idles until the first is gone, then takes over — as Kubernetes components do with their Lease.

`LeasedScheduler` (CELERY_BEAT_SCHEDULER) sends due tasks only while its process holds the beat lease, one that
dies with its holder like the cluster rounds' locks (`round_locks`): on PostgreSQL a session-level advisory lock on
a connection of its own, anywhere else an exclusive `flock` on a file under STUDIO_VAR_DIR (one host by nature). A
beat whose database session ends (a restart, a network cut) has lost the lease with it: it notices within
BEAT_LEASE_CHECK_SECONDS, pauses, and competes for the lease again on a new session.

Duplicate periodic tasks would be harmless (each cluster round holds its own lock), but one beat means one
schedule: no doubled sync rate and no doubled metrics collection while two run.
"""

import fcntl
import logging
import os
import time

from celery.beat import PersistentScheduler
from django.conf import settings
from django.db import DatabaseError, connections

from workloads.cluster.round_locks import advisory_key

log = logging.getLogger(__name__)


class _AdvisoryLease:
    def __init__(self):
        self.key = advisory_key(f"paas-studio:{settings.DATABASES['default']['NAME']}:beat")
        self.db = connections.create_connection("default")  # a session of its own: nothing else closes it

    def try_acquire(self) -> bool:
        try:
            with self.db.cursor() as cursor:
                cursor.execute("SELECT pg_try_advisory_lock(%s)", [self.key])
                return bool(cursor.fetchone()[0])
        except DatabaseError:
            self.db.close()  # the next try opens a new session
            return False

    def still_held(self) -> bool:
        try:
            with self.db.cursor() as cursor:
                cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
                               " AND pid = pg_backend_pid()")
                return cursor.fetchone()[0] > 0
        except DatabaseError:
            self.db.close()
            return False


class _FileLease:
    def __init__(self):
        folder = settings.VAR_DIR / "locks"
        folder.mkdir(parents=True, exist_ok=True)
        self.fd = os.open(folder / "beat.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)

    def try_acquire(self) -> bool:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False

    def still_held(self) -> bool:
        return True  # the kernel keeps it until this process exits


class LeasedScheduler(PersistentScheduler):
    """Celery's persistent scheduler, ticking only while this beat holds the lease."""

    def __init__(self, *args, **kwargs):
        self._lease = _AdvisoryLease() if connections["default"].vendor == "postgresql" else _FileLease()
        self._held = False
        self._checked_at = float("-inf")
        self._waiting_logged = False
        super().__init__(*args, **kwargs)

    def tick(self, *args, **kwargs):
        if not self._holds_lease():
            return settings.BEAT_LEASE_CHECK_SECONDS
        return super().tick(*args, **kwargs)

    def _holds_lease(self) -> bool:
        now = time.monotonic()
        if self._held and now - self._checked_at < settings.BEAT_LEASE_CHECK_SECONDS:
            return True
        self._checked_at = now
        if self._held:
            if self._lease.still_held():
                return True
            log.warning("beat lease lost with its database session; pausing until it is held again")
            self._held = False
        self._held = self._lease.try_acquire()
        if self._held:
            log.info("beat lease held: this beat sends the periodic tasks")
            self._waiting_logged = False
        elif not self._waiting_logged:
            log.info("beat lease held by another beat (or the database is away): this beat waits")
            self._waiting_logged = True
        return self._held
