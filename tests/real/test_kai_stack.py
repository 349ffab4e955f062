"""The real cluster's scheduling side, through the cluster's API as its admin: KAI Scheduler binds pods that name
it onto KWOK's GPU nodes through its queues and pod groups (the pod grouper's, a gang for a training operator's
job), GPU fractions share one GPU behind a reservation pod, and pods that do not name KAI stay kubesim's."""

import uuid

import pytest
from kubernetes import client

from scripts.kube_objects import KAI_GPU_INDEX_ANNOTATION, KAI_QUEUE_LABEL, KAI_RESERVATION_NAMESPACE
from tests.workloads.cluster_support import wait_for

KAI = ("scheduling.run.ai", "v2alpha2")


@pytest.fixture
def ns(real_cluster):
    core = client.CoreV1Api(real_cluster.api)
    name = f"kai-{uuid.uuid4().hex[:6]}"
    core.create_namespace({"metadata": {"name": name}})
    wait_for(lambda: core.list_namespaced_service_account(name).items, what="the namespace's default account")
    yield name
    core.delete_namespace(name)


@pytest.fixture
def queue(real_cluster):
    """A department queue and a project queue under it (8 GPUs deserved, 16 at most), removed afterwards."""
    custom = client.CustomObjectsApi(real_cluster.api)
    name = f"q-{uuid.uuid4().hex[:6]}"

    def make(queue_name: str, parent: str | None, quota: int, limit: int) -> None:
        spec = {"resources": {"gpu": {"quota": quota, "limit": limit, "overQuotaWeight": 1},
                              "cpu": {"quota": -1, "limit": -1, "overQuotaWeight": 1},
                              "memory": {"quota": -1, "limit": -1, "overQuotaWeight": 1}}}
        if parent:
            spec["parentQueue"] = parent
        custom.create_cluster_custom_object("scheduling.run.ai", "v2", "queues", {
            "apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": queue_name}, "spec": spec})

    make(f"{name}-dept", None, 16, 32)
    make(name, f"{name}-dept", 8, 16)
    yield name
    for queue_name in (name, f"{name}-dept"):
        custom.delete_cluster_custom_object("scheduling.run.ai", "v2", "queues", queue_name)


def kai_pod(name: str, queue: str, *, gpus: int = 0, fraction: str | None = None) -> dict:
    resources = {"limits": {"nvidia.com/gpu": str(gpus)}} if gpus else {}
    return {"metadata": {"name": name, "labels": {KAI_QUEUE_LABEL: queue},
                         "annotations": {"gpu-fraction": fraction} if fraction else {}},
            "spec": {"schedulerName": "kai-scheduler",
                     "containers": [{"name": "main", "image": "busybox", "resources": resources}]}}


def running(core, ns: str, name: str):
    pod = core.read_namespaced_pod(name, ns)
    return pod if pod.status.phase == "Running" and pod.spec.node_name else None


def test_kai_binds_a_gpu_pod_of_a_queue_onto_a_kwok_node_through_its_pod_group(real_cluster, ns, queue):
    core, custom = client.CoreV1Api(real_cluster.api), client.CustomObjectsApi(real_cluster.api)
    core.create_namespaced_pod(ns, kai_pod("one", queue, gpus=2))
    pod = wait_for(lambda: running(core, ns, "one"), what="KAI to bind the pod and KWOK to run it")
    assert pod.spec.node_name.startswith("kwok-gpu-")
    groups = custom.list_namespaced_custom_object(*KAI, ns, "podgroups")["items"]
    assert [g["spec"]["queue"] for g in groups] == [queue]  # the pod grouper's, of the pod's queue label
    assert groups[0]["metadata"]["ownerReferences"][0]["name"] == "one"
    binds = custom.list_namespaced_custom_object("scheduling.run.ai", "v1alpha2", ns, "bindrequests")["items"]
    assert [(b["spec"]["podName"], b["spec"]["selectedNode"]) for b in binds] == [("one", pod.spec.node_name)]


def test_two_half_gpu_pods_share_one_gpu_behind_a_reservation_pod(real_cluster, ns, queue):
    core = client.CoreV1Api(real_cluster.api)
    for name in ("half-a", "half-b"):
        core.create_namespaced_pod(ns, kai_pod(name, queue, fraction="0.5"))
    pods = [wait_for(lambda n=name: running(core, ns, n), what=f"{name} to run") for name in ("half-a", "half-b")]
    assert pods[0].spec.node_name == pods[1].spec.node_name
    group = {p.metadata.labels.get("runai-gpu-group") for p in pods}
    assert len(group) == 1 and None not in group  # one GPU group: the same GPU
    reservations = core.list_namespaced_pod(KAI_RESERVATION_NAMESPACE,
                                            label_selector=f"runai-gpu-group={group.pop()}").items
    assert len(reservations) == 1
    assert reservations[0].metadata.annotations[KAI_GPU_INDEX_ANNOTATION].startswith("GPU-")


def test_a_pod_that_does_not_name_kai_is_bound_by_the_node_side_to_its_own_nodes(real_cluster, ns):
    core = client.CoreV1Api(real_cluster.api)
    core.create_namespaced_pod(ns, {"metadata": {"name": "plain"}, "spec": {"containers": [
        {"name": "main", "image": "busybox", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}})
    pod = wait_for(lambda: running(core, ns, "plain"), what="the node side to run the pod")
    assert pod.spec.node_name.startswith("sim-node-")


def test_a_pytorch_job_of_the_training_operator_is_gang_scheduled_by_kai(real_cluster, ns, queue):
    custom, core = client.CustomObjectsApi(real_cluster.api), client.CoreV1Api(real_cluster.api)
    # KWOK ends a training job's pods after 2 s; this one's run until deleted (KWOK's own per-pod delay).
    template = {"metadata": {"labels": {KAI_QUEUE_LABEL: queue},
                             "annotations": {"pod-complete.stage.kwok.x-k8s.io/delay": "3600s"}},
                "spec": {"schedulerName": "kai-scheduler", "containers": [
                    {"name": "pytorch", "image": "pytorch", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}
    custom.create_namespaced_custom_object("kubeflow.org", "v1", ns, "pytorchjobs", {
        "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "gang"},
        "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": template},
                                         "Worker": {"replicas": 2, "template": template}}}})
    pods = wait_for(lambda: (lambda items: items if len(items) == 3 and all(
        p.status.phase == "Running" for p in items) else None)(
        core.list_namespaced_pod(ns, label_selector="training.kubeflow.org/job-name=gang").items),
        what="the operator's three pods, bound by KAI and run by KWOK")
    assert all(p.spec.node_name.startswith("kwok-gpu-") for p in pods)
    groups = custom.list_namespaced_custom_object(*KAI, ns, "podgroups")["items"]
    assert [(g["metadata"]["ownerReferences"][0]["kind"], g["spec"]["minMember"]) for g in groups] == [
        ("PyTorchJob", 3)]  # one gang for the whole job: all three or none
    wait_for(lambda: any(c["type"] == "Running" and c["status"] == "True" for c in custom.get_namespaced_custom_object(
        "kubeflow.org", "v1", ns, "pytorchjobs", "gang").get("status", {}).get("conditions", [])),
        what="the operator to say Running")
