"""The scheduling scenario (tests/scheduling/scenario.py, docs/scheduling.md), differential: run through the product
on kubesim's KAI Scheduler and on the real one, and compare what the product reported at each checkpoint. The real
one is a cluster of its own (scripts/kube_stack.py: a current Kubernetes, KAI Scheduler, KWOK's GPU nodes: one pool
of 16 GPUs, trainings that run until deleted), the product as deploy/'s service account. Writes the real run's
transcript to docs/scheduling-transcript-real.md."""

import base64
import re
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest
from kubernetes import client, utils

from scripts.realkube import kubeconfig_text
from studio import services
from studio.models import Cluster
from tests.conftest import SIM_TOKEN, bearer_client, official_client, real_official_client
from tests.factories import UserFactory
from tests.scheduling.scenario import POOL_GPUS, Scenario, Stage
from tests.workloads.cluster_support import wait_for
from workloads import tasks

pytestmark = [pytest.mark.real, pytest.mark.worker, pytest.mark.django_db(transaction=True)]
DOCS = Path(__file__).resolve().parents[2] / "docs"
# What may differ between two runs of the same scenario: names, times, KAI's free-text details.
VARYING = ("seconds", "example", "events of")
RBAC = Path(__file__).resolve().parents[2] / "deploy" / "rbac.yaml"


@pytest.fixture(scope="module")
def kai_cluster():
    """16 GPUs on two KWOK nodes in the pool `default`, KAI Scheduler, deploy/rbac.yaml; Job pods run an hour."""
    from scripts.kube_stack import Stack

    stack = Stack(gpu_nodes=2, gpus_per_node=POOL_GPUS // 2, node_pool="default", training_operator=False,
                  job_run_ms=3_600_000).start()
    api = real_official_client(stack)
    utils.create_from_yaml(api, str(RBAC))
    secret = wait_for(lambda: (client.CoreV1Api(api).read_namespaced_secret("paas-studio-token", "paas-studio").data
                               or {}).get("token"), what="the token controller to fill deploy/'s paas-studio-token")
    yield SimpleNamespace(server=stack, api=api, product_token=base64.b64decode(secret).decode())
    api.close()
    stack.stop()


def _sync(cluster):
    return lambda: tasks.cluster_sync.apply(args=[str(cluster.pk)])


def _comparable(outcome: dict, suffix: str) -> dict:
    kept = {k: v for k, v in outcome.items() if not any(word in k for word in VARYING)}
    return _unsuffixed(kept, suffix)


def _unsuffixed(value, suffix: str):
    if isinstance(value, dict):
        return {_unsuffixed(k, suffix): _unsuffixed(v, suffix) for k, v in value.items()}
    if isinstance(value, list):
        return [_unsuffixed(v, suffix) for v in value]
    return re.sub(f"-{suffix}\\b", "", value) if isinstance(value, str) else value


def test_the_scenario_reports_the_same_on_kubesim_and_on_the_real_kai_scheduler(kai_cluster, worker, start_kubesim):
    real_cluster = kai_cluster
    server = real_cluster.server
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
        on_real.save(DOCS)

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

    assert _comparable(real_outcome, on_real.suffix) == _comparable(sim_outcome, on_sim.suffix)
    assert real_outcome["3 workspace never a victim"] is True
    assert real_outcome["3 seconds for B to run"] < 120
