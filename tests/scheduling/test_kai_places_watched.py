"""A project's queue on KAI Scheduler as the cluster watcher keeps it (kubesim's KAI, the API, a real Celery
worker): a training that binds leaves its queue in the pass that sees it run; the places of those still waiting,
which moved only by one each, follow within WATCH_PLACES_SECONDS (that pass does not compute the queues again)."""

import time
import uuid

import pytest
from django.utils.dateparse import parse_datetime
from kubernetes import client

from tests.scheduling.scenario import POOL_GPUS, Scenario
from tests.scheduling.test_scenario_kubesim import kai_stage
from tests.workloads.cluster_support import wait_for
from workloads.manifests import WORKLOAD_ID_LABEL

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
PLACES_SECONDS = 8
PG_API = ("scheduling.run.ai", "v2alpha2")
HALF = POOL_GPUS // 2  # a node's GPUs


def test_a_training_that_binds_leaves_the_queue_at_once_and_the_others_move_up_later(worker, start_kubesim,
                                                                                     start_watcher):
    stage = kai_stage(start_kubesim, sync=lambda: None)
    start_watcher(WATCH_PLACES_SECONDS=PLACES_SECONDS)
    scenario = Scenario(stage, suffix=uuid.uuid4().hex[:5])
    try:
        scenario.org()
        a = scenario.projects["a"]["name"]
        wait_for(lambda: scenario.queue(a), timeout=60, what="project A's queue")
        # A fills the pool with two trainings of a node each (its limit), then three more wait over its limit.
        for name in ("run-0", "run-1"):
            scenario.submit("a", "trainings", name, {"gpuDevicesRequest": HALF})
        wait_for(lambda: phases(scenario, "run-") == ["Running", "Running"], timeout=60, what="the pool full")
        # KAI takes equal priorities by their PodGroups' creationTimestamp (whole seconds), then by UID: each comes
        # once the one before has its PodGroup, in a later second, so that the order they came is KAI's order.
        for name in ("wait-0", "wait-1", "wait-2"):
            scenario.submit("a", "trainings", name, {"gpuDevicesRequest": HALF})
            made = wait_for(lambda name=name: pod_group_made(scenario, name), timeout=60, what=f"{name}'s PodGroup")
            wait_for(lambda made=made: time.time() >= made + 1, timeout=5, interval=0.05, what="a later second")
        wait_for(lambda: places(scenario) == [("Pending", 1, 3), ("Pending", 2, 3), ("Pending", 3, 3)],
                 timeout=60, what="three in A's queue, in the order they came")

        assert scenario.api.delete(f"/api/v1/workloads/trainings/{scenario.ids['run-0']}").status_code == 204
        wait_for(lambda: places(scenario)[0] == ("Running", None, None), timeout=60,
                 what="the first in the queue running in run-0's room")
        wait_for(lambda: places(scenario)[1:] == [("Pending", 1, 2), ("Pending", 2, 2)],
                 timeout=PLACES_SECONDS + 30, what="the two left moved up")
    finally:
        stage.k8s.close()


def pod_group_made(scenario, name: str) -> float | None:
    """When KAI's pod-grouper made the workload's PodGroup (its creationTimestamp, whole seconds), None before."""
    groups = client.CustomObjectsApi(scenario.stage.k8s).list_cluster_custom_object(
        *PG_API, "podgroups", label_selector=f"{WORKLOAD_ID_LABEL}={scenario.ids[name]}")["items"]
    return min((parse_datetime(g["metadata"]["creationTimestamp"]).timestamp() for g in groups), default=None)


def _by_name(scenario) -> dict:
    return {w["name"]: w for w in scenario.workloads()}


def phases(scenario, prefix: str) -> list:
    return [w["phase"] for name, w in sorted(_by_name(scenario).items()) if name.startswith(prefix)]


def places(scenario) -> list[tuple]:
    """(phase, queuePosition, queueLength) of the three that waited, in their order."""
    found = _by_name(scenario)
    return [(w["phase"], w.get("queuePosition"), (w.get("pendingReason") or {}).get("queueLength"))
            for w in (found[name] for name in ("wait-0", "wait-1", "wait-2"))]
