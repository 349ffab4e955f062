"""kubesim's node side on the real API server (as KWOK's is): Nodes registered and kept Ready, pods scheduled
(GPUs, node selectors) and bound through pods/binding, their lifecycle written through pods/status with the
kubelet's Events, and logs served through the API server's pods/log. Jobs and Deployments are run by the real
kube-controller-manager; nothing here is the product's."""

import uuid

import pytest
from kubernetes import client

from tests.workloads.cluster_support import wait_for


@pytest.fixture
def ns(real_cluster):
    core = client.CoreV1Api(real_cluster.api)
    name = f"node-{uuid.uuid4().hex[:6]}"
    core.create_namespace({"metadata": {"name": name}})
    wait_for(lambda: core.list_namespaced_service_account(name).items, what="the namespace's default account")
    yield name
    core.delete_namespace(name)


def job(name: str, image: str = "busybox", **pod_spec) -> dict:
    container = {"name": "main", "image": image, **pod_spec.pop("container", {})}
    return {"metadata": {"name": name}, "spec": {"backoffLimit": 0, "template": {
        "spec": {"restartPolicy": "Never", "containers": [container], **pod_spec}}}}


def pod_of(real_cluster, ns: str, selector: str):
    pods = client.CoreV1Api(real_cluster.api).list_namespaced_pod(ns, label_selector=selector).items
    return pods[0] if pods else None


def reasons(real_cluster, ns: str) -> list[str]:
    return [e.reason for e in client.CoreV1Api(real_cluster.api).list_namespaced_event(ns).items]


def test_nodes_are_registered_with_gpus_and_stay_ready(real_cluster):
    """kubesim's node side's four nodes, beside KWOK's four (tests/real/test_kai_stack.py): all Ready, 8 GPUs."""
    nodes = client.CoreV1Api(real_cluster.api).list_node().items
    assert sorted(n.metadata.name for n in nodes) == [f"kwok-gpu-{i}" for i in range(4)] + [
        f"sim-node-{i}" for i in range(4)]
    for node in nodes:
        assert node.status.capacity["nvidia.com/gpu"] == "8"
        ready = next(c for c in node.status.conditions if c.type == "Ready")
        assert ready.status == "True"


def test_a_job_runs_to_completion_under_the_real_job_controller(real_cluster, ns):
    batch = client.BatchV1Api(real_cluster.api)
    batch.create_namespaced_job(ns, job("done"))
    finished = wait_for(lambda: (lambda j: j if j.status.succeeded else None)(batch.read_namespaced_job("done", ns)),
                        what="the Job to succeed")
    assert any(c.type == "Complete" and c.status == "True" for c in finished.status.conditions)
    pod = pod_of(real_cluster, ns, "job-name=done")
    assert pod.spec.node_name.startswith("sim-node-") and pod.status.phase == "Succeeded"
    seen = reasons(real_cluster, ns)
    for reason in ("SuccessfulCreate", "Scheduled", "Pulling", "Pulled", "Created", "Started", "Completed"):
        assert reason in seen, seen


def test_an_image_that_cannot_be_pulled_backs_off(real_cluster, ns):
    client.BatchV1Api(real_cluster.api).create_namespaced_job(ns, job("nopull", "example.com/does-not-exist:1"))

    def waiting_reason():
        pod = pod_of(real_cluster, ns, "job-name=nopull")
        statuses = (pod.status.container_statuses or []) if pod else []
        return statuses and statuses[0].state.waiting and statuses[0].state.waiting.reason

    assert wait_for(lambda: waiting_reason() in ("ErrImagePull", "ImagePullBackOff"), what="a pull error")


def test_a_crashing_container_loops_with_a_growing_restart_count(real_cluster, ns):
    apps = client.AppsV1Api(real_cluster.api)
    apps.create_namespaced_deployment(ns, {"metadata": {"name": "crash"}, "spec": {
        "selector": {"matchLabels": {"app": "crash"}}, "template": {"metadata": {"labels": {"app": "crash"}},
        "spec": {"containers": [{"name": "main", "image": "example.com/crashloop:1"}]}}}})

    def restarts():
        pod = pod_of(real_cluster, ns, "app=crash")
        statuses = (pod.status.container_statuses or []) if pod else []
        return statuses[0].restart_count if statuses else 0

    wait_for(lambda: restarts() >= 2, what="restarts")
    assert "BackOff" in reasons(real_cluster, ns)


def test_gpus_and_node_pools_decide_where_a_pod_may_go(real_cluster, ns):
    batch = client.BatchV1Api(real_cluster.api)
    batch.create_namespaced_job(ns, job("two-gpus", container={"resources": {"limits": {"nvidia.com/gpu": "2"}}}))
    batch.create_namespaced_job(ns, job("too-many", container={"resources": {"limits": {"nvidia.com/gpu": "16"}}}))
    batch.create_namespaced_job(ns, job("cpu-pool", nodeSelector={"node-type": "cpu"}))
    wait_for(lambda: (lambda p: p and p.spec.node_name)(pod_of(real_cluster, ns, "job-name=two-gpus")),
             what="the two-GPU pod to be bound")

    def scheduling_message(job_name: str):
        pod = pod_of(real_cluster, ns, f"job-name={job_name}")
        condition = pod and next((c for c in pod.status.conditions or [] if c.type == "PodScheduled"), None)
        return condition and condition.reason == "Unschedulable" and condition.message

    assert "4 Insufficient nvidia.com/gpu" in wait_for(lambda: scheduling_message("too-many"), what="FitError")
    assert "didn't match Pod's node affinity/selector" in wait_for(lambda: scheduling_message("cpu-pool"),
                                                                    what="the node pool's FitError")


def test_logs_come_through_the_api_servers_pods_log_from_the_node_side(real_cluster, ns):
    client.BatchV1Api(real_cluster.api).create_namespaced_job(
        ns, {**job("talk"), "spec": {**job("talk")["spec"], "template": {
            "metadata": {"annotations": {"kubesim.paas-studio/run-seconds": "30"}},
            "spec": job("talk")["spec"]["template"]["spec"]}}})
    core = client.CoreV1Api(real_cluster.api)
    pod = wait_for(lambda: (lambda p: p if p and p.status.phase == "Running" else None)(
        pod_of(real_cluster, ns, "job-name=talk")), what="the pod to run")
    text = wait_for(lambda: (lambda t: t if t.count("\n") >= 2 else None)(
        core.read_namespaced_pod_log(pod.metadata.name, ns)), what="two lines of log")
    assert text.startswith("kubesim: container main started from image busybox")
    assert core.read_namespaced_pod_log(pod.metadata.name, ns, tail_lines=1).count("\n") == 1
    with pytest.raises(client.ApiException) as wrong:
        core.read_namespaced_pod_log(pod.metadata.name, ns, container="nope")
    assert wrong.value.status == 400


@pytest.fixture
def knative(real_cluster):
    """Knative Serving's Service CRD on the real server for this test (kubesim/node/crds.py), found by the node
    side's discovery; removed afterwards, so that the other real tests see a cluster without Knative."""
    from kubesim.node import crds

    crds.install(real_cluster.nodes.http, "knative")
    yield client.CustomObjectsApi(real_cluster.api)
    crds.uninstall(real_cluster.nodes.http, "knative")


def ksvc(name: str, image: str) -> dict:
    return {"apiVersion": "serving.knative.dev/v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"template": {"metadata": {"annotations": {"autoscaling.knative.dev/min-scale": "1"}},
                                  "spec": {"containers": [{"image": image, "ports": [{"containerPort": 8080}]}]}}}}


def test_a_knative_service_is_served_then_rolls_to_a_new_revision(real_cluster, knative, ns):
    """The node side plays Knative Serving as kubesim does: a revision's pod (named and labelled as Knative's),
    then Ready with the URL, the address and all traffic on the revision; a new template is a new revision,
    whose pod replaces the old one's once ready."""
    core = client.CoreV1Api(real_cluster.api)
    knative.create_namespaced_custom_object("serving.knative.dev", "v1", ns, "services", ksvc("hello", "example/hello:1"))

    def status():
        obj = knative.get_namespaced_custom_object("serving.knative.dev", "v1", ns, "services", "hello")
        ready = {c["type"]: c["status"] for c in (obj.get("status") or {}).get("conditions") or []}.get("Ready")
        return obj["status"] if ready == "True" else None

    first = wait_for(status, what="the Knative Service to be Ready")
    assert first["url"] == f"http://hello.{ns}.example.com"
    assert first["address"] == {"url": f"http://hello.{ns}.svc.cluster.local"}
    assert first["traffic"] == [{"revisionName": "hello-00001", "latestRevision": True, "percent": 100}]
    pods = core.list_namespaced_pod(ns, label_selector="serving.knative.dev/service=hello").items
    assert [p.metadata.labels["serving.knative.dev/revision"] for p in pods] == ["hello-00001"]
    assert pods[0].spec.containers[0].name == "user-container" and pods[0].status.phase == "Running"
    assert pods[0].metadata.owner_references[0].kind == "Service"

    knative.patch_namespaced_custom_object("serving.knative.dev", "v1", ns, "services", "hello", {
        "spec": {"template": {"spec": {"containers": [{"image": "example/hello:2"}]}}}})
    second = wait_for(lambda: (s := status()) and s["latestReadyRevisionName"] == "hello-00002" and s,
                      what="the second revision to be ready")
    assert second["traffic"] == [{"revisionName": "hello-00002", "latestRevision": True, "percent": 100}]
    wait_for(lambda: [p.metadata.labels["serving.knative.dev/revision"] for p in core.list_namespaced_pod(
        ns, label_selector="serving.knative.dev/service=hello").items] == ["hello-00002"],
        what="the first revision's pod to go")
    # Deleting the Service: the real garbage collector takes its pods.
    knative.delete_namespaced_custom_object("serving.knative.dev", "v1", ns, "services", "hello")
    wait_for(lambda: not core.list_namespaced_pod(ns, label_selector="serving.knative.dev/service=hello").items,
             what="the garbage collector to delete the Service's pods")


def test_a_pod_group_is_scheduled_whole_or_not_at_all(real_cluster, ns):
    """scheduler-plugins' PodGroup CRD installed: the node side's scheduler reads each group's minMember and binds
    a gang's pods only once all of them exist and fit."""
    from kubesim.node import crds

    crds.install(real_cluster.nodes.http, "scheduler-plugins")
    try:
        core, groups = client.CoreV1Api(real_cluster.api), client.CustomObjectsApi(real_cluster.api)
        wait_for(lambda: "podgroups.scheduling.x-k8s.io" in real_cluster.nodes.watching,
                 what="the node side to watch PodGroups")
        groups.create_namespaced_custom_object("scheduling.x-k8s.io", "v1alpha1", ns, "podgroups", {
            "apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": "gang"},
            "spec": {"minMember": 3}})
        # Pods and PodGroups come on separate watches: the pods only once the group is known (a pod whose group is
        # not known yet is scheduled alone, on kubesim's own server too).
        wait_for(lambda: real_cluster.nodes.store.get("podgroups.scheduling.x-k8s.io", ns, "gang"),
                 what="the node side to see the PodGroup")

        def member(i: int) -> dict:
            return {"metadata": {"name": f"m-{i}", "labels": {"scheduling.x-k8s.io/pod-group": "gang"}},
                    "spec": {"containers": [{"name": "main", "image": "busybox",
                                             "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}

        for i in range(2):
            core.create_namespaced_pod(ns, member(i))
        def told(pods):
            return [(p.status.conditions or [None])[0] and p.status.conditions[0].message for p in pods]

        waiting = wait_for(lambda: (pods := core.list_namespaced_pod(ns).items) and all(
            m and "2/3 members exist" in m for m in told(pods)) and pods, timeout=30,
            what="the scheduler's word on the first two")
        assert len(waiting) == 2 and not any(p.spec.node_name for p in waiting)
        core.create_namespaced_pod(ns, member(2))
        wait_for(lambda: all(p.spec.node_name and p.status.phase == "Running"
                             for p in core.list_namespaced_pod(ns).items), what="the whole gang to run")
    finally:
        crds.uninstall(real_cluster.nodes.http, "scheduler-plugins")
