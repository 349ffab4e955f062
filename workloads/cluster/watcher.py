"""The sync follows each cluster by watch: `manage.py cluster_watch` runs one watcher per cluster.

A watcher competes for its cluster's lease (`round_locks.ClusterLease`: a PostgreSQL advisory lock on its own
database session, a `flock` elsewhere), the one a sync round takes: one follower per cluster however many
processes run, and a holder that dies (a killed process, a lost database session) frees it at once for a
standby. While it holds the lease it:

1. starts a reflector per kind (`workloads.cluster.informer`): one LIST, then WATCHes from its resourceVersion with
   bookmarks, resumed where they stopped, listed again on 410 only;
2. once every kind is listed, derives every followed workload from the store, as a round does (the *full
   pass*, `sync.reconcile`);
3. then applies each change as it arrives: the workloads whose objects, pods or Warning events changed are
   gathered for SYNC_BATCH_SECONDS, derived again (the pure `phases.derive_phase`) and written in one
   transaction, in bulk (a *pass*);
4. every SYNC_INTERVAL_SECONDS (a *tick*): says the cluster is Connected (or counts a failed round while a
   watch cannot reach it, as rounds did: Disconnected and Unknown after SYNC_DISCONNECTED_AFTER_ROUNDS), and
   passes again the workloads whose repair came due (a push, suspension or removal the cluster still lacks a
   grace after the intent changed) and those still waiting (time-bound phases: an image pull's grace);
5. every SYNC_RESYNC_SECONDS, the safety net: discovery again (Knative or Kubeflow installed meanwhile) and a
   full pass from the store, no LIST.

Beat's `clusters_sync` round takes the same lease, so it does nothing while a watcher follows the cluster, and
is the slow fallback where none runs.
"""

import logging
import threading
import time
from collections import defaultdict
from datetime import timedelta

from django.conf import settings
from django.db import DatabaseError, connection
from django.utils import timezone
from prometheus_client import Counter

from perf.gc_pause import gc_paused
from perf.malloc_trim import limit_heaps, release_free_memory
from studio.clusters import kube
from studio.clusters import scheduler as sched
from studio.models import Cluster
from studio.selectors import node_pool_labels
from workloads.cluster import checkpoint, informer, kai_sync, reach, sync
from workloads.cluster.round_locks import ClusterLease
from workloads.models import Workload

log = logging.getLogger(__name__)
# Workloads whose phase may change with time alone (a container waiting for its image past the pull's grace is
# Failed, phases.IMAGE_PULL_GRACE) are derived again this often, even when nothing about them changed.
REQUEUE_WAITING_SECONDS = 30.0
TIME_BOUND = {"Initializing"}
MAX_GATHER = 2.0
# While the cluster is silent it is probed this often (one /readyz, refused at once), not only each tick: its
# waiting writes go within this of it answering. A probe that fails counts no round (the tick does).
PROBE_SECONDS = 0.5
ROWS_READ = 2000  # a full pass reads its rows about this many at a time (sync.CHUNK: one query)
# The C allocator's heaps shared by the reflector and watcher threads: with one each, the freed pages and fragments
# of every heap added up (at 10,000 workloads, 268 MiB after bench.watch's burst; 178 MiB with 2 heaps and the
# memory freed by each pass given back, docs/performance.md).
HEAPS = 2
# (label selector, field selector) of the kinds not read by the product's managed-by label.
SELECTORS = {kube.EVENT: ("", informer.WARNING_SELECTOR), informer.EVICTION: ("", informer.EVICTION_SELECTOR),
             informer.NAMESPACE: (kube.MANAGED_BY_SELECTOR, ""), sched.QUEUE: ("", ""), informer.NODE: ("", "")}
PASSES = Counter("studio_watch_passes_total", "Passes of the cluster watchers, by kind (full, changes).",
                 ["cluster", "kind"])
APPLIED = Counter("studio_watch_workloads_total", "Workloads derived again by the cluster watchers.", ["cluster"])


class ClusterWatcher(threading.Thread):
    """Follows one cluster while it holds the cluster's lease; waits for it otherwise."""

    def __init__(self, cluster_id: str, *, version: str = ""):
        super().__init__(name=f"watch {cluster_id}", daemon=True)
        self.cluster_id, self.version = str(cluster_id), version
        self.stopping = threading.Event()
        self.following: Following | None = None
        self._waiting_logged = False

    def stop(self) -> None:
        self.stopping.set()
        following = self.following
        if following is not None:
            following.stop_reflectors()

    def run(self) -> None:
        try:
            while not self.stopping.is_set():
                try:
                    self._hold_and_follow()
                except DatabaseError as exc:
                    log.warning("watch of cluster %s: the database failed (%s); the lease went with its session",
                                self.cluster_id, exc)
                    connection.close()
                except Exception:
                    log.exception("watch of cluster %s failed; starting over", self.cluster_id)
                    connection.close()
                self.stopping.wait(settings.SYNC_INTERVAL_SECONDS)
        finally:
            connection.close()

    def _hold_and_follow(self) -> None:
        cluster = Cluster.objects.filter(pk=self.cluster_id).first()
        if cluster is None:
            return
        lease = ClusterLease(cluster.pk, "sync")
        if not lease.acquire():
            if not self._waiting_logged:
                log.info("cluster %s is followed by another watcher (or a round); this one waits", cluster.name)
                self._waiting_logged = True
            return
        self._waiting_logged = False
        log.info("watching cluster %s", cluster.name)
        try:
            self.following = Following(cluster, lease, self.stopping)
            self.following.run()
        finally:
            if self.following is not None:
                self.following.stop_reflectors()
            self.following = None
            lease.release()


class Following:
    """One tenure of a cluster's lease: the reflectors, the store, the queues, the clocks of ticks and resyncs."""

    def __init__(self, cluster: Cluster, lease: ClusterLease, stopping: threading.Event):
        self.cluster, self.lease, self.stopping = cluster, lease, stopping
        self.reflectors: dict[tuple, informer.Reflector] = {}
        self.queues = sync.Queues()
        self.groups: set[str] = set()
        self.kai_detected = self.kai = False  # the cluster serves KAI's API; and its setting schedules with it
        self.capacity: dict | None = None  # the nodes' GPUs as last written (KAI)
        self.everywhere = True
        self.store = informer.Store()
        self.conn: kube.Connection | None = None
        self.unknown = False  # the cluster's workloads were marked Unknown: derive them all once it is back
        self.scanned_to = None  # repairs came due up to this time
        self.unsent: set[str] = set()  # workloads whose repair could not be enqueued: derived again next tick
        self.silent = False  # the cluster did not answer the last probe
        self.probed_at = 0.0
        self.requeued_at = time.monotonic()
        self.last_pass_seconds = 0.0
        self.places_at = 0.0  # when the queued rows' moved places were last written

    # --- the loop ------------------------------------------------------------------------------------------

    def run(self) -> None:
        self.conn = kube.connect(self.cluster)
        if not self._discover():
            return
        reach.answered(self.cluster.pk)
        self.kai_detected = self.cluster.kai_detected = sched.KAI_GROUP in self.groups
        self.kai = self.kai_detected and self.cluster.uses_kai
        self.store.set_namespaces(self._project_namespaces())
        if not self._wait_for_lists():
            return
        self.full_pass()
        next_tick = time.monotonic() + settings.SYNC_INTERVAL_SECONDS
        next_resync = time.monotonic() + settings.SYNC_RESYNC_SECONDS
        while not self.stopping.is_set():
            placing = self.queues.stale or self.queues.unplaced
            due = min(next_tick, self.places_at + settings.WATCH_PLACES_SECONDS) if placing else next_tick
            if self.silent:
                due = min(due, self.probed_at + PROBE_SECONDS)
            woke = self.store.changed.wait(max(0.0, due - time.monotonic()))
            if self.stopping.is_set() or not self._still_held():
                return
            if woke:
                # Gather what arrives together: SYNC_BATCH_SECONDS, or as long as the last pass took (up to
                # MAX_GATHER) while a burst keeps passes busy, so that a workload's next events join its pass.
                self.stopping.wait(min(max(settings.SYNC_BATCH_SECONDS, self.last_pass_seconds), MAX_GATHER))
                began = time.monotonic()
                self.apply(self.store.take_dirty())
                self.last_pass_seconds = time.monotonic() - began
            now = time.monotonic()
            if self.silent and now >= self.probed_at + PROBE_SECONDS and now < next_tick:
                self.reconnect()
            if (self.queues.stale or self.queues.unplaced) and now >= self.places_at + settings.WATCH_PLACES_SECONDS:
                self.write_places()
            if now >= next_tick:
                self.tick()
                next_tick = now + settings.SYNC_INTERVAL_SECONDS
            if now >= next_resync:
                self.resync()
                next_resync = now + settings.SYNC_RESYNC_SECONDS

    def _still_held(self) -> bool:
        if self.lease.held():
            return True
        log.warning("watch of cluster %s: the lease's database session is gone; following stops",
                    self.cluster.name)
        return False

    def _discover(self) -> bool:
        """The cluster's API groups. While discovery fails a round fails each tick, and while the cluster is
        silent it is probed each PROBE_SECONDS meanwhile: a watcher that starts during an outage sends the
        writes waiting for the cluster as soon as it answers, not a tick later."""
        while not self.stopping.is_set():
            try:
                self.groups = kube.api_groups(self.conn)
                return True
            except (kube.ClusterError, *kube.TRANSIENT_ERRORS) as exc:
                self.reconnect()  # the probe: silent, or only refusing discovery (its credentials)
                sync.round_failed(self.cluster, str(getattr(exc, "message", exc)) or type(exc).__name__)
            self._wait_probing(settings.SYNC_INTERVAL_SECONDS)
            if not self._still_held():
                return False
        return False

    def _wait_probing(self, seconds: float) -> None:
        """Wait up to `seconds`; while the cluster is silent, probe it each PROBE_SECONDS, and stop waiting once
        it answers (its waiting writes went with the probe; `reconnect` restarted the failing watches)."""
        until = time.monotonic() + seconds
        while self.silent:
            due = min(until, self.probed_at + PROBE_SECONDS)
            if self.stopping.wait(max(0.0, due - time.monotonic())) or time.monotonic() >= until:
                return
            if self.reconnect():
                return
        self.stopping.wait(max(0.0, until - time.monotonic()))

    def _wait_for_lists(self) -> bool:
        """Start the reflectors and wait until each has listed its kind, counting failed rounds meanwhile."""
        while not self.stopping.is_set():
            self._adjust_reflectors()
            # Read "synced" before "forbidden": a reflector refused (403) marks itself forbidden, then synced, so
            # one seen synced here is seen forbidden below. The other order let a refusal land in between, and
            # the watcher went on across namespaces with no rights there (a workload never seen Running).
            synced = all(r.synced.is_set() for r in self.reflectors.values())
            if self.everywhere and any(r.forbidden for r in self.reflectors.values()):
                # The account may not read across namespaces (deploy/rbac.yaml): one watch per kind in each
                # namespace the product manages, as listed by the managed-by label.
                log.info("watch of cluster %s: reading inside each managed namespace", self.cluster.name)
                self.everywhere = False
                self.stop_reflectors()
                self.reflectors = {}
                self.store = informer.Store(namespaces=self.store.namespaces)
                continue
            if synced and self._namespaces_followed():
                return True
            self.stopping.wait(min(0.2, settings.SYNC_INTERVAL_SECONDS))
            if any(r.failing_since is not None and time.monotonic() - r.failing_since >= settings.SYNC_INTERVAL_SECONDS
                   for r in self.reflectors.values()):
                self.tick()
                self._wait_probing(settings.SYNC_INTERVAL_SECONDS)
            if not self._still_held():
                return False
        return False

    # --- passes --------------------------------------------------------------------------------------------

    def full_pass(self) -> sync.SyncReport:
        now, began = timezone.now(), time.monotonic()
        # Every workload is derived from the store as it is now: what was marked before (the first LISTs mark them
        # all) is covered, and only what changes from here on makes the next pass of changes.
        self.store.take_dirty()
        with gc_paused():
            report = self._full_reconcile(now)
        release_free_memory()
        PASSES.labels(self.cluster.name, "full").inc()
        APPLIED.labels(self.cluster.name).inc(report.workloads)
        self.store.mark(report.retry)
        self.unsent |= report.unsent
        self.unknown = False
        self.places_at = time.monotonic()  # every place written
        log.log(logging.DEBUG if self.scanned_to else logging.INFO, "watch of cluster %s: full pass over %d "
                "workloads (%d as the last one left them), %d changed, in %.2f s", self.cluster.name,
                report.workloads, report.unchanged, report.changed, time.monotonic() - began)
        self.scanned_to = self.scanned_to or now - timedelta(seconds=settings.SYNC_REPAIR_GRACE_SECONDS)
        return report

    def _full_reconcile(self, now) -> sync.SyncReport:
        """Every followed row and every workload the store holds, WATCH_FULL_PASS_PART at a time: a part's objects are
        decoded, derived and written, then freed, so that the pass's memory is a part's, not the cluster's (at
        100,000 workloads, the decoded objects of all of them were gigabytes at their peak). The queues' places,
        which depend on every live row, are computed once the parts are read. The workloads the last full pass's
        checkpoint finds unchanged are not decoded or derived (`workloads.cluster.checkpoint`); this pass's
        fingerprints are the next checkpoint."""
        self.queues.clear()
        wids = sorted(sync.followed_ids(self.cluster) | self.store.workloads())
        if self.kai:  # a preemptor's workload is named whichever part it is in
            self.queues.names.update(sync.followed_names(self.cluster))
        pod_groups = self.store.by_workload(sched.POD_GROUP) if self.kai else None
        last = None if self.kai else checkpoint.Checkpoint.load(self.cluster)
        recorder = None if self.kai else checkpoint.Recorder(now)
        report = sync.SyncReport()
        size = max(1, settings.WATCH_FULL_PASS_PART)
        block = size * max(1, ROWS_READ // size)  # the rows of several parts in one query (one a part: 400 at 100,000)
        for start in range(0, len(wids), size):
            if start % block == 0:
                read = {str(row.pk): row for row in sync.followed_rows(self.cluster, set(wids[start:start + block]))}
            part = set(wids[start:start + size])
            versions = self.store.versions(part) if recorder else None  # before the objects are read: conservative
            rows = [read[wid] for wid in sorted(part) if wid in read]  # in order of their ids, as `last` asks
            unchanged = {str(row.pk) for row in rows if last.unchanged(row, versions.get(str(row.pk), b""))} \
                if last else set()
            done = sync.reconcile(self.conn, self.cluster, self._seen(now, part - unchanged, pod_groups=pod_groups),
                                  now=now, only=part, queues=self.queues, place=False, rows=rows, versions=versions,
                                  unchanged=unchanged)
            if recorder:
                recorder.add(done.prints, done.retry | done.unsent)
            report.add(done)
            report.unchanged += len(unchanged)
        report.add(sync.place_queues(self.cluster, self.queues, now=now, kai=self.kai))
        if recorder:
            recorder.save(self.cluster)
        return report

    def apply(self, wids: set[str]) -> sync.SyncReport | None:
        """A pass over the workloads whose objects changed (or whose time came): derived again, written at once."""
        if not wids:
            return None
        now = timezone.now()
        report = sync.SyncReport()
        ordered, size = sorted(wids), max(1, settings.WATCH_FULL_PASS_PART)
        with gc_paused():  # a burst in parts as well: each part as a pass of its own
            for start in range(0, len(ordered), size):
                part = set(ordered[start:start + size])
                report.add(sync.reconcile(self.conn, self.cluster, self._seen(now, part), now=now, only=part,
                                          queues=self.queues, places_later=True))
        release_free_memory()  # a fraction of a millisecond; a burst's passes freed what they decoded
        PASSES.labels(self.cluster.name, "changes").inc()
        APPLIED.labels(self.cluster.name).inc(len(wids))
        log.debug("watch of cluster %s: %d workloads derived, %d written in %.2f s", self.cluster.name, len(wids),
                  report.changed, (timezone.now() - now).total_seconds())
        self.store.mark(report.retry)
        self.unsent |= report.unsent
        return report

    def write_places(self) -> None:
        """The places the passes since the last call moved and left to write (sync.reconcile's `places_later`)."""
        self.places_at = time.monotonic()
        report = sync.write_places(self.cluster, self.queues, now=timezone.now(), kai=self.kai)
        self.store.mark(report.retry)

    def _seen(self, now, wids: set[str] | None = None, *, pod_groups: dict | None = None) -> sync.Seen:
        """What a round would have read, from the store: for these workloads, or all. On KAI, the Evict events
        of the pass's groups, every Queue, and the pass's PodGroups, or every one (`pod_groups`, or read here)
        where an Evict event is among them: it names its preemptor by its PodGroup."""
        objects, pods, warnings, evictions = self.store.view(wids)
        seen = sync.Seen(knative="serving.knative.dev" in self.groups, started_at=now, groups=self.groups,
                         objects=objects, pods=pods, warnings=warnings, kai_detected=self.kai_detected, kai=self.kai)
        if self.kai:
            own = defaultdict(list)
            for wid, kinds in objects.items():
                own[wid] = kinds.pop(sched.POD_GROUP, [])
            if pod_groups is None:  # reading every one unpacked them all, each pass (a fifth of its time at 2,000)
                pod_groups = self.store.by_workload(sched.POD_GROUP) if any(evictions.values()) else own
            seen.pod_groups = pod_groups
            seen.evictions = evictions
            seen.queues = self.store.every(sched.QUEUE)
        return seen

    def tick(self) -> None:
        failing = [r for r in self.reflectors.values() if r.failing_since is not None]
        if failing:
            if not self.reconnect():
                failed = sync.round_failed(self.cluster, failing[0].failure or "The cluster API is unreachable")
                self.unknown = self.unknown or failed >= settings.SYNC_DISCONNECTED_AFTER_ROUNDS
            return
        reach.check(self.conn, self.cluster)
        Cluster.objects.filter(pk=self.cluster.pk).update(
            status=Cluster.Status.CONNECTED, status_message="", last_seen_at=timezone.now(), failed_rounds=0,
            has_knative="serving.knative.dev" in self.groups, kai_detected=self.kai_detected)
        if self.kai:
            self._kai_tick(self.store.take_changed())
        if self.unknown:
            self.full_pass()  # every workload marked Unknown is derived again from what the watches resumed
            return
        self.store.set_namespaces(self._project_namespaces())
        self._adjust_reflectors()
        self.store.mark(self._repairs_due())
        # A repair the broker did not take (Redis away) is tried again each tick, not at the next resync.
        self.store.mark(self.unsent)
        self.unsent = set()
        if time.monotonic() - self.requeued_at >= REQUEUE_WAITING_SECONDS:
            self.requeued_at = time.monotonic()
            self.store.mark(wid for wid, row in self.queues.rows.items() if row.phase in TIME_BOUND)

    def reconnect(self) -> bool:
        """While watches fail, the one probe of the cluster each tick (reach.probe: its waiting writes go once it
        answers). When it answers after it did not (an outage ended), the failing reflectors start again at once
        rather than after their backoff (up to informer.BACKOFF_MAX_SECONDS); True then."""
        self.probed_at = time.monotonic()
        if not reach.probe(self.conn, self.cluster):
            self.silent = True
            return False
        if not self.silent:
            return False
        self.silent = False
        failing = [k for k, r in self.reflectors.items() if r.failing_since is not None]
        log.info("watch of cluster %s: the cluster answers again; its %d failing watches list again now",
                 self.cluster.name, len(failing))
        for key in failing:
            self.reflectors.pop(key).stop()
        self._adjust_reflectors()
        return True

    def _kai_tick(self, changed: set) -> None:
        """The cluster's GPUs when a node changed; the projects' and departments' queue status when a Queue did."""
        if informer.NODE in changed:
            capacity = sched.gpu_capacity(self.store.every(informer.NODE), node_pool_labels(self.cluster.pk))
            if capacity != self.capacity:
                Cluster.objects.filter(pk=self.cluster.pk).update(gpu_capacity=capacity)
                self.capacity = capacity
        if sched.QUEUE in changed:
            kai_sync.queue_statuses(self.cluster, self.store.every(sched.QUEUE))

    def resync(self) -> None:
        try:
            self.groups = kube.api_groups(self.conn)
        except (kube.ClusterError, *kube.TRANSIENT_ERRORS) as exc:
            log.warning("watch of cluster %s: discovery failed (%s); resync later", self.cluster.name, exc)
            return
        self.kai_detected = self.cluster.kai_detected = sched.KAI_GROUP in self.groups
        self.kai = self.kai_detected and self.cluster.uses_kai
        self._adjust_reflectors()
        self.full_pass()

    def _repairs_due(self) -> set[str]:
        """The followed rows whose intent changed (or that were created) a grace ago, since the last tick: a
        repair (push, suspension, removal) may have come due for them."""
        if self.scanned_to is None:
            return set()
        cutoff = timezone.now() - timedelta(seconds=settings.SYNC_REPAIR_GRACE_SECONDS)
        if cutoff <= self.scanned_to:
            return set()
        due = Workload.objects.filter(cluster=self.cluster, updated_at__gt=self.scanned_to, updated_at__lte=cutoff) \
            .filter(sync.in_play()).values_list("pk", flat=True)
        self.scanned_to = cutoff
        return {str(pk) for pk in due}

    # --- reflectors ----------------------------------------------------------------------------------------

    def _project_namespaces(self) -> set[str]:
        return set(self.cluster.projects.values_list("namespace", flat=True))

    def _wanted(self) -> set[tuple]:
        """(kind, namespace) of each watch: every kind across namespaces, or in each managed namespace."""
        kinds = [*sync.listed_kinds(self.groups), kube.POD, kube.EVENT]
        cluster_wide = {(sched.QUEUE, None), (informer.NODE, None)} if self.kai else set()
        if self.kai:
            kinds += [sched.POD_GROUP, informer.EVICTION]
        if self.everywhere:
            return {(kind, None) for kind in kinds} | cluster_wide
        return ({(informer.NAMESPACE, None)} | cluster_wide
                | {(kind, ns) for ns in self.store.namespaces_seen() for kind in kinds})

    def _namespaces_followed(self) -> bool:
        return self.everywhere or self._wanted() <= set(self.reflectors)

    def _adjust_reflectors(self) -> None:
        wanted = self._wanted()
        for key in set(self.reflectors) - wanted:
            self.reflectors.pop(key).stop()
            if key[1] is not None and not any(k[1] == key[1] for k in self.reflectors):
                self.store.forget_namespace(key[1])
        for kind, namespace in wanted - set(self.reflectors):
            label_selector, field_selector = SELECTORS.get(kind, (kube.MANAGED_BY_SELECTOR, ""))
            reflector = informer.Reflector(
                self.conn, kind, self.store, namespace=namespace, label_selector=label_selector,
                field_selector=field_selector, watch_seconds=settings.WATCH_TIMEOUT_SECONDS,
                poll_seconds=settings.SYNC_INTERVAL_SECONDS)
            self.reflectors[(kind, namespace)] = reflector
            reflector.start()

    def stop_reflectors(self) -> None:
        for reflector in list(self.reflectors.values()):
            reflector.stop()


def run_watchers(stopping: threading.Event, *, alive_file=None) -> None:
    """Follow every cluster of the database until `stopping` is set: one watcher per cluster, started for a new
    cluster, stopped for a deleted one, started again when a cluster's row changes (its credentials)."""
    limit_heaps(HEAPS)
    watchers: dict[str, ClusterWatcher] = {}
    try:
        while not stopping.is_set():
            try:
                clusters = {str(pk): str(updated) for pk, updated in Cluster.objects.values_list("pk", "updated_at")}
            except DatabaseError as exc:
                log.warning("cluster watch: the database failed (%s); trying again", exc)
                clusters = None
            finally:
                connection.close()
            if clusters is not None:
                for cluster_id in set(watchers) - set(clusters):
                    watchers.pop(cluster_id).stop()
                for cluster_id, version in clusters.items():
                    watcher = watchers.get(cluster_id)
                    if watcher is not None and watcher.version == version and watcher.is_alive():
                        continue
                    if watcher is not None:
                        watcher.stop()
                        watcher.join(timeout=settings.KUBE_REQUEST_TIMEOUT_SECONDS)
                    watchers[cluster_id] = ClusterWatcher(cluster_id, version=version)
                    watchers[cluster_id].start()
            if alive_file:
                alive_file.touch()
            stopping.wait(settings.SYNC_INTERVAL_SECONDS)
    finally:
        for watcher in watchers.values():
            watcher.stop()
        for watcher in watchers.values():
            watcher.join(timeout=settings.KUBE_REQUEST_TIMEOUT_SECONDS)
