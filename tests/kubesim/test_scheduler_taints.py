"""The node side's scheduler and taints (node pools that only tolerating pods may use), as the default
scheduler's TaintToleration filter decides: a table of taints, tolerations and the FitError that results."""

import pytest

from kubesim.node.scheduler import Scheduler
from kubesim.sim import node_object

POOL_TAINT = {"key": "pool", "value": "a100", "effect": "NoSchedule"}


def place(taints: list, tolerations: list):
    node = node_object(0, 8, "64", "512Gi", {})
    node["spec"]["taints"] = taints
    pod = {"metadata": {"uid": "u", "namespace": "n", "name": "p"},
           "spec": {"containers": [{"name": "c", "image": "i"}], "tolerations": tolerations}}
    scheduler = Scheduler([(node, 8, {})])
    placed, refused = [], []
    scheduler.enqueue(pod)
    scheduler.run(type("Store", (), {"get": staticmethod(lambda key, *a: node if key == "nodes" else pod)}),
                  lambda p, where: placed.append(where[0]), lambda p, message: refused.append(message))
    return placed, refused


@pytest.mark.parametrize("tolerations", [
    [{"key": "pool", "operator": "Equal", "value": "a100", "effect": "NoSchedule"}],
    [{"key": "pool", "operator": "Exists"}],
    [{"operator": "Exists"}],
])
def test_a_tolerating_pod_is_placed_on_a_tainted_node(tolerations):
    assert place([POOL_TAINT], tolerations) == (["sim-node-0"], [])


@pytest.mark.parametrize("tolerations", [
    [],
    [{"key": "pool", "operator": "Equal", "value": "h100"}],
    [{"key": "pool", "operator": "Exists", "effect": "NoExecute"}],
])
def test_an_untolerated_taint_keeps_the_pod_pending_with_the_schedulers_words(tolerations):
    placed, refused = place([POOL_TAINT], tolerations)
    assert placed == [] and refused == [
        "0/1 nodes are available: 1 node(s) had untolerated taint {pool: a100}. preemption: 0/1 nodes are "
        "available: 1 Preemption is not helpful for scheduling."]


def test_a_prefer_no_schedule_taint_does_not_filter():
    assert place([{"key": "pool", "value": "a100", "effect": "PreferNoSchedule"}], []) == (["sim-node-0"], [])
