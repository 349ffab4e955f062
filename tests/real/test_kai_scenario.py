"""The scheduling scenario (tests/scheduling/scenario.py, docs/scheduling.md), differential: run through the product
on the real KAI Scheduler (the session's real cluster: a current Kubernetes, KAI Scheduler, KWOK's GPU nodes in one
pool; the product as deploy/'s service account) and on kubesim's with as many GPUs, and compare what the product
reported at each checkpoint. Writes the real run's transcript to docs/scheduling-transcript-real.md
when STUDIO_REFRESH_DOCS=1 (tests/docs_output)."""

import re
import uuid

import pytest

from scripts.realkube import kubeconfig_text
from studio import services
from studio.models import Cluster
from tests import docs_output
from tests.conftest import SIM_TOKEN, bearer_client, official_client
from tests.factories import UserFactory
from tests.scheduling.scenario import Scenario, Stage
from workloads import tasks

pytestmark = [pytest.mark.real, pytest.mark.worker, pytest.mark.django_db(transaction=True)]
# What may differ between two runs of the same scenario: names, times, KAI's free-text details.
VARYING = ("seconds", "example", "events of")


def _sync(cluster):
    return lambda: tasks.cluster_sync.apply(args=[str(cluster.pk)])


def _comparable(outcome: dict, suffix: str) -> dict:
    kept = {k: v for k, v in outcome.items() if not any(word in k for word in VARYING)}
    # Once B's work ends, which one of A's evicted trainings is left waiting (one reclaimed by B or the one A's
    # workspace preempted) is the scheduler's pick among equals, and so are the GPUs its queue counts as waiting
    # then: both kinds of eviction compare alike there, and step 7's waiting GPUs are not compared.
    kept["4 A runs again"] = {project: _evictions_alike(counts) for project, counts in
                              kept.get("4 A runs again", {}).items()}
    kept["7 A status"] = {k: v for k, v in kept.get("7 A status", {}).items() if k != "waiting"}
    return _unsuffixed(kept, suffix)


def _evictions_alike(counts: dict) -> dict:
    alike: dict = {}
    for key, n in counts.items():
        key = "Pending:Evicted" if key in ("Pending:Reclaimed", "Pending:Preempted") else key
        alike[key] = alike.get(key, 0) + n
    return alike


def _unsuffixed(value, suffix: str):
    if isinstance(value, dict):
        return {_unsuffixed(k, suffix): _unsuffixed(v, suffix) for k, v in value.items()}
    if isinstance(value, list):
        return [_unsuffixed(v, suffix) for v in value]
    return re.sub(f"-{suffix}\\b", "", value) if isinstance(value, str) else value


def test_the_scenario_reports_the_same_on_kubesim_and_on_the_real_kai_scheduler(real_cluster, worker, start_kubesim):
    server = real_cluster.server  # KAI binds only to its KWOK nodes (kubesim's node side plays the others)
    gpus = sum(int(n["status"]["allocatable"].get("nvidia.com/gpu", 0)) for n in server.gpu_node_objects())
    per_node = max(int(n["status"]["allocatable"].get("nvidia.com/gpu", 0)) for n in server.gpu_node_objects())
    root = UserFactory(username=f"root-{uuid.uuid4().hex[:6]}", platform_admin=True)
    api = bearer_client(root)

    # The real cluster, registered as an operator would: deploy/'s service account, KAI detected.
    kubeconfig = kubeconfig_text(server=server.url, ca_pem=server.ca_pem, token=real_cluster.product_token,
                                 user="paas-studio")
    registered = api.post("/api/v1/clusters", {"name": f"real-kai-{uuid.uuid4().hex[:5]}", "kubeconfig": kubeconfig,
                                               "gpuScheduler": "auto"}, format="json")
    assert registered.status_code == 201, registered.json()
    real = Cluster.objects.get(pk=registered.json()["clusterId"])
    tasks.cluster_sync.apply(args=[str(real.pk)])
    assert api.get(f"/api/v1/clusters/{real.pk}").json()["scheduler"]["name"] == "kai"
    on_real = Scenario(Stage(name="real", cluster=real, api=api, k8s=real_cluster.api, sync=_sync(real), timeout=180),
                       suffix=uuid.uuid4().hex[:5], gpus=gpus)
    try:
        real_outcome = on_real.run()
    finally:
        on_real.save(docs_output.folder())
        on_real.stage.release(on_real.ids.values())  # the session's KWOK GPUs free for the next tests

    # The same on kubesim, with as many GPUs on as many nodes.
    sim = start_kubesim(nodes=gpus // per_node, gpus_per_node=per_node, kai=True, run_seconds=3600,
                        pull_seconds=0.1, tick=0.02)
    simulated = services.cluster_create(actor=root, name=f"sim-kai-{uuid.uuid4().hex[:5]}", api_server_url=sim.url,
                                        token=SIM_TOKEN, verify_tls=False)
    k8s = official_client(sim)
    on_sim = Scenario(Stage(name=f"kubesim-{gpus}", cluster=simulated, api=api, k8s=k8s, sync=_sync(simulated)),
                      suffix=uuid.uuid4().hex[:5], gpus=gpus)
    sim_outcome = on_sim.run()
    k8s.close()

    real_seen, sim_seen = _comparable(real_outcome, on_real.suffix), _comparable(sim_outcome, on_sim.suffix)
    assert {k: (v, sim_seen.get(k)) for k, v in real_seen.items() if v != sim_seen.get(k)} == {}
    assert real_seen.keys() == sim_seen.keys()
    assert real_outcome["3 workspace never a victim"] is True
    assert real_outcome["3 seconds for B to run"] < 120
