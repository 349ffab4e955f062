"""Per-pool quotas (tests/scheduling/pool_scenario.py) on kubesim's KAI Scheduler, a shard per node pool. Writes
docs/pool-quotas-transcript-kubesim.md when STUDIO_REFRESH_DOCS=1."""

import uuid

import pytest

from studio import services
from tests import docs_output
from tests.conftest import SIM_TOKEN, bearer_client, official_client
from tests.factories import UserFactory
from tests.scheduling.pool_scenario import PoolScenario
from tests.scheduling.scenario import Stage
from workloads import tasks

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_each_pools_quota_is_enforced_on_its_own(worker, start_kubesim):
    sim = start_kubesim(nodes=2, gpus_per_node=8, node_pools={"pool-a": 1, "pool-b": 1}, kai=True,
                        run_seconds=3600, pull_seconds=0.1, tick=0.02)
    root = UserFactory(username=f"root-{uuid.uuid4().hex[:6]}", platform_admin=True)
    cluster = services.cluster_create(actor=root, name=f"pools-{uuid.uuid4().hex[:6]}", api_server_url=sim.url,
                                      token=SIM_TOKEN, verify_tls=False)
    stage = Stage(name="kubesim", cluster=cluster, api=bearer_client(root), k8s=official_client(sim),
                  sync=lambda: tasks.cluster_sync.apply(args=[str(cluster.pk)]), timeout=60)
    scenario = PoolScenario(stage, suffix=uuid.uuid4().hex[:5])
    try:
        outcome = scenario.run()
    finally:
        scenario.save(docs_output.folder())
        stage.k8s.close()
    # The forecast of each submission, and what then happened to it.
    assert outcome["1 forecast"] == [("start", "runs")] * 2 + [("start-over-quota", "runs")] * 2 + \
        [("wait", "waits")] * 2
    assert outcome["3 forecast"] == [("start", "runs")] * 4 + [("reclaim", "runs"), ("wait", "waits")]
    assert outcome["1"] == {"nlp": {"pool-a": 4}, "cv": {}}
    assert outcome["2"] == {"nlp": {"pool-a": 4, "pool-b": 3}, "cv": {}}
    assert outcome["3"] == {"nlp": {"pool-a": 3, "pool-b": 3}, "cv": {"pool-a": 5}}
    assert outcome["4 status"] == 400
