"""The sync follows the cluster by watch (`manage.py cluster_watch`, a process of its own as in production):
phases arrive without rounds, a watch resumes from its resourceVersion instead of listing again, a 410 lists
again, a cluster outage makes workloads Unknown and back, one watcher per cluster and a standby that takes over
from a killed one, drift repaired as it happens."""

import threading
import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from kubernetes import client

from studio.clusters import kube
from tests.conftest import official_client
from tests.workloads.cluster_support import make_workload, run_seconds, wait_for
from workloads import manifests, tasks
from workloads.cluster import collect, push, sync
from workloads.cluster import watcher as cluster_watcher
from workloads.models import ClusterReach, MetricSample, Pod, WaitingWrite, Workload, WorkloadEvent

pytestmark = pytest.mark.django_db(transaction=True)


def phase_of(workload) -> str:
    return Workload.objects.values_list("actual_phase", flat=True).get(pk=workload.pk)


def requests(sim, verb: str, resource: str) -> int:
    return sim.stats().get((verb, resource), 0)


def test_phases_arrive_by_watch_with_one_list_per_kind_and_no_round(sim_org, start_watcher):
    watcher = start_watcher()
    wait_for(lambda: watcher.said(f"watching cluster {sim_org.cluster.name}"), what="the watcher to hold the lease")
    workload = make_workload(sim_org.project, "watched", annotations=run_seconds(600))
    push.workload_push(workload.pk)
    wait_for(lambda: phase_of(workload) == "Running", timeout=30, what="Running, by watch")
    assert sync.cluster_sync(sim_org.cluster.pk) is None  # a round finds the cluster followed: it does nothing
    assert requests(sim_org.sim, "list", "jobs") == 1
    assert requests(sim_org.sim, "list", "pods") == 1
    assert requests(sim_org.sim, "watch", "jobs") >= 1


def following(watcher, org) -> bool:
    return watcher.said(f"watching cluster {org.cluster.name}") > 0


def running_workload(org, name: str):
    workload = make_workload(org.project, name, annotations=run_seconds(600))
    push.workload_push(workload.pk)
    wait_for(lambda: phase_of(workload) == "Running", timeout=30, what=f"{name} Running, by watch")
    return Workload.objects.select_related("project").get(pk=workload.pk)


def test_the_watcher_process_follows_without_loading_the_urlconf(sim_org, start_watcher):
    """Django's system checks import every view and serializer (0.9 s of a start, 14 MiB kept): the watcher,
    which serves no page, skips them. Its imports as Python reports them (-X importtime) while it follows."""
    watcher = start_watcher(PYTHONPROFILEIMPORTTIME=1)
    wait_for(lambda: following(watcher, sim_org), what="the watcher to hold the lease")
    imported = {line.rsplit("|", 1)[1].strip() for line in list(watcher.lines) if line.startswith("import time:")}
    # config.urls itself comes through importlib.import_module, which -X importtime does not time: what it imports.
    assert "workloads.cluster.watcher" in imported
    assert not imported & {"studio.urls_router", "assets.api_urls", "drf_spectacular.views"}, imported


def test_a_watch_that_ends_resumes_from_its_resource_version_without_listing_again(sim_org, start_watcher):
    watcher = start_watcher(WATCH_TIMEOUT_SECONDS=1)  # each watch ends after 1-2 s, as the server's timeout
    wait_for(lambda: following(watcher, sim_org), what="the watcher to hold the lease")
    running_workload(sim_org, "first")
    wait_for(lambda: requests(sim_org.sim, "watch", "jobs") >= 4, timeout=20, what="watches to end and resume")
    second = running_workload(sim_org, "second")  # a change after the resumptions still arrives
    assert requests(sim_org.sim, "list", "jobs") == 1
    assert requests(sim_org.sim, "list", "pods") == 1
    assert phase_of(second) == "Running"


def test_a_410_on_resume_lists_again_and_applies_what_changed_meanwhile(worker, sim_org, start_kubesim,
                                                                        start_watcher):
    sim = start_kubesim(run_seconds=600)
    sim_org.cluster.api_server_url = sim.url
    sim_org.cluster.save()
    watcher = start_watcher()
    wait_for(lambda: following(watcher, sim_org), what="the watcher to hold the lease")
    workload = running_workload(sim_org, "relisted")
    name = manifests.object_name(push.workload_ref(workload))
    batch = client.BatchV1Api(official_client(sim))
    first_uid = batch.read_namespaced_job(name, sim_org.namespace).metadata.uid

    sim.set_faults(outage=True)  # every watch ends, and cannot resume while the API answers 503
    wait_for(lambda: watcher.said("watch of Job"), what="the Job watch to fail")
    with sim.store.lock:  # meanwhile, behind the API: the Job goes, and the history with it
        sim.api.delete(sim.registry.by_kind("batch/v1", "Job"), sim_org.namespace, name,
                       {"propagationPolicy": "Background"})
    sim.compact()
    sim.set_faults(outage=False)

    # The Job watch lists again: resumed into the 410, or started again at once by the watcher's probe that saw
    # the cluster answer again (a watch whose backoff had not yet run out).
    wait_for(lambda: watcher.said("watch of Job in all namespaces: resourceVersion")
             or watcher.said("failing watches list again now"), what="410 to the Job watch, or its restart")
    wait_for(lambda: sim.stats().get(("list", "jobs")) == 2, what="the Job listed again")
    assert sim.stats()[("list", "jobs")] == 2  # the first list, and the one after the outage: no more

    def recreated():
        try:
            return batch.read_namespaced_job(name, sim_org.namespace).metadata.uid != first_uid
        except client.ApiException:
            return False

    wait_for(recreated, timeout=30, what="the Job, missing after the relist, pushed again")
    wait_for(lambda: phase_of(workload) == "Running", timeout=30, what="Running again")


def test_a_cluster_outage_makes_workloads_unknown_then_the_watch_brings_them_back(sim_org, start_watcher):
    watcher = start_watcher(SYNC_DISCONNECTED_AFTER_ROUNDS=2)
    wait_for(lambda: following(watcher, sim_org), what="the watcher to hold the lease")
    workload = running_workload(sim_org, "outage")
    sim_org.sim.set_faults(outage=True)
    wait_for(lambda: phase_of(workload) == "Unknown", timeout=30, what="Unknown while the cluster is away")
    sim_org.cluster.refresh_from_db()
    assert sim_org.cluster.status == "Disconnected"
    sim_org.sim.set_faults(outage=False)
    wait_for(lambda: phase_of(workload) == "Running", timeout=30, what="Running once the cluster is back")
    wait_for(lambda: type(sim_org.cluster).objects.get(pk=sim_org.cluster.pk).status == "Connected",
             what="the cluster Connected again")


def test_one_watcher_follows_a_cluster_and_a_standby_takes_over_when_it_is_killed(sim_org, start_watcher):
    first, second = start_watcher(), start_watcher()
    wait_for(lambda: following(first, sim_org) or following(second, sim_org), what="a watcher to hold the lease")
    holder, standby = (first, second) if following(first, sim_org) else (second, first)
    wait_for(lambda: standby.said("is followed by another watcher"), what="the standby to wait")
    running_workload(sim_org, "before")
    assert not following(standby, sim_org)
    holder.kill()  # no release: the lease goes with its database session (or the process's file lock)
    wait_for(lambda: following(standby, sim_org), timeout=15, what="the standby to take the lease")
    running_workload(sim_org, "after")


def test_drift_is_repaired_as_it_happens(worker, sim_org, start_watcher):
    watcher = start_watcher()
    wait_for(lambda: following(watcher, sim_org), what="the watcher to hold the lease")
    workload = running_workload(sim_org, "drift")
    name = manifests.object_name(push.workload_ref(workload))
    batch = client.BatchV1Api(sim_org.k8s)
    first_uid = batch.read_namespaced_job(name, sim_org.namespace).metadata.uid
    batch.delete_namespaced_job(name, sim_org.namespace, propagation_policy="Background")  # behind our back
    wait_for(lambda: [j for j in batch.list_namespaced_job(sim_org.namespace).items
                      if j.metadata.name == name and j.metadata.uid != first_uid], timeout=30,
             what="the deleted Job pushed again")
    orphan = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": "orphan", "labels": {manifests.MANAGED_BY_LABEL: manifests.MANAGED_BY,
                                     manifests.WORKLOAD_ID_LABEL: "00000000-0000-0000-0000-000000000000"}},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}}
    batch.create_namespaced_job(sim_org.namespace, orphan)
    wait_for(lambda: "orphan" not in [j.metadata.name for j in batch.list_namespaced_job(sim_org.namespace).items],
             timeout=30, what="the orphan deleted")
    wait_for(lambda: phase_of(workload) == "Running", timeout=30, what="Running again")


def test_a_suspension_whose_task_was_lost_is_applied_once_its_grace_has_passed(worker, sim_org, start_watcher):
    watcher = start_watcher()
    wait_for(lambda: following(watcher, sim_org), what="the watcher to hold the lease")
    workload = running_workload(sim_org, "lost-suspend")
    # The intent changes, and its task is lost (nothing enqueued): nothing on the cluster says so.
    row = Workload.objects.get(pk=workload.pk)
    row.desired_phase = "Stopped"
    row.save(update_fields=["desired_phase", "updated_at"])
    wait_for(lambda: phase_of(workload) == "Stopped", timeout=40, what="Stopped, by the repair once due")


def test_a_metrics_round_reads_the_pods_the_watch_keeps_and_lists_only_their_usage(sim_org, start_watcher):
    watcher = start_watcher()
    wait_for(lambda: following(watcher, sim_org), what="the watcher to hold the lease")
    workload = running_workload(sim_org, "measured")
    wait_for(lambda: Pod.objects.filter(workload=workload, phase="Running").exists(), what="its pod row")
    sim_org.sim.reset_stats()
    assert collect.cluster_collect_metrics(sim_org.cluster.pk) > 0
    assert MetricSample.objects.filter(workload=workload, type="RUNNING_POD_COUNT", value=1).exists()
    assert MetricSample.objects.filter(workload=workload, type="CPU_USAGE_CORES").exclude(pod_name="").exists()
    lists = {resource for (verb, resource), n in sim_org.sim.stats().items() if verb == "list"}
    assert "pods" not in lists and lists  # the usage (metrics.k8s.io), never the pods again


def test_the_first_full_pass_is_not_followed_by_a_second_one(sim_org, start_watcher):
    """The first LISTs mark every workload changed; the full pass derives them all, and nothing is derived again
    until something changes (a second derivation of every workload cost 13 s at 100,000 in bench.watch)."""
    workloads = [make_workload(sim_org.project, f"before-{i}", annotations=run_seconds(600)) for i in range(3)]
    for workload in workloads:
        push.workload_push(workload.pk)
    wait_for(lambda: all(phase_of(w) == "Running" for w in workloads), timeout=30,
             step=lambda: sync.cluster_sync(sim_org.cluster.pk), what="Running, by rounds")
    watcher = start_watcher(LOG_LEVEL="DEBUG", SYNC_REPAIR_GRACE_SECONDS=600)
    wait_for(lambda: watcher.said("full pass over 3 workloads"), timeout=30, what="the first full pass")
    time.sleep(3)  # many batch windows and ticks
    assert watcher.said("workloads derived") == 0, [line for line in watcher.lines if "derived" in line]


def test_a_watcher_started_again_derives_only_what_changed_since_the_last_full_pass(sim_org, start_watcher):
    """The last full pass's checkpoint: a watcher started again leaves as they are the workloads whose objects,
    phase and intent are as that pass saw them, and derives the others — a pod replaced while no watcher ran, a
    row another writer changed."""
    from datetime import timedelta

    from django.utils import timezone

    workloads = [make_workload(sim_org.project, f"kept-{i}", annotations=run_seconds(600)) for i in range(4)]
    for workload in workloads:
        push.workload_push(workload.pk)
    wait_for(lambda: all(phase_of(w) == "Running" for w in workloads), timeout=30,
             step=lambda: sync.cluster_sync(sim_org.cluster.pk), what="Running, by rounds")
    # Running for an hour: no intent changed within the repair grace.
    Workload.objects.filter(pk__in=[w.pk for w in workloads]).update(updated_at=timezone.now() - timedelta(hours=1))
    first = start_watcher()
    wait_for(lambda: first.said("full pass over 4 workloads (0 as the last one left them)"), timeout=30,
             what="the first full pass, with no checkpoint")
    first.stop()

    replaced, changed = workloads[0], workloads[1]
    core = client.CoreV1Api(sim_org.k8s)
    selector = f"{manifests.WORKLOAD_ID_LABEL}={replaced.pk}"
    old_pod = core.list_namespaced_pod(sim_org.namespace, label_selector=selector).items[0].metadata.uid
    core.delete_namespaced_pod(core.list_namespaced_pod(sim_org.namespace, label_selector=selector).items[0]
                               .metadata.name, sim_org.namespace, grace_period_seconds=0)
    wait_for(lambda: [p.metadata.uid for p in core.list_namespaced_pod(sim_org.namespace, label_selector=selector)
                      .items if p.status.phase == "Running"] not in ([], [old_pod]), timeout=30,
             what="the Job's new pod running")
    Workload.objects.filter(pk=changed.pk).update(actual_phase="Pending")  # as another writer would, no intent

    second = start_watcher()
    wait_for(lambda: second.said("full pass over 4 workloads (2 as the last one left them)"), timeout=30,
             what="the second watcher's first pass, two workloads left as they were")
    assert phase_of(changed) == "Running"
    assert old_pod not in set(Pod.objects.filter(workload=replaced).values_list("uid", flat=True))
    assert {phase_of(w) for w in workloads} == {"Running"}


def test_a_full_pass_in_parts_places_the_waiting_workloads_of_every_part_in_one_queue(sim_org, start_watcher):
    """A full pass derives and writes WATCH_FULL_PASS_PART workloads at a time; the pool's queue is computed over
    the rows of all the parts, and an orphan in any part is deleted."""
    waiting = [make_workload(sim_org.project, f"huge-{i}", compute={"gpuDevicesRequest": 16}) for i in range(3)]
    running = make_workload(sim_org.project, "small", annotations=run_seconds(600))
    for workload in [*waiting, running]:
        push.workload_push(workload.pk)
    wait_for(lambda: all(phase_of(w) == "Pending" for w in waiting) and phase_of(running) == "Running", timeout=30,
             step=lambda: sync.cluster_sync(sim_org.cluster.pk), what="Pending and Running, by rounds")
    assert [Workload.objects.get(pk=w.pk).queue_position for w in waiting] == [1, 2, 3]
    Workload.objects.filter(pk__in=[w.pk for w in waiting]).update(queue_position=None, pending_reason=None)
    orphan = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
        "name": "orphan", "labels": {manifests.MANAGED_BY_LABEL: manifests.MANAGED_BY,
                                     manifests.WORKLOAD_ID_LABEL: "00000000-0000-0000-0000-000000000000"}},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}}
    batch = client.BatchV1Api(sim_org.k8s)
    batch.create_namespaced_job(sim_org.namespace, orphan)

    watcher = start_watcher(WATCH_FULL_PASS_PART=1, SYNC_REPAIR_GRACE_SECONDS=600)
    wait_for(lambda: watcher.said("full pass over 4 workloads"), timeout=30, what="the first full pass, in parts")
    rows = [Workload.objects.get(pk=w.pk) for w in waiting]
    assert [(w.queue_position, w.pending_reason["type"], w.pending_reason["queueLength"]) for w in rows] == [
        (1, "NoNodeRoom", 3), (2, "NoNodeRoom", 3), (3, "NoNodeRoom", 3)]
    assert phase_of(running) == "Running"
    assert Workload.objects.get(pk=running.pk).queue_position is None
    wait_for(lambda: "orphan" not in [j.metadata.name for j in batch.list_namespaced_job(sim_org.namespace).items],
             timeout=10, what="the orphan deleted")


def test_warning_events_arrive_by_watch_with_their_reason_message_and_uid(sim_org, start_watcher):
    """The store keeps events packed (informer.Store): a Warning reaches the workload's events by watch, with its
    reason, its message and the cluster's uid (what records it once)."""
    watcher = start_watcher()
    wait_for(lambda: following(watcher, sim_org), what="the watcher to hold the lease")
    workload = make_workload(sim_org.project, "unpullable", image="registry.example.com/does-not-exist:1")
    push.workload_push(workload.pk)

    def warnings():
        return list(WorkloadEvent.objects.filter(workload=workload, source="cluster", type="Warning")
                    .values_list("reason", "message", "dedup_key"))

    wait_for(lambda: any("ErrImagePull" in message for _, message, _ in warnings()), timeout=30,
             what="the pull's Warning events, by watch")
    found = warnings()
    assert any(reason == "Failed" and "does-not-exist" in message for reason, message, _ in found), found
    events = client.CoreV1Api(official_client(sim_org.sim)).list_namespaced_event(
        sim_org.namespace, field_selector="type=Warning").items
    assert {key for _, _, key in found} <= {e.metadata.uid for e in events}


def test_a_queues_places_are_written_in_one_statement_with_their_shared_reason_bound_once(sim_org):
    """The waiting rows of one queue share their pendingReason (with the queue's length) and differ in their
    place: one statement writes them, the reason bound once rather than a copy per row (a watcher rewriting the
    places of a 4,000-row queue spent a fifth of its CPU on those copies, docs/performance.md)."""
    waiting = [make_workload(sim_org.project, f"huge-{i}", compute={"gpuDevicesRequest": 16}) for i in range(4)]
    for workload in waiting:
        push.workload_push(workload.pk)
    wait_for(lambda: all((Workload.objects.get(pk=w.pk).pending_reason or {}).get("type") == "NoNodeRoom"
                         for w in waiting), timeout=30,
             step=lambda: sync.cluster_sync(sim_org.cluster.pk), what="Pending for want of room, by rounds")
    Workload.objects.filter(pk__in=[w.pk for w in waiting]).update(queue_position=None, pending_reason=None)
    with CaptureQueriesContext(connection) as queries:
        sync.cluster_sync(sim_org.cluster.pk)
    rows = [Workload.objects.get(pk=w.pk) for w in waiting]
    assert [(w.queue_position, w.pending_reason["type"], w.pending_reason["queueLength"]) for w in rows] == [
        (1, "NoNodeRoom", 4), (2, "NoNodeRoom", 4), (3, "NoNodeRoom", 4), (4, "NoNodeRoom", 4)]
    writes = [q["sql"] for q in queries if q["sql"].startswith('UPDATE "workloads_workload"')
              and "queue_position" in q["sql"]]
    assert len(writes) == 1 and writes[0].count("queueLength") == 1, writes


def test_places_moved_by_others_are_written_later_than_the_workload_that_moved_them(sim_org, start_watcher):
    """A workload joining the queue is written by the pass that derives it; the places of the others, which
    moved only because it came (their queueLength), are written by the watcher at most every
    WATCH_PLACES_SECONDS: under churn every pass moved every queued row."""
    waiting = [make_workload(sim_org.project, f"huge-{i}", compute={"gpuDevicesRequest": 16}) for i in range(2)]
    for workload in waiting:
        push.workload_push(workload.pk)
    wait_for(lambda: all(phase_of(w) == "Pending" for w in waiting), timeout=30,
             step=lambda: sync.cluster_sync(sim_org.cluster.pk), what="Pending, by rounds")
    watcher = start_watcher(WATCH_PLACES_SECONDS=20)
    wait_for(lambda: watcher.said("full pass over 2 workloads"), timeout=30, what="the first full pass")

    def places():
        rows = [Workload.objects.get(pk=w.pk) for w in waiting]
        return [(w.queue_position, (w.pending_reason or {}).get("queueLength")) for w in rows]

    assert places() == [(1, 2), (2, 2)]
    latest = make_workload(sim_org.project, "huge-2", compute={"gpuDevicesRequest": 16})
    push.workload_push(latest.pk)
    wait_for(lambda: Workload.objects.get(pk=latest.pk).queue_position == 3, timeout=60,
             what="the newcomer derived by the watcher, third")
    assert Workload.objects.get(pk=latest.pk).pending_reason["queueLength"] == 3
    assert places() == [(1, 2), (2, 2)]  # not written in the newcomer's pass
    wait_for(lambda: places() == [(1, 3), (2, 3)], timeout=60, what="the others' queue lengths written later")


def test_writes_waiting_for_a_silent_cluster_go_within_a_probe_of_it_answering_not_a_tick(sim_org, start_watcher):
    """While the cluster is silent the watcher probes it every PROBE_SECONDS (0.5 s), not only each tick: with a
    20 s tick, a write parked during the outage is released within seconds of the API answering again."""
    watcher = start_watcher(SYNC_INTERVAL_SECONDS=20, SYNC_DISCONNECTED_AFTER_ROUNDS=100)
    wait_for(lambda: following(watcher, sim_org), what="the watcher to hold the lease")
    workload = make_workload(sim_org.project, "parked", annotations=run_seconds(600))
    sim_org.sim.set_faults(outage=True)
    tasks.workload_push(str(workload.pk))  # finds the cluster silent: marks it so and waits for it
    assert WaitingWrite.objects.filter(workload=workload, released_at__isnull=True).exists()
    wait_for(lambda: watcher.said(f"sync of cluster {sim_org.cluster.name} failed"), timeout=45,
             what="a tick's probe to find the cluster silent")
    sim_org.sim.set_faults(outage=False)  # right after a tick: the next one is 20 s away
    answered = time.monotonic()
    wait_for(lambda: WaitingWrite.objects.filter(workload=workload, released_at__isnull=False).exists(),
             timeout=30, what="the waiting push sent again")
    assert time.monotonic() - answered < 8
    assert ClusterReach.objects.get(cluster=sim_org.cluster).reachable


def test_a_watcher_that_starts_during_an_outage_sends_the_waiting_writes_within_a_probe_of_it_answering(
        sim_org, start_watcher):
    """Discovery fails while the cluster is silent: the watcher probes it every PROBE_SECONDS until it answers (not
    only each 20 s tick), sends the write parked meanwhile, and follows the cluster from then on."""
    workload = make_workload(sim_org.project, "parked", annotations=run_seconds(600))
    sim_org.sim.set_faults(outage=True)
    tasks.workload_push(str(workload.pk))
    assert WaitingWrite.objects.filter(workload=workload, released_at__isnull=True).exists()
    watcher = start_watcher(SYNC_INTERVAL_SECONDS=20, SYNC_DISCONNECTED_AFTER_ROUNDS=100)
    wait_for(lambda: watcher.said(f"sync of cluster {sim_org.cluster.name} failed"), timeout=45,
             what="discovery to find the cluster silent")
    sim_org.sim.set_faults(outage=False)
    answered = time.monotonic()
    wait_for(lambda: WaitingWrite.objects.filter(workload=workload, released_at__isnull=False).exists(),
             timeout=30, what="the waiting push sent again")
    assert time.monotonic() - answered < 8
    wait_for(lambda: watcher.said(f"watch of cluster {sim_org.cluster.name}: full pass over"), timeout=15,
             what="the watcher to list the cluster and pass over its workloads")


class HeldLease:
    def held(self) -> bool:
        return True


def test_a_cluster_silent_during_the_first_lists_is_probed_until_it_answers_not_a_tick(sim_org, settings):
    """The outage begins between discovery and the first lists (in-process, to pin that moment): once a tick finds
    it silent, the watcher probes it each PROBE_SECONDS, sends the write parked meanwhile within seconds of it
    answering, and lists again at once rather than after the next tick."""
    settings.SYNC_INTERVAL_SECONDS = 10
    workload = make_workload(sim_org.project, "parked", annotations=run_seconds(600))
    following = cluster_watcher.Following(sim_org.cluster, HeldLease(), threading.Event())
    following.conn = kube.connect(sim_org.cluster)
    following.groups = kube.api_groups(following.conn)
    sim_org.sim.set_faults(outage=True)
    tasks.workload_push(str(workload.pk))
    listed = []

    def first_lists():
        try:
            listed.append(following._wait_for_lists())
        finally:
            connection.close()

    lists = threading.Thread(target=first_lists, daemon=True)
    lists.start()
    try:
        wait_for(lambda: following.silent, timeout=30, what="a tick's probe to find the cluster silent")
        sim_org.sim.set_faults(outage=False)  # the next tick is 10 s away
        answered = time.monotonic()
        wait_for(lambda: WaitingWrite.objects.filter(workload=workload, released_at__isnull=False).exists(),
                 timeout=20, what="the waiting push sent again")
        assert time.monotonic() - answered < 5
        lists.join(timeout=20)
        assert listed == [True]
        assert time.monotonic() - answered < 8
    finally:
        following.stopping.set()
        following.stop_reflectors()
        lists.join(timeout=20)
