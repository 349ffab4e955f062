"""The scheduler adapter's pure part (studio.clusters.scheduler): Run:ai's organisation as KAI queues, a queue's
status in Run:ai's units, and what the nodes offer."""

import pytest

from studio.clusters import scheduler as sched

POOL = {"nodePool": {"id": "1", "name": "default"}}


@pytest.mark.parametrize("entries, totals, gpu, cpu, memory", [
    # No per-pool quotas: the project's GPU totals; CPU and memory unbounded (a quota of 0 would hold them).
    ([], (4, None), {"quota": 4, "limit": -1, "overQuotaWeight": 1}, {"quota": -1, "limit": -1, "overQuotaWeight": 1},
     {"quota": -1, "limit": -1, "overQuotaWeight": 1}),
    ([], (0, 2), {"quota": 0, "limit": 2, "overQuotaWeight": 1}, {"quota": -1, "limit": -1, "overQuotaWeight": 1},
     {"quota": -1, "limit": -1, "overQuotaWeight": 1}),
    # Two pools: summed; a pool without a limit leaves the whole without one; the largest weight.
    ([{**POOL, "gpu": {"deserved": 2, "limit": 4, "overQuotaWeight": 3}},
      {"nodePool": {"id": "2", "name": "b"}, "gpu": {"deserved": 1, "limit": None, "overQuotaWeight": 1}}],
     (0, None), {"quota": 3, "limit": -1, "overQuotaWeight": 3}, {"quota": -1, "limit": -1, "overQuotaWeight": 1},
     {"quota": -1, "limit": -1, "overQuotaWeight": 1}),
    # CPU in millicores as Run:ai's `Resources.cpu` and KAI's queue both count it; memory in its units -> MB; -1
    # stays unlimited.
    ([{**POOL, "gpu": {"deserved": 8, "limit": 16}, "cpu": {"deserved": 2500, "limit": 4000},
       "memory": {"deserved": 2, "limit": -1, "units": "GB"}}],
     (0, None), {"quota": 8, "limit": 16, "overQuotaWeight": 1}, {"quota": 2500, "limit": 4000, "overQuotaWeight": 1},
     {"quota": 2000, "limit": -1, "overQuotaWeight": 1}),
    ([{**POOL, "gpu": {"deserved": -1, "limit": -1}}], (0, None), {"quota": -1, "limit": -1, "overQuotaWeight": 1},
     {"quota": -1, "limit": -1, "overQuotaWeight": 1}, {"quota": -1, "limit": -1, "overQuotaWeight": 1}),
])
def test_a_projects_resources_become_its_queues(entries, totals, gpu, cpu, memory):
    assert sched.queue_resources(entries, gpu_deserved=totals[0], gpu_limit=totals[1]) == {
        "gpu": gpu, "cpu": cpu, "memory": memory}


def test_departments_are_parents_named_apart_from_any_project_and_only_where_they_have_projects():
    queues = sched.desired_queues(
        [{"name": "research", "resources": []}, {"name": "empty", "resources": []},
         {"name": "ops", "resources": [{**POOL, "gpu": {"deserved": 10, "limit": 12}}]}],
        [{"name": "a", "department": "research", "resources": [], "gpu_deserved": 8, "gpu_limit": 16},
         {"name": "b", "department": "research", "resources": [], "gpu_deserved": 4, "gpu_limit": None},
         {"name": "c", "department": "ops", "resources": [], "gpu_deserved": 1, "gpu_limit": 1}])
    names = [q["metadata"]["name"] for q in queues]
    assert names == ["research.department", "ops.department", "a", "b", "c"]  # parents first
    by = {q["metadata"]["name"]: q for q in queues}
    # A department without quotas guarantees what its projects do, with no limit; one with quotas, its own.
    assert by["research.department"]["spec"]["resources"]["gpu"] == {"quota": 12, "limit": -1, "overQuotaWeight": 1}
    assert by["ops.department"]["spec"]["resources"]["gpu"] == {"quota": 10, "limit": 12, "overQuotaWeight": 1}
    assert by["a"]["spec"]["parentQueue"] == "research.department"
    assert by["a"]["metadata"]["labels"] == {"app.kubernetes.io/managed-by": "paas-studio",
                                             "paas-studio/org-unit": "project"}
    assert by["a"]["apiVersion"] == "scheduling.run.ai/v2" and by["a"]["kind"] == "Queue"


def test_a_queue_differs_when_its_quotas_or_parent_do_and_not_for_fields_of_its_own():
    desired = sched.project_queue_manifest(name="a", department="d", resources=[], gpu_deserved=1, gpu_limit=2)
    current = {"spec": {**desired["spec"], "priority": 100}}  # KAI's own default: ours to leave alone
    assert not sched.spec_differs(current, desired)
    lowered = {"spec": {**desired["spec"], "resources": {**desired["spec"]["resources"],
                                                         "gpu": {"quota": 0, "limit": 2, "overQuotaWeight": 1}}}}
    assert sched.spec_differs(lowered, desired)
    assert sched.spec_differs({"spec": {**desired["spec"], "parentQueue": "other"}}, desired)


def test_placement_labels_use_kais_class_names_and_say_preemptibility_only_for_known_classes():
    assert sched.Placement("a", "train").labels() == {"kai.scheduler/queue": "a", "priorityClassName": "train",
                                                      "kai.scheduler/preemptibility": "preemptible"}
    assert sched.Placement("a", "build").labels()["kai.scheduler/preemptibility"] == "non-preemptible"
    assert sched.Placement("a", "interactive-preemptible").labels()["priorityClassName"] == "build-preemptible"
    assert "kai.scheduler/preemptibility" not in sched.Placement("a", "gold").labels()


def test_queue_status_in_runai_units_and_its_summary():
    queue = {"metadata": {"name": "a"},
             "spec": {"resources": {"gpu": {"quota": 8, "limit": 16, "overQuotaWeight": 1}}},
             "status": {"allocated": {"nvidia.com/gpu": "12500m", "cpu": "3", "memory": "2Gi"},
                        "allocatedNonPreemptible": {"nvidia.com/gpu": "1"},
                        "requested": {"nvidia.com/gpu": "20", "cpu": "4500m"}}}
    status = sched.queue_status(queue)
    assert status["allocated"] == {"gpu": 12.5, "cpu": 3000.0, "memory": 2147.484}
    assert status["requested"] == {"gpu": 20.0, "cpu": 4500.0, "memory": 0.0}
    summary = sched.summary({**status, "queue": "a", "at": "t"})
    assert summary == {"queue": "a", "deserved": 8.0, "limit": 16.0, "overQuotaWeight": 1, "allocated": 12.5,
                       "allocatedNonPreemptible": 1.0, "requested": 20.0, "overQuota": 4.5, "waiting": 7.5, "at": "t"}
    assert sched.summary({}) is None


def test_gpu_capacity_of_the_nodes():
    nodes = [{"status": {"allocatable": {"nvidia.com/gpu": "8"}}}, {"status": {"allocatable": {"cpu": "4"}}},
             {"status": {"allocatable": {"nvidia.com/gpu": "4"}}}]
    assert sched.gpu_capacity(nodes) == {"total": 12, "largestNode": 8}
    assert sched.gpu_capacity([]) == {"total": 0, "largestNode": 0}


def test_an_unlimited_project_does_not_lower_its_departments_guarantee():
    """A project's deserved of -1 (unlimited) adds nothing to a department without quotas of its own: summed as
    -1, it would take a GPU off what its teammates are guaranteed."""
    queues = sched.desired_queues(
        [{"name": "research", "resources": []}],
        [{"name": "a", "department": "research", "resources": [], "gpu_deserved": 4, "gpu_limit": None},
         {"name": "b", "department": "research", "resources": [{**POOL, "gpu": {"deserved": -1, "limit": -1}}],
          "gpu_deserved": 0, "gpu_limit": None}])
    department = {q["metadata"]["name"]: q for q in queues}["research.department"]
    assert department["spec"]["resources"]["gpu"]["quota"] == 4


def test_each_pool_is_a_shard_with_its_own_queues_and_quotas():
    pool = lambda name, deserved, limit: {"nodePool": {"name": name},  # noqa: E731
                                           "gpu": {"deserved": deserved, "limit": limit, "overQuotaWeight": 1}}
    queues = sched.desired_queues(
        [{"name": "research", "resources": [pool("pool-a", 6, 8)]}],
        [{"name": "nlp", "department": "research", "resources": [pool("pool-a", 2, 4), pool("pool-b", 6, 6)],
          "gpu_deserved": 0, "gpu_limit": None},
         {"name": "old", "department": "research", "resources": [], "gpu_deserved": 3, "gpu_limit": 5}],
        [{"name": "default", "default": True}, {"name": "pool-a"}, {"name": "pool-b"}])
    by = {q["metadata"]["name"]: q for q in queues}
    assert set(by) == {"research.department", "old", "research.department.pool-a", "nlp.pool-a",
                       "research.department.pool-b", "nlp.pool-b"}
    # Each pool's numbers, not a sum: nlp may hold 4 in pool-a whatever it has in pool-b.
    assert by["nlp.pool-a"]["spec"]["resources"]["gpu"] == {"quota": 2, "limit": 4, "overQuotaWeight": 1}
    assert by["nlp.pool-b"]["spec"]["resources"]["gpu"] == {"quota": 6, "limit": 6, "overQuotaWeight": 1}
    assert by["nlp.pool-a"]["spec"]["parentQueue"] == "research.department.pool-a"
    assert by["research.department.pool-a"]["spec"]["resources"]["gpu"] == {"quota": 6, "limit": 8,
                                                                            "overQuotaWeight": 1}
    # A department without quota in a pool guarantees there what its projects do, with no limit.
    assert by["research.department.pool-b"]["spec"]["resources"]["gpu"] == {"quota": 6, "limit": -1,
                                                                            "overQuotaWeight": 1}
    # The shard's partition label on every queue of a pool; none on the default pool's (KAI's default shard).
    assert by["nlp.pool-a"]["metadata"]["labels"]["kai.scheduler/node-pool"] == "pool-a"
    assert "kai.scheduler/node-pool" not in by["old"]["metadata"]["labels"]
    assert by["old"]["spec"]["resources"]["gpu"] == {"quota": 3, "limit": 5, "overQuotaWeight": 1}
    assert sched.Placement("nlp.pool-a", "train", pool="pool-a").labels()["kai.scheduler/node-pool"] == "pool-a"


def test_nodes_get_their_pools_partition_label_and_lose_it_when_they_leave():
    pools = {"default": ("", ""), "pool-a": ("run.ai/node-pool", "pool-a"), "gpu-b": ("hw", "b")}
    node = lambda name, **labels: {"metadata": {"name": name, "labels": labels}}  # noqa: E731
    nodes = [node("n1", **{"run.ai/node-pool": "pool-a"}), node("n2", hw="b", **{"kai.scheduler/node-pool": "gpu-b"}),
             node("n3", **{"kai.scheduler/node-pool": "pool-a"}), node("n4", **{"kai.scheduler/node-pool": "theirs"}),
             node("n5")]
    assert sched.partition_labels(nodes, pools) == {"n1": "pool-a", "n3": None}
