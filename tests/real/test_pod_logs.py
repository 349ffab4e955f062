"""Pod logs through the workloads API on the real API server: its pods/log proxies to the node's kubelet —
kubesim's node side serves it — and a pod on a node with no kubelet answering gets a JSON 409 that says so."""

import pytest
from kubernetes import client

from tests.workloads.cluster_support import run_seconds, training_body, wait_for
from workloads import tasks

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_member_reads_a_running_pods_log_through_the_real_api_server(worker, real_org):
    body = training_body(real_org.project, "logged", annotations=run_seconds(600))
    workload_id = real_org.api.post("/api/v1/workloads/trainings", body, format="json").json()["workloadId"]

    def running_pod():
        tasks.cluster_sync.apply(args=[str(real_org.cluster.pk)])
        pods = real_org.api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]
        return pods[0] if pods and pods[0]["phase"] == "Running" else None

    pod = wait_for(running_pod, what="a running pod")
    url = f"/api/v1/workloads/{workload_id}/pods/{pod['id']}/logs"
    text = wait_for(lambda: (lambda r: r.content.decode() if r.status_code == 200 and r.content.count(b"\n") >= 2
                             else None)(real_org.api.get(url)), what="two lines of log")
    assert text.startswith("kubesim: container ")
    assert real_org.api.get(url + "?tailLines=1").content.count(b"\n") == 1
    wrong = real_org.api.get(url + "?container=nope")
    assert wrong.status_code == 400 and "nope" in wrong.json()["details"]


def test_a_pod_whose_node_has_no_kubelet_answering_is_a_409_not_a_500(worker, real_org):
    body = training_body(real_org.project, "silent", annotations=run_seconds(600))
    workload_id = real_org.api.post("/api/v1/workloads/trainings", body, format="json").json()["workloadId"]
    core = client.CoreV1Api(real_org.k8s)
    # A Node whose kubelet port nobody listens on (no node side behind it), and a pod of the workload on it.
    core.create_node({"metadata": {"name": "no-kubelet"}})
    core.patch_node_status("no-kubelet", {"status": {
        "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 1}}}})
    try:
        wait_for(lambda: tasks.cluster_sync.apply(args=[str(real_org.cluster.pk)]) and
                 real_org.api.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"], what="the pod row")
        labels = {"app.kubernetes.io/managed-by": "paas-studio", "paas-studio/workload-id": workload_id}
        core.create_namespaced_pod(real_org.namespace, {"metadata": {"name": "stray", "labels": labels}, "spec": {
            "nodeName": "no-kubelet", "containers": [{"name": "main", "image": "busybox"}]}})
        tasks.cluster_sync.apply(args=[str(real_org.cluster.pk)])
        response = real_org.api.get(f"/api/v1/workloads/{workload_id}/pods/stray/logs")
        assert response.status_code == 409, response.content
        assert response.json()["message"].startswith("No log available: the node's kubelet did not answer")
    finally:
        core.delete_node("no-kubelet")
