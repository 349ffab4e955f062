"""The scheduling scenario (tests/scheduling/scenario.py, docs/scheduling.md) end to end on kubesim's KAI
Scheduler: the API -> a real Celery worker -> kubesim, and sync rounds reading KAI's words back. Writes the
transcript to docs/scheduling-transcript-kubesim.md when STUDIO_REFRESH_DOCS=1 (tests/docs_output)."""

import uuid

import pytest

from studio import services
from tests import docs_output
from tests.conftest import SIM_TOKEN, bearer_client, official_client
from tests.factories import UserFactory
from tests.scheduling.scenario import POOL_GPUS, Scenario, Stage
from workloads import tasks

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def kai_stage(start_kubesim, *, sync=None) -> Stage:
    sim = start_kubesim(nodes=2, gpus_per_node=POOL_GPUS // 2, kai=True, run_seconds=3600, pull_seconds=0.1,
                        tick=0.02)
    root = UserFactory(username=f"root-{uuid.uuid4().hex[:6]}", platform_admin=True)
    cluster = services.cluster_create(actor=root, name=f"kai-{uuid.uuid4().hex[:6]}", api_server_url=sim.url,
                                      token=SIM_TOKEN, verify_tls=False)
    return Stage(name="kubesim", cluster=cluster, api=bearer_client(root), k8s=official_client(sim),
                 sync=sync or (lambda: tasks.cluster_sync.apply(args=[str(cluster.pk)])), timeout=60)


def test_the_scenario_on_kubesim(worker, start_kubesim):
    stage = kai_stage(start_kubesim)
    scenario = Scenario(stage, suffix=uuid.uuid4().hex[:5])
    try:
        outcome = scenario.run()
    finally:
        scenario.save(docs_output.folder())
        stage.k8s.close()
    check(scenario, outcome)


def test_the_scenario_on_kubesim_followed_by_the_watcher(worker, start_kubesim, start_watcher):
    """The same, with no sync round: the cluster watcher follows KAI's PodGroups, Evict events and Queues."""
    stage = kai_stage(start_kubesim, sync=lambda: None)
    start_watcher()
    scenario = Scenario(stage, suffix=uuid.uuid4().hex[:5])
    try:
        outcome = scenario.run()
    finally:
        stage.k8s.close()
    check(scenario, outcome)


def check(scenario: Scenario, outcome: dict) -> None:
    a, b = "a", "b"
    assert outcome["queues"][f"{a}-{scenario.suffix}"] == {"quota": 8, "limit": 16, "overQuotaWeight": 1}
    assert outcome["1 A over quota"] == {a: {"Running": 16}}
    assert outcome["1 A status"] == {"deserved": 8.0, "limit": 16.0, "allocated": 16.0, "overQuota": 8.0,
                                     "waiting": 0.0}
    assert outcome["2 workspace"] == {a: {"Running": 16, "Pending:Preempted": 1}}
    assert outcome["3 seconds for B to run"] < 30
    assert outcome["3 B reclaims"] == {a: {"Running": 8, "Pending:Reclaimed": 8, "Pending:Preempted": 1},
                                       b: {"Running": 8}}
    assert outcome["3 reclaimed by"] == [f"{b}-{scenario.suffix}"]
    assert outcome["3 workspace never a victim"] is True
    example = outcome["3 example"]
    assert example["reclaimedBy"]["workload"].startswith("b-train-")
    assert example["waitingFor"]["type"] in ("NoNodeRoom", "OverQuota")
    assert "was preempted by workload" in example["schedulerMessage"]
    assert outcome["4 A runs again"] == {a: {"Running": 16, "Pending:Preempted": 1}}
    events = outcome["4 events of a reclaimed training"]  # its timeline, oldest first
    reclaimed = events.index("Reclaimed")
    assert "Running" in events[:reclaimed] and "Running" in events[reclaimed:], events  # ran, reclaimed, ran again
    assert outcome["5 accepted"] in (200, 202)
    assert outcome["5 reason"] == {"type": "OverQuota", "quota": "limit", "scope": "project",
                                   "scopeName": f"{a}-{scenario.suffix}", "schedulerReason": "OverLimit"}
    assert outcome["5 never runs"] == 400
    assert outcome["6 one GPU"] == {"pods": 2, "nodes": 1, "gpuGroups": 1}
    assert outcome["6 B status"]["allocated"] == 1.0
    assert outcome["7 queue after the API change"]["quota"] == 4
    assert outcome["7 A status"]["deserved"] == 4.0
