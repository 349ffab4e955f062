"""Fixtures for the simulated cluster: a running KubeSim and official-client objects that talk to it over HTTP."""

import time
import uuid

import pytest
from kubernetes import client

from kubesim import KubeSim

TOKEN = "test-token"
FAST = {"pull_seconds": 0.1, "run_seconds": 0.3, "tick": 0.02}


def api_client(sim: KubeSim, token: str | None = TOKEN) -> client.ApiClient:
    config = client.Configuration(host=sim.url, api_key={"authorization": f"Bearer {token}"} if token else {})
    return client.ApiClient(config)


def wait_until(predicate, timeout: float = 5.0, interval: float = 0.02):
    """Poll until predicate() returns something truthy; return it, or fail with the last value seen."""
    deadline, value = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    pytest.fail(f"condition not met within {timeout}s (last value: {value!r})")


@pytest.fixture(scope="module")
def sim():
    sim = KubeSim(nodes=2, gpus_per_node=4, token=TOKEN, history=300, **FAST).start()
    yield sim
    sim.stop()


@pytest.fixture(scope="module")
def k8s(sim):
    with api_client(sim) as api:
        yield api


@pytest.fixture
def core(k8s):
    return client.CoreV1Api(k8s)


@pytest.fixture
def batch(k8s):
    return client.BatchV1Api(k8s)


@pytest.fixture
def apps(k8s):
    return client.AppsV1Api(k8s)


@pytest.fixture
def custom(k8s):
    return client.CustomObjectsApi(k8s)


@pytest.fixture
def ns(core):
    name = f"t-{uuid.uuid4().hex[:8]}"
    core.create_namespace({"metadata": {"name": name}})
    return name


def job_manifest(name: str, image: str = "busybox:1.36", *, labels=None, annotations=None, gpus: int = 0,
                 restart_policy: str = "Never", **spec) -> dict:
    container = {"name": "main", "image": image}
    if gpus:
        container["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "labels": labels or {}, "annotations": annotations or {}},
            "spec": {**spec, "template": {"metadata": {"labels": labels or {}},
                                          "spec": {"restartPolicy": restart_policy, "containers": [container]}}}}


def deployment_manifest(name: str, image: str = "nginx:1.27", replicas: int = 1, containers=None) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": containers or [{"name": "main", "image": image}]}}}}


def pod_manifest(name: str, image: str = "busybox:1.36", *, gpus: int = 0, annotations=None, labels=None) -> dict:
    container = {"name": "main", "image": image}
    if gpus:
        container["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "annotations": annotations or {}, "labels": labels or {}},
            "spec": {"containers": [container]}}


def waiting_reason(pod) -> str | None:
    statuses = pod.status.container_statuses or []
    return statuses[0].state.waiting.reason if statuses and statuses[0].state.waiting else None
