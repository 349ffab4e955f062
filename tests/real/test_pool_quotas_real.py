"""Per-pool quotas (tests/scheduling/pool_scenario.py) on the real KAI Scheduler: two of the session's KWOK nodes
move to pools pool-a and pool-b; the product labels them with KAI's partition label and creates a SchedulingShard
per pool, for which the stack (as KAI's operator would) starts a scheduler. The same steps and numbers as on
kubesim (tests/scheduling/test_pool_quotas_kubesim.py). Writes docs/pool-quotas-transcript-real.md when
STUDIO_REFRESH_DOCS=1. The nodes go back to the default pool afterwards."""

import uuid

import pytest

from scripts.realkube import kubeconfig_text
from studio.models import Cluster
from tests import docs_output
from tests.conftest import bearer_client
from tests.factories import UserFactory
from tests.scheduling.pool_scenario import POOL_LABEL, PoolScenario
from tests.scheduling.scenario import Stage
from tests.workloads.cluster_support import wait_for
from workloads import tasks

pytestmark = [pytest.mark.real, pytest.mark.worker, pytest.mark.django_db(transaction=True)]
PARTITION = "kai.scheduler/node-pool"


def _label(server, node: str, labels: dict) -> None:
    server.call("PATCH", f"/api/v1/nodes/{node}", {"metadata": {"labels": labels}},
                content_type="application/merge-patch+json")


def test_each_pools_quota_is_enforced_by_its_own_kai_shard(real_cluster, worker):
    server = real_cluster.server
    nodes = sorted(n["metadata"]["name"] for n in server.gpu_node_objects())[-2:]
    root = UserFactory(username=f"root-{uuid.uuid4().hex[:6]}", platform_admin=True)
    api = bearer_client(root)
    kubeconfig = kubeconfig_text(server=server.url, ca_pem=server.ca_pem, token=real_cluster.product_token,
                                 user="paas-studio")
    registered = api.post("/api/v1/clusters", {"name": f"real-pools-{uuid.uuid4().hex[:5]}",
                                               "kubeconfig": kubeconfig, "gpuScheduler": "auto"}, format="json")
    assert registered.status_code == 201, registered.json()
    cluster = Cluster.objects.get(pk=registered.json()["clusterId"])
    for node, pool in zip(nodes, ("pool-a", "pool-b"), strict=True):
        _label(server, node, {POOL_LABEL: pool})
    scenario = PoolScenario(Stage(name="real", cluster=cluster, api=api, k8s=real_cluster.api, timeout=180,
                                  sync=lambda: tasks.cluster_sync.apply(args=[str(cluster.pk)])),
                            suffix=uuid.uuid4().hex[:5])
    try:
        try:
            outcome = scenario.run()
        except AssertionError as exc:
            raise AssertionError(f"{exc}\nstack processes: {sorted(server.processes)}") from None
        shards = server.get("/apis/kai.scheduler/v1/schedulingshards")["items"]
        labelled = {n["metadata"]["name"]: n["metadata"]["labels"].get(PARTITION) for n in server.gpu_node_objects()}
    finally:
        scenario.save(docs_output.folder())
        scenario.stage.release(scenario.ids.values())  # the trainings run until deleted: free the nodes
        for node in nodes:
            _label(server, node, {POOL_LABEL: "default", PARTITION: None})
    assert {s["spec"]["partitionLabelValue"] for s in shards} >= {"pool-a", "pool-b"}
    assert labelled[nodes[0]] == "pool-a" and labelled[nodes[1]] == "pool-b"
    # The forecast of each submission, and what then happened to it.
    assert outcome["1 forecast"] == [("start", "runs")] * 2 + [("start-over-quota", "runs")] * 2 + \
        [("wait", "waits")] * 2
    assert outcome["3 forecast"] == [("start", "runs")] * 4 + [("reclaim", "runs"), ("wait", "waits")]
    assert outcome["1"] == {"nlp": {"pool-a": 4}, "cv": {}}
    assert outcome["2"] == {"nlp": {"pool-a": 4, "pool-b": 3}, "cv": {}}
    assert outcome["3"] == {"nlp": {"pool-a": 3, "pool-b": 3}, "cv": {"pool-a": 5}}
    assert outcome["4 status"] == 400
    wait_for(lambda: all(not (n["metadata"]["labels"].get(PARTITION)) for n in server.gpu_node_objects()),
             what="the nodes back in the default pool")
