"""kubesim's node side over HTTP (kubesim.node.remote, what `make e2e-real` runs against the real server) keeps
every pod through a write the API server does not take — a 503 or a connection closed mid-request, as during
an API-server restart — by trying it again, as a kubelet does. Each failure is made exactly once, by a proxy
between the node side and kubesim's own API server (node_side=False: no nodes of its own)."""

import pytest
from kubernetes import client

from kubesim import KubeSim
from kubesim.node.remote import RemoteNodes

from .conftest import TOKEN, api_client, pod_manifest, wait_until
from .faulty_proxy import FaultyProxy


@pytest.fixture
def cluster():
    sim = KubeSim(token=TOKEN, node_side=False, tick=0.02).start()
    proxy = FaultyProxy(sim.url).start()
    nodes = RemoteNodes(proxy.url, TOKEN, nodes=2, gpus_per_node=4, pull_seconds=0.2, tick=0.02,
                        serve_logs=False)
    with api_client(sim) as api:
        core = client.CoreV1Api(api)
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="outage")))
        yield core, proxy, nodes.start()
    nodes.stop()
    proxy.stop()
    sim.stop()


def _running(core, name):
    pod = core.read_namespaced_pod(name, "outage")
    return pod if pod.status.phase == "Running" and pod.spec.node_name else None


@pytest.mark.parametrize("action", ["503", "drop"])
def test_a_status_write_the_server_does_not_take_is_sent_again(cluster, action):
    core, proxy, _ = cluster
    # The pod's first status (ContainerCreating, with its binding) goes through; the second (Running) fails once.
    proxy.fail("PATCH", "/api/v1/namespaces/outage/pods/web/status", action, nth=2)
    core.create_namespaced_pod("outage", pod_manifest("web"))
    pod = wait_until(lambda: _running(core, "web"), timeout=10)
    assert proxy.failed == [("PATCH", "/api/v1/namespaces/outage/pods/web/status", action)]
    assert pod.status.container_statuses[0].state.running and pod.spec.node_name.startswith("sim-node-")


@pytest.mark.parametrize("action", ["503", "drop"])
def test_a_binding_the_server_does_not_take_is_sent_again(cluster, action):
    core, proxy, _ = cluster
    proxy.fail("POST", "/api/v1/namespaces/outage/pods/web/binding", action)
    core.create_namespaced_pod("outage", pod_manifest("web"))
    pod = wait_until(lambda: _running(core, "web"), timeout=10)
    assert proxy.failed == [("POST", "/api/v1/namespaces/outage/pods/web/binding", action)]
    assert proxy.seen[("POST", "/api/v1/namespaces/outage/pods/web/binding")] == 2  # bound once, by the retry
    assert pod.status.host_ip


def test_a_failed_write_holds_up_no_other_pod(cluster):
    """One pod's failed write is that pod's to retry: the pods reconciled after it in the same pass go on."""
    core, proxy, _ = cluster
    proxy.fail("PATCH", "/api/v1/namespaces/outage/pods/web-0/status", "drop", nth=2)
    for i in range(5):
        core.create_namespaced_pod("outage", pod_manifest(f"web-{i}"))
    for i in range(5):
        wait_until(lambda i=i: _running(core, f"web-{i}"), timeout=10)
    assert proxy.failed == [("PATCH", "/api/v1/namespaces/outage/pods/web-0/status", "drop")]


def test_a_delete_the_server_does_not_take_is_sent_again(cluster):
    core, proxy, _ = cluster
    core.create_namespaced_pod("outage", pod_manifest("web"))
    wait_until(lambda: _running(core, "web"), timeout=10)
    # The kubelet's final delete (grace period 0, after the containers stopped) fails once.
    proxy.fail("DELETE", "/api/v1/namespaces/outage/pods/web", "503", nth=1)
    core.delete_namespaced_pod("web", "outage")  # through kubesim directly: a graceful delete, as kubectl's

    def gone():
        try:
            core.read_namespaced_pod("web", "outage")
        except client.ApiException as exc:
            return exc.status == 404
        return False

    wait_until(gone, timeout=10)
    assert proxy.failed == [("DELETE", "/api/v1/namespaces/outage/pods/web", "503")]


def test_the_node_side_runs_a_training_job_through_a_lost_status_write(cluster):
    """The Training Operator's job played by the node side over HTTP (kubesim, node_side=False, leaves it to it):
    its pods are created, run and complete although one pod's status write is lost on the way."""
    core, proxy, nodes = cluster
    custom = client.CustomObjectsApi(core.api_client)
    wait_until(lambda: "pytorchjobs.kubeflow.org" in nodes.watching, timeout=10)
    proxy.fail("PATCH", "/api/v1/namespaces/outage/pods/t-worker-0/status", "503", nth=3)
    spec = {"replicas": 1, "template": {"spec": {"containers": [{"name": "pytorch", "image": "python:3.11"}]}}}
    custom.create_namespaced_custom_object("kubeflow.org", "v1", "outage", "pytorchjobs", {
        "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "t"},
        "spec": {"pytorchReplicaSpecs": {"Master": spec, "Worker": spec}}})

    def succeeded():
        job = custom.get_namespaced_custom_object("kubeflow.org", "v1", "outage", "pytorchjobs", "t")
        return any(c["type"] == "Succeeded" and c["status"] == "True" for c in job.get("status", {}).get("conditions", []))

    wait_until(succeeded, timeout=15)
    wait_until(lambda: {p.metadata.name: p.status.phase for p in core.list_namespaced_pod("outage").items} == {
        "t-master-0": "Succeeded", "t-worker-0": "Succeeded"}, timeout=15)
    assert proxy.failed == [("PATCH", "/api/v1/namespaces/outage/pods/t-worker-0/status", "503")]
