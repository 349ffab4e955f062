"""workloads.cluster.pending: why a waiting workload waits and its place in its node pool's queue (pure)."""

from datetime import UTC, datetime, timedelta

import pytest

from workloads.cluster import pending

T0 = datetime(2026, 1, 1, tzinfo=UTC)
UNSCHEDULABLE = {"status": {"phase": "Pending", "conditions": [{
    "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
    "message": "0/4 nodes are available: 4 Insufficient cpu, 4 Insufficient nvidia.com/gpu."}]}}
PULLING = {"spec": {"containers": [{"name": "main", "image": "reg/does-not-exist:1"}]},
           "status": {"phase": "Pending", "containerStatuses": [{"name": "main", "state": {"waiting": {
               "reason": "ImagePullBackOff", "message": "Back-off pulling image"}}}]}}


def test_an_unschedulable_pod_names_every_resource_no_node_has_free():
    reason = pending.cluster_reason("Pending", "…", [UNSCHEDULABLE], [], pool="default")
    assert reason["type"] == "NoNodeRoom"
    assert reason["resource"] == "cpu" and reason["resources"] == ["cpu", "nvidia.com/gpu"]
    assert "node pool default" in reason["message"] and "cpu, nvidia.com/gpu" in reason["message"]
    assert reason["schedulerMessage"].startswith("0/4 nodes are available")


def test_the_schedulers_event_counts_when_the_pod_has_no_condition_yet_and_other_words_are_kept():
    event = {"type": "Warning", "reason": "FailedScheduling",
             "message": "0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector."}
    reason = pending.cluster_reason("Pending", "", [{"status": {"phase": "Pending"}}], [event], pool="a100")
    assert reason["type"] == "Unschedulable" and reason["nodePool"] == "a100"
    assert "node affinity" in reason["message"] and "resource" not in reason


def test_an_image_that_cannot_be_pulled_is_the_reason_with_the_image_named():
    reason = pending.cluster_reason("Initializing", "ImagePullBackOff: …", [UNSCHEDULABLE, PULLING], [], pool="x")
    assert reason == {"type": "ImagePull", "image": "reg/does-not-exist:1", "reason": "ImagePullBackOff",
                      "message": "Image reg/does-not-exist:1 cannot be pulled (ImagePullBackOff): Back-off pulling image"}


@pytest.mark.parametrize(("phase", "expected"), [
    ("Creating", "Creating"), ("Pending", "Scheduling"), ("Initializing", "Starting"), ("Resuming", "Starting"),
    ("Running", None), ("Failed", None), ("Completed", None), ("Stopped", None),
])
def test_only_waiting_phases_have_a_reason(phase, expected):
    reason = pending.cluster_reason(phase, "", [], [], pool="default")
    assert (reason or {}).get("type") == expected


@pytest.mark.parametrize("junk", [None, "x", [1, None], [{"status": "nope"}], [{"status": {"conditions": 3}}]])
def test_partial_objects_never_raise(junk):
    assert pending.cluster_reason("Pending", "", junk, junk, pool="default")["type"] == "Scheduling"


def row(id, *, phase="Pending", pool="default", gpus=1.0, at=0, quotas=(), kind="training", ends_at=None):
    return pending.Row(id=id, kind=kind, phase=phase, pool=pool, gpus=gpus, submitted=T0 + timedelta(seconds=at),
                       quotas=list(quotas), ends_at=ends_at)


def test_positions_count_pending_workloads_of_the_same_pool_by_submission():
    rows = [row("c", at=3), row("a", at=1), row("r", phase="Running", at=0), row("b", at=2),
            row("x", pool="other", at=0), row("i", phase="Initializing", at=0)]
    places = pending.queue(rows)
    assert {k: (p.position, p.of) for k, p in places.items()} == {"a": (1, 3), "b": (2, 3), "c": (3, 3), "x": (1, 1)}


def test_over_quota_counts_what_is_held_and_what_is_queued_ahead_and_says_whose_and_by_how_much():
    project = pending.Quota("project", "team-a", None, deserved=4, limit=10)
    department = pending.Quota("department", "research", "default", deserved=6, limit=12)
    rows = [row("run", phase="Running", gpus=6, quotas=[project, department]),
            row("first", gpus=4, at=1, quotas=[project, department]),
            row("second", gpus=2, at=2, quotas=[project, department])]
    places = pending.queue(rows)
    assert places["first"].over_quota is None  # 6 + 4 = 10: the project's limit, within the department's 12
    over = places["second"].over_quota  # 6 + 4 + 2 = 12 > 10
    assert over["scope"] == "project" and over["scopeName"] == "team-a" and over["quota"] == "limit"
    assert (over["used"], over["requested"], over["allowed"], over["over"]) == (10, 2, 10, 2)
    assert "project team-a" in over["message"] and "(2 over)" in over["message"]


def test_a_workspace_is_held_to_the_deserved_gpus_and_a_pool_quota_names_its_pool():
    pool_quota = pending.Quota("department", "research", "a100", deserved=2, limit=-1)
    places = pending.queue([row("w", kind="workspace", pool="a100", gpus=3, quotas=[pool_quota])])
    over = places["w"].over_quota
    assert over["quota"] == "deserved" and over["over"] == 1 and "in node pool a100" in over["message"]
    unlimited = pending.Quota("project", "p", None, deserved=None, limit=-1)
    assert pending.over_quota("training", 99, 99, unlimited) is None
    assert pending.over_quota("training", 0, 99, pending.Quota("project", "p", None, 0, 0)) is None


def test_quotas_of_reads_the_gpu_entry_of_the_pool_from_project_and_department():
    entries = [{"nodePool": {"id": "1", "name": "default"}, "gpu": {"deserved": 2, "limit": 4}},
               {"nodePool": {"id": "2", "name": "a100"}, "gpu": {"deserved": 1}}, "junk", {"nodePool": None}]
    quotas = pending.quotas_of(project="p", deserved="8.00", limit=None, project_pools=entries,
                               department="d", department_pools=entries[1:], pool="a100")
    assert quotas == [pending.Quota("project", "p", None, 8.0, None), pending.Quota("project", "p", "a100", 1, None),
                      pending.Quota("department", "d", "a100", 1, None)]


def test_the_estimate_is_when_known_ends_free_the_gpus_of_the_workload_and_those_ahead():
    soon, later = T0 + timedelta(minutes=5), T0 + timedelta(minutes=30)
    rows = [row("r1", phase="Running", gpus=4, ends_at=later), row("r2", phase="Running", gpus=4, ends_at=soon),
            row("r3", phase="Running", gpus=8),  # no known end
            row("a", gpus=4, at=1), row("b", gpus=4, at=2), row("c", gpus=4, at=3), row("cpu", gpus=0, at=4)]
    places = pending.queue(rows)
    assert places["a"].estimated_start == soon and places["b"].estimated_start == later
    assert places["c"].estimated_start is None and places["cpu"].estimated_start is None
    assert pending.ends_at("training", T0, {"trainingJobTimeLimitSeconds": 60}) == T0 + timedelta(minutes=1)
    assert pending.ends_at("inference", T0, {"trainingJobTimeLimitSeconds": 60}) is None


def test_the_answer_puts_over_quota_first_keeps_the_schedulers_words_and_adds_the_queue():
    cluster = pending.cluster_reason("Pending", "", [UNSCHEDULABLE], [], pool="default")
    over = pending.over_quota("training", 2, 10, pending.Quota("project", "p", None, 4, 10))
    reason, position = pending.answer(cluster, pending.Place(2, 3, over, T0))
    assert reason["type"] == "OverQuota" and reason["schedulerMessage"] == cluster["schedulerMessage"]
    assert (position, reason["queueLength"], reason["estimatedStartAt"]) == (2, 3, "2026-01-01T00:00:00Z")
    reason, position = pending.answer(cluster, pending.Place(1, 1, None, None))
    assert reason["type"] == "NoNodeRoom" and position == 1 and reason["estimatedStartAt"] is None
    assert pending.answer(None, None) == (None, None)
