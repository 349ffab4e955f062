"""kubesim's KAI Scheduler (kubesim/node/kai.py, podgrouper.py), through the official client over HTTP: queues
with quota, limit and over-quota weight, idle GPUs lent over quota, reclaim of preemptible over-quota work,
preemption within a queue, gangs, fractions packed onto one GPU, and KAI's words for each."""

import re
import time

import pytest
from kubernetes import client

from kubesim import KubeSim
from kubesim.node.kai import EVENT_LAG_SECONDS, creation_ranks

from .conftest import TOKEN, api_client, wait_until

QUEUE_API = ("scheduling.run.ai", "v2", "queues")
PG_API = ("scheduling.run.ai", "v2alpha2")


@pytest.fixture
def kai():
    # 16 GPUs: two nodes of 8, as the scenario's node pool.
    sim = KubeSim(nodes=2, gpus_per_node=8, token=TOKEN, kai=True, pull_seconds=0.05, run_seconds=3600,
                  tick=0.02).start()
    with api_client(sim) as api:
        yield sim, api
    sim.stop()


def _queue(custom, name, *, gpu, limit=-1, weight=1, parent=None):
    body = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": name},
            "spec": {"resources": {"gpu": {"quota": gpu, "limit": limit, "overQuotaWeight": weight},
                                   "cpu": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
                                   "memory": {"quota": -1, "limit": -1, "overQuotaWeight": 1}}}}
    if parent:
        body["spec"]["parentQueue"] = parent
    return custom.create_cluster_custom_object(*QUEUE_API, body)


def _job(batch, ns, name, queue, gpus=1, cls="train", annotations=None):
    pod_meta = {"labels": {"kai.scheduler/queue": queue, "priorityClassName": cls}}
    if annotations:
        pod_meta["annotations"] = annotations
    resources = {"limits": {"nvidia.com/gpu": str(gpus)}} if gpus else {}
    body = {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "labels": {"kai.scheduler/queue": queue, "priorityClassName": cls}},
            "spec": {"backoffLimit": 100, "template": {"metadata": pod_meta, "spec": {
                "schedulerName": "kai-scheduler", "restartPolicy": "Never",
                "containers": [{"name": "main", "image": "busybox", "resources": resources}]}}}}
    return batch.create_namespaced_job(ns, body)


def _deployment(apps, ns, name, queue, cls="build", gpus=1, annotations=None):
    labels = {"app": name, "kai.scheduler/queue": queue, "priorityClassName": cls}
    resources = {"limits": {"nvidia.com/gpu": str(gpus)}} if gpus else {}
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": labels, "annotations": annotations or {}}, "spec": {
                         "schedulerName": "kai-scheduler",
                         "containers": [{"name": "main", "image": "busybox", "resources": resources}]}}}}
    return apps.create_namespaced_deployment(ns, body)


def _pods(core, ns, prefix):
    return [p for p in core.list_namespaced_pod(ns).items if p.metadata.name.startswith(prefix)]


def _running(core, ns, prefix):
    return [p for p in _pods(core, ns, prefix) if p.status.phase == "Running" and not p.metadata.deletion_timestamp]


def _events(core, ns, reason):
    return [e for e in core.list_namespaced_event(ns).items if e.reason == reason]


def test_queues_lend_idle_gpus_reclaim_over_quota_and_never_touch_non_preemptible(kai):
    sim, api = kai
    core, batch, apps, custom = (client.CoreV1Api(api), client.BatchV1Api(api), client.AppsV1Api(api),
                                 client.CustomObjectsApi(api))
    for ns in ("team-a", "team-b"):
        core.create_namespace({"metadata": {"name": ns}})
    _queue(custom, "dept", gpu=16)
    _queue(custom, "a", gpu=8, limit=16, parent="dept")
    _queue(custom, "b", gpu=8, limit=16, parent="dept")
    # A fills the pool with trainings, over its quota of 8: idle GPUs are lent, all 16 run.
    for i in range(16):
        _job(batch, "team-a", f"train-{i:02d}", "a")
    wait_until(lambda: len(_running(core, "team-a", "train-")) == 16, timeout=20)
    groups = custom.list_namespaced_custom_object(*PG_API, "team-a", "podgroups")["items"]
    assert len(groups) == 16 and {g["spec"]["queue"] for g in groups} == {"a"}
    assert {g["spec"]["priorityClassName"] for g in groups} == {"train"}
    assert all(g["metadata"]["name"].startswith("pg-train-") for g in groups)
    queue_a = wait_until(lambda: (q := custom.get_cluster_custom_object(*QUEUE_API, "a"))
                         .get("status", {}).get("allocated", {}).get("nvidia.com/gpu") == "16" and q)
    assert queue_a["status"]["requested"]["nvidia.com/gpu"] == "16"

    # A's workspace (build: non-preemptible) within its quota preempts one of A's own trainings.
    _deployment(apps, "team-a", "ws", "a", cls="build")
    wait_until(lambda: len(_running(core, "team-a", "ws-")) == 1, timeout=20)
    preempted = wait_until(lambda: [e for e in _events(core, "team-a", "Evict")
                                    if "preempted by higher priority workload team-a/pg-ws-" in e.message])
    assert preempted[0].involved_object.kind == "PodGroup"
    assert len(_running(core, "team-a", "train-")) == 15

    # B submits trainings up to its quota: A's over-quota trainings are reclaimed, A's workspace is not.
    for i in range(8):
        _job(batch, "team-b", f"train-{i}", "b")
    wait_until(lambda: len(_running(core, "team-b", "train-")) == 8, timeout=30)
    # KAI's Evict events reach the server after the pods' deletion (its recorder's queue), as on the real one.
    reclaims = wait_until(lambda: [e for e in _events(core, "team-a", "Evict")
                                   if "was preempted by workload team-b/" in e.message], timeout=10)
    time.sleep(2 * EVENT_LAG_SECONDS)  # every eviction's event is in by then
    reclaims = [e for e in _events(core, "team-a", "Evict") if "was preempted by workload team-b/" in e.message]
    assert len(reclaims) == 8  # the pool is full: 8 of A's 15 trainings go, A keeps its quota of 8
    assert all("\na uses <GPU: " in e.message and "\nb uses <GPU: " in e.message for e in reclaims)
    assert all(re.search(r"\na uses <GPU: \d+, CPU: 0 \(cores\), memory: 0 \(GB\)> with a quota of <GPU: 8, "
                         r"CPU: -1 \(cores\), memory: -1 \(GB\)>, fair-share of <GPU: \d+", e.message) for e in reclaims)
    assert len(_running(core, "team-a", "train-")) == 8 - 1 and len(_running(core, "team-a", "ws-")) == 1
    assert [e for e in _events(core, "team-a", "Evict") if "ws-" in e.involved_object.name] == []
    # The reclaimed trainings wait again, with KAI's reason on their pods and pod groups.
    waiting = [p for p in _pods(core, "team-a", "train-") if p.status.phase == "Pending"]
    assert len(waiting) == 9  # 8 reclaimed, and the one the workspace preempted
    told = wait_until(lambda: [c for p in _pods(core, "team-a", "train-") if p.status.phase == "Pending"
                               for c in p.status.conditions or [] if c.reason == "Unschedulable"])
    assert "no nodes with enough resources were found" in told[0].message or "OverLimit" in told[0].message

    # B's work ends: A's trainings run again, with no user action.
    for i in range(8):
        batch.delete_namespaced_job(f"train-{i}", "team-b", propagation_policy="Background")
    wait_until(lambda: len(_running(core, "team-a", "train-")) == 15, timeout=30)

    # Beyond the limit: accepted by the server, waits with KAI's OverLimit.
    _job(batch, "team-a", "extra", "a")
    group = wait_until(lambda: [g for g in custom.list_namespaced_custom_object(*PG_API, "team-a", "podgroups")["items"]
                                if g["metadata"]["name"].startswith("pg-extra-")
                                and (g.get("status") or {}).get("schedulingConditions")])
    condition = group[0]["status"]["schedulingConditions"][0]
    assert condition["type"] == "UnschedulableOnNodePool" and condition["reasons"][0]["reason"] == "OverLimit"
    assert condition["reasons"][0]["message"] == ("a quota has reached the allowable limit of GPUs. Limit is 16 GPUs, "
                                                  "currently 16 GPUs allocated and workload requested 1 GPUs")

    # A limit lowered on the queue holds the next allocation to it (running work is not evicted for it).
    custom.patch_cluster_custom_object(*QUEUE_API, "a", {"spec": {"resources": {"gpu": {"limit": 10}}}})
    wait_until(lambda: [e for e in _events(core, "team-a", "Unschedulable") if e.involved_object.kind == "PodGroup"
                        and "Limit is 10 GPUs, currently 16 GPUs allocated" in e.message])
    assert len(_running(core, "team-a", "train-")) == 15


def test_fractions_share_one_gpu_and_count_as_fractions(kai):
    sim, api = kai
    core, apps, custom = client.CoreV1Api(api), client.AppsV1Api(api), client.CustomObjectsApi(api)
    core.create_namespace({"metadata": {"name": "team-a"}})
    _queue(custom, "a", gpu=1, limit=1)
    for name in ("half-1", "half-2"):
        _deployment(apps, "team-a", name, "a", gpus=0, annotations={"gpu-fraction": "0.5"})
    pods = wait_until(lambda: len(r := _running(core, "team-a", "half-")) == 2 and r, timeout=20)
    # The same node, the same GPU: KAI's binder gives pods that share a device one GPU group.
    assert len({p.spec.node_name for p in pods}) == 1
    groups = {p.metadata.labels.get("runai-gpu-group") for p in pods}
    assert len(groups) == 1 and None not in groups
    queue = wait_until(lambda: (q := custom.get_cluster_custom_object(*QUEUE_API, "a"))
                       .get("status", {}).get("allocatedNonPreemptible", {}).get("nvidia.com/gpu") == "1" and q)
    assert queue["status"]["allocated"]["nvidia.com/gpu"] == "1"


def test_non_preemptible_work_stays_within_quota(kai):
    sim, api = kai
    core, apps, custom = client.CoreV1Api(api), client.AppsV1Api(api), client.CustomObjectsApi(api)
    core.create_namespace({"metadata": {"name": "team-a"}})
    _queue(custom, "a", gpu=1, limit=-1)
    _deployment(apps, "team-a", "ws-1", "a")
    wait_until(lambda: _running(core, "team-a", "ws-1"), timeout=20)
    _deployment(apps, "team-a", "ws-2", "a")
    told = wait_until(lambda: [e for e in _events(core, "team-a", "Unschedulable") if "ws-2" in e.involved_object.name
                               and e.involved_object.kind == "Pod"], timeout=20)
    assert told[0].message.startswith("NonPreemptibleOverQuota: Non-preemptible workload is over quota. Workload "
                                      "requested 1 GPUs, but a quota is 1 GPUs, while 1 GPUs are already allocated")


def test_a_gang_starts_whole_or_not_at_all(kai):
    sim, api = kai
    core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
    core.create_namespace({"metadata": {"name": "team-a"}})
    _queue(custom, "a", gpu=16)
    labels = {"kai.scheduler/queue": "a"}
    replica = {"replicas": 1, "template": {"spec": {"schedulerName": "kai-scheduler", "containers": [
        {"name": "pytorch", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": "8"}}}]}}}
    body = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "big", "labels": labels},
            "spec": {"pytorchReplicaSpecs": {"Master": replica, "Worker": {**replica, "replicas": 2}}}}
    custom.create_namespaced_custom_object("kubeflow.org", "v1", "team-a", "pytorchjobs", body)
    group = wait_until(lambda: [g for g in custom.list_namespaced_custom_object(*PG_API, "team-a", "podgroups")["items"]
                                if (g.get("status") or {}).get("schedulingConditions")], timeout=20)
    assert group[0]["spec"]["minMember"] == 3
    assert "Resources were found for 2 pods while 3 are required for gang scheduling" in \
        group[0]["status"]["schedulingConditions"][0]["message"]
    assert _running(core, "team-a", "big-") == []


def test_equal_jobs_start_in_their_pod_groups_creation_then_uid_order(kai):
    """As KAI's Session.JobOrderFn: the PodGroup's creationTimestamp (whole seconds), then its UID; several made
    within one second go by their UIDs, not in the order their pods came."""
    sim, api = kai
    core, batch, custom = client.CoreV1Api(api), client.BatchV1Api(api), client.CustomObjectsApi(api)
    core.create_namespace({"metadata": {"name": "team-a"}})
    _queue(custom, "a", gpu=1, limit=1)
    _job(batch, "team-a", "hold", "a")
    wait_until(lambda: _running(core, "team-a", "hold-"), timeout=20)
    for i in range(4):
        _job(batch, "team-a", f"wait-{i}", "a")

    def waiting_groups():
        groups = [g for g in custom.list_namespaced_custom_object(*PG_API, "team-a", "podgroups")["items"]
                  if g["metadata"]["name"].startswith("pg-wait-")]
        return len(groups) == 4 and groups

    groups = wait_until(waiting_groups, timeout=20)
    first = min(groups, key=lambda g: (g["metadata"]["creationTimestamp"], g["metadata"]["uid"]))
    batch.delete_namespaced_job("hold", "team-a", propagation_policy="Background")
    started = wait_until(lambda: _running(core, "team-a", "wait-"), timeout=20)
    assert [p.metadata.owner_references[0].name for p in started] == \
        [first["metadata"]["ownerReferences"][0]["name"]]


def test_creation_ranks_order_by_creation_second_then_uid():
    ranks = creation_ranks({("n", "late"): (7.0, "0"), ("n", "tie-b"): (5.0, "b"), ("n", "tie-a"): (5.0, "a"),
                            ("n", "unknown"): (None, "")})
    assert sorted(ranks, key=ranks.get) == [("n", "tie-a"), ("n", "tie-b"), ("n", "late"), ("n", "unknown")]
