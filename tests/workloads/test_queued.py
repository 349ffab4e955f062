"""Why a workload waits on a KAI cluster, in KAI's words (workloads.cluster.queued): table tests on the objects
KAI writes (v0.12's messages and PodGroup conditions)."""

from datetime import UTC, datetime, timedelta

from workloads.cluster import queued

UNITS = {"a": ("project", "a"), "research.department": ("department", "research")}
OWNERS = {("studio-b", "pg-b-train-0-1"): queued.Owner("b", "b-train-0"),
          ("studio-a", "pg-ws-x-2"): queued.Owner("a", "notebook")}
RECLAIM = ("Pod studio-a/a-train-14-x was preempted by workload studio-b/pg-b-train-0-1.\na uses <GPU: 16, CPU: 0 "
           "(cores), memory: 0 (GB)> with a quota of <GPU: 8, …> and queue priority of <100>.\nb uses <…>.")


def pending_pod(message: str) -> dict:
    return {"status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                                                           "reason": "Unschedulable", "message": message}]}}


def group(reason: str, message: str, details=None) -> dict:
    explanation = {"reason": reason, "message": message, **({"details": details} if details else {})}
    return {"status": {"schedulingConditions": [{"type": "UnschedulableOnNodePool", "status": "True",
                                                 "nodePool": "default", "reason": "Unschedulable",
                                                 "message": f"{reason}: {message}.", "reasons": [explanation]}]}}


def test_evictions_name_whose_quota_took_the_gpus_back():
    found = queued.eviction({"message": RECLAIM, "lastTimestamp": "2026-01-01T00:00:05Z"}, OWNERS)
    assert found["type"] == "Reclaimed" and found["at"] == "2026-01-01T00:00:05Z"
    assert found["reclaimedBy"] == {"namespace": "studio-b", "podGroup": "pg-b-train-0-1", "project": "b",
                                    "workload": "b-train-0"}
    assert found["message"].startswith("Reclaimed: project b (workload b-train-0) took back GPUs")
    assert found["schedulerMessage"] == RECLAIM
    preempted = queued.eviction({"message": "Pod studio-a/t-1 was preempted by higher priority workload "
                                            "studio-a/pg-ws-x-2"}, OWNERS)
    assert preempted["type"] == "Preempted" and preempted["preemptedBy"]["workload"] == "notebook"
    assert queued.eviction({"message": "Pod a/b was preempted and rescheduled due to bin packing (resource "
                                       "consolidation) procedure"}, {})["type"] == "Consolidated"
    stranger = queued.eviction({"message": "Pod a/b was preempted by workload other/pg-x-1."}, OWNERS)
    assert stranger["reclaimedBy"] == {"namespace": "other", "podGroup": "pg-x-1"}
    assert "namespace other" in stranger["message"]
    assert queued.eviction({"message": "Job is stale."}, OWNERS) is None


def test_over_the_limit_names_the_queue_its_project_and_the_numbers():
    message = ("a quota has reached the allowable limit of GPUs. Limit is 16 GPUs, currently 16 GPUs allocated and "
               "workload requested 1 GPUs")
    details = {"queueDetails": {"name": "a", "queueResourceLimits": {"nvidia.com/gpu": "16"},
                                "queueAllocatedResources": {"nvidia.com/gpu": "16"},
                                "podGroupRequestedResources": {"nvidia.com/gpu": "1"}}}
    reason = queued.waiting_now("Pending", "", [pending_pod("OverLimit: " + message)],
                                [group("OverLimit", message, details)], pool="default", units=UNITS)
    assert {k: reason[k] for k in ("type", "schedulerReason", "scope", "scopeName", "quota", "resource", "allowed",
                                   "used", "requested", "over")} == {
        "type": "OverQuota", "schedulerReason": "OverLimit", "scope": "project", "scopeName": "a", "quota": "limit",
        "resource": "nvidia.com/gpu", "allowed": 16.0, "used": 16.0, "requested": 1.0, "over": 1.0}
    assert reason["schedulerMessage"] == message and "limit of project a" in reason["message"]


def test_a_departments_limit_and_a_non_preemptible_workload_over_its_quota():
    parent = queued.waiting_now("Pending", "", [], [group(
        "OverLimit", "research.department quota has reached the allowable limit of GPUs. Limit is 4 GPUs, …")],
        pool="default", units=UNITS)
    assert (parent["scope"], parent["scopeName"], parent["queue"]) == ("department", "research",
                                                                       "research.department")
    text = ("Non-preemptible workload is over quota. Workload requested 1 GPUs, but a quota is 1 GPUs, while 1 GPUs "
            "are already allocated for non-preemptible pods. Use a preemptible workload to go over quota.")
    reason = queued.waiting_now("Pending", "", [], [group("NonPreemptibleOverQuota", text)], pool="p", units=UNITS)
    assert (reason["quota"], reason["scopeName"], reason["schedulerReason"]) == ("deserved", "a",
                                                                                 "NonPreemptibleOverQuota")
    # Said on the pod only (no condition on its PodGroup yet): the same reason from the words.
    said = queued.waiting_now("Pending", "", [pending_pod(f"NonPreemptibleOverQuota: {text}.")], [], pool="p",
                              units=UNITS)
    assert (said["type"], said["quota"], said["scopeName"]) == ("OverQuota", "deserved", "a")


def test_no_node_with_room_in_kais_words():
    words = "no nodes with enough resources were found: 2 node(s) didn't have enough resources: GPUs."
    reason = queued.waiting_now("Pending", "", [pending_pod(words)], [group(
        "PodSchedulingErrors", f"Resources were not found for pod a/x due to: {words}")], pool="pool-a", units=UNITS)
    assert (reason["type"], reason["resources"], reason["nodePool"]) == ("NoNodeRoom", ["nvidia.com/gpu"], "pool-a")
    assert reason["schedulerMessage"] == words
    gang = ("Resources were found for 2 pods while 3 are required for gang scheduling. Additional pods cannot be "
            "scheduled due to: no nodes with enough resources were found: 2 node(s) didn't have enough resources: "
            "CPU cores.")
    assert queued.waiting_now("Pending", "", [], [group("PodSchedulingErrors", gang)], pool="d",
                              units=UNITS)["resources"] == ["cpu"]
    assert queued.waiting_now("Pending", "", [], [group("QueueDoesNotExist", "Queue x does not exist")], pool="d",
                              units=UNITS)["type"] == "Unschedulable"


def test_placed_workloads_do_not_keep_what_the_scheduler_said_before():
    stale = [group("OverLimit", "a quota has reached the allowable limit of GPUs. …")]
    assert queued.waiting_now("Initializing", "", [], stale, pool="d", units=UNITS)["type"] == "Starting"
    assert queued.waiting_now("Running", "", [], stale, pool="d", units=UNITS) is None
    assert queued.waiting_now("Pending", "", [], [], pool="d", units=UNITS)["type"] == "Scheduling"


def test_an_eviction_is_told_from_when_it_stops_running_until_it_runs_again():
    words = "no nodes with enough resources were found: 2 node(s) didn't have enough resources: GPUs."
    evicted = queued.eviction({"message": RECLAIM, "lastTimestamp": "2026-01-01T00:00:05Z"}, OWNERS)
    first = queued.why("Pending", "", [pending_pod(words)], [], [evicted], pool="d", units=UNITS, previous=None,
                       was_running=True)
    assert first["type"] == "Reclaimed" and first["waitingFor"]["type"] == "NoNodeRoom"
    # The next rounds: no longer "just stopped"; the eviction is kept from the stored reason, what it waits for
    # follows the scheduler.
    later = queued.why("Pending", "", [], [group("OverLimit", "a quota has reached the allowable limit of GPUs.")],
                       [], pool="d", units=UNITS, previous=first, was_running=False)
    assert later["type"] == "Reclaimed" and later["waitingFor"]["schedulerReason"] == "OverLimit"
    assert later["reclaimedBy"]["project"] == "b"
    # Running again: nothing; a workload that merely waits was not evicted.
    assert queued.why("Running", "", [], [], [evicted], pool="d", units=UNITS, previous=later, was_running=False) \
        is None
    assert queued.why("Pending", "", [pending_pod(words)], [], [evicted], pool="d", units=UNITS, previous=None,
                      was_running=False)["type"] == "NoNodeRoom"


def test_an_eviction_first_seen_before_the_evicting_group_is_named_once_the_cluster_lists_that_group():
    words = "no nodes with enough resources were found: 2 node(s) didn't have enough resources: GPUs."
    # The round that saw the eviction listed the PodGroups a moment before the reclaimer's was made: only its
    # namespace's project is known then.
    first = queued.why("Pending", "", [pending_pod(words)], [],
                       [queued.eviction({"message": RECLAIM, "lastTimestamp": "2026-01-01T00:00:05Z"},
                                        {("studio-b", ""): queued.Owner("b")})],
                       pool="d", units=UNITS, previous=None, was_running=True)
    assert "workload" not in first["reclaimedBy"]
    later = queued.why("Pending", "", [pending_pod(words)], [],
                       [queued.eviction({"message": RECLAIM, "lastTimestamp": "2026-01-01T00:00:05Z"}, OWNERS)],
                       pool="d", units=UNITS, previous=first, was_running=False)
    assert later["reclaimedBy"]["workload"] == "b-train-0"
    assert later["message"].startswith("Reclaimed: project b (workload b-train-0) took back GPUs")


def test_the_queue_of_each_project_in_kais_order():
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    rows = [queued.Row("t1", "a", "Pending", 50, t0), queued.Row("ws", "a", "Pending", 100, t0 + timedelta(1)),
            queued.Row("t2", "a", "Pending", 50, t0 + timedelta(2)), queued.Row("run", "a", "Running", 50, t0),
            queued.Row("b1", "b", "Pending", 50, t0 + timedelta(3))]
    places = queued.queue(rows)
    assert {k: (p.position, p.of) for k, p in places.items()} == {"ws": (1, 3), "t1": (2, 3), "t2": (3, 3),
                                                                  "b1": (1, 1)}


def made(at: str, uid: str) -> dict:
    return {"metadata": {"name": f"pg-{uid}", "creationTimestamp": at, "uid": uid}}


def test_equal_priorities_go_by_their_pod_groups_creation_then_uid_not_by_submission():
    """KAI's Session.JobOrderFn: the PodGroup's creationTimestamp (whole seconds), then its UID."""
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    assert queued.created_order([made("2026-01-01T00:00:07Z", "b"), made("2026-01-01T00:00:05Z", "c")]) == \
        (t0 + timedelta(seconds=5), "c")
    assert queued.created_order([]) is None and queued.created_order([{"metadata": {"uid": "x"}}]) is None
    rows = [
        # submitted first, but its pod (so its PodGroup) came a second later
        queued.Row("first", "a", "Pending", 50, t0, queued.created_order([made("2026-01-01T00:00:06Z", "0")])),
        # both made within one second: the lower UID goes first, whichever was submitted first
        queued.Row("second", "a", "Pending", 50, t0 + timedelta(seconds=1),
                   queued.created_order([made("2026-01-01T00:00:05Z", "f")])),
        queued.Row("third", "a", "Pending", 50, t0 + timedelta(seconds=2),
                   queued.created_order([made("2026-01-01T00:00:05Z", "e")])),
        # no PodGroup yet: KAI does not see it, it comes last
        queued.Row("early", "a", "Pending", 50, t0 - timedelta(seconds=9), None),
        # a higher priority goes first, however late its PodGroup
        queued.Row("ws", "a", "Pending", 100, t0 + timedelta(seconds=3),
                   queued.created_order([made("2026-01-01T00:00:09Z", "1")])),
    ]
    places = queued.queue(rows)
    assert sorted(places, key=lambda w: places[w].position) == ["ws", "third", "second", "first", "early"]
