"""A project's queue on KAI Scheduler as the cluster watcher keeps it (kubesim's KAI, the API, a real Celery
worker): a training that binds leaves its queue in the pass that sees it run; the places of those still waiting,
which moved only by one each, follow within WATCH_PLACES_SECONDS (that pass does not compute the queues again)."""

import uuid

import pytest

from tests.scheduling.scenario import POOL_GPUS, Scenario
from tests.scheduling.test_scenario_kubesim import kai_stage
from tests.workloads.cluster_support import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
PLACES_SECONDS = 8
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
        for name in ("wait-0", "wait-1", "wait-2"):
            scenario.submit("a", "trainings", name, {"gpuDevicesRequest": HALF})
        wait_for(lambda: places(scenario) == [("Pending", 1, 3), ("Pending", 2, 3), ("Pending", 3, 3)],
                 timeout=60, what="three in A's queue, in the order they came")

        assert scenario.api.delete(f"/api/v1/workloads/trainings/{scenario.ids['run-0']}").status_code == 204
        wait_for(lambda: places(scenario)[0] == ("Running", None, None), timeout=60,
                 what="the first in the queue running in run-0's room")
        wait_for(lambda: places(scenario)[1:] == [("Pending", 1, 2), ("Pending", 2, 2)],
                 timeout=PLACES_SECONDS + 30, what="the two left moved up")
    finally:
        stage.k8s.close()


def _by_name(scenario) -> dict:
    return {w["name"]: w for w in scenario.workloads()}


def phases(scenario, prefix: str) -> list:
    return [w["phase"] for name, w in sorted(_by_name(scenario).items()) if name.startswith(prefix)]


def places(scenario) -> list[tuple]:
    """(phase, queuePosition, queueLength) of the three that waited, in their order."""
    found = _by_name(scenario)
    return [(w["phase"], w.get("queuePosition"), (w.get("pendingReason") or {}).get("queueLength"))
            for w in (found[name] for name in ("wait-0", "wait-1", "wait-2"))]
