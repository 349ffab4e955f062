"""The simulated cluster moves workloads through their lives the way a real one does, seen through the client."""

import json

import pytest
from kubernetes import client, watch
from kubernetes.client.rest import ApiException

from kubesim import KubeSim

from .conftest import (
    FAST,
    TOKEN,
    api_client,
    deployment_manifest,
    job_manifest,
    pod_manifest,
    wait_until,
    waiting_reason,
)

LONG = {"kubesim.paas-studio/run-seconds": "60"}


def conditions(obj) -> dict:
    return {c.type: c.status for c in obj.status.conditions or []}


def test_job_goes_pending_initializing_running_complete(core, batch, ns):
    start = core.list_namespaced_pod(ns).metadata.resource_version
    batch.create_namespaced_job(ns, job_manifest("train", gpus=1, labels={"paas-studio/workload-id": "42"}))
    seen = []
    for event in watch.Watch().stream(core.list_namespaced_pod, ns, resource_version=start,
                                      label_selector="job-name=train", timeout_seconds=5):
        pod = event["object"]
        state = (pod.status.phase, bool(pod.spec.node_name), waiting_reason(pod))
        if not seen or seen[-1] != state:
            seen.append(state)
        if pod.status.phase == "Succeeded":
            break
    assert seen[0] == ("Pending", False, None)                    # created, not yet scheduled
    assert ("Pending", True, "ContainerCreating") in seen         # scheduled, pulling the image
    assert ("Running", True, None) in seen and seen[-1][0] == "Succeeded"
    pod = core.list_namespaced_pod(ns, label_selector="job-name=train").items[0]
    assert pod.metadata.labels["paas-studio/workload-id"] == "42"
    assert pod.metadata.labels["batch.kubernetes.io/job-name"] == "train"
    owner = pod.metadata.owner_references[0]
    assert (owner.kind, owner.name, owner.controller) == ("Job", "train", True)
    assert pod.status.container_statuses[0].state.terminated.exit_code == 0
    job = wait_until(lambda: (j := batch.read_namespaced_job("train", ns)).status.completion_time and j)
    assert conditions(job) == {"SuccessCriteriaMet": "True", "Complete": "True"}
    assert job.status.succeeded == 1 and job.status.active is None and job.status.start_time
    reasons = {e.reason for e in core.list_namespaced_event(ns).items}
    assert {"Scheduled", "Pulling", "Pulled", "Created", "Started", "SuccessfulCreate", "Completed"} <= reasons
    scheduled = core.list_namespaced_event(ns, field_selector="reason=Scheduled").items[0]
    assert scheduled.involved_object.kind == "Pod" and scheduled.source.component == "default-scheduler"
    assert scheduled.message == f"Successfully assigned {ns}/{pod.metadata.name} to {pod.spec.node_name}"


def test_parallel_job_needs_all_completions(batch, core, ns):
    batch.create_namespaced_job(ns, job_manifest("multi", completions=3, parallelism=2))
    job = wait_until(lambda: (j := batch.read_namespaced_job("multi", ns)).status.succeeded == 3 and j, timeout=8)
    assert conditions(job)["Complete"] == "True"
    assert len(core.list_namespaced_pod(ns, label_selector="job-name=multi").items) == 3


def test_finished_jobs_honour_ttl_and_deadlines(batch, ns):
    batch.create_namespaced_job(ns, job_manifest("brief", ttlSecondsAfterFinished=0))

    def gone():
        try:
            batch.read_namespaced_job("brief", ns)
        except ApiException as exc:
            return exc.status == 404
    wait_until(gone)

    batch.create_namespaced_job(ns, job_manifest("late", annotations=LONG, activeDeadlineSeconds=1))
    job = wait_until(lambda: (j := batch.read_namespaced_job("late", ns)).status.conditions and
                     conditions(j).get("Failed") == "True" and j)
    assert next(c.reason for c in job.status.conditions if c.type == "Failed") == "DeadlineExceeded"


def test_job_suspend_and_resume(batch, core, ns):
    batch.create_namespaced_job(ns, job_manifest("sus", annotations=LONG))
    wait_until(lambda: batch.read_namespaced_job("sus", ns).status.active == 1)
    first = core.list_namespaced_pod(ns, label_selector="job-name=sus").items[0].metadata.name

    batch.patch_namespaced_job("sus", ns, {"spec": {"suspend": True}})
    wait_until(lambda: not core.list_namespaced_pod(ns, label_selector="job-name=sus").items)
    job = batch.read_namespaced_job("sus", ns)
    assert conditions(job)["Suspended"] == "True" and not job.status.active and job.status.start_time is None
    assert job.metadata.generation == 2

    batch.patch_namespaced_job("sus", ns, {"spec": {"suspend": False}})
    pods = wait_until(lambda: core.list_namespaced_pod(ns, label_selector="job-name=sus").items)
    assert pods[0].metadata.name != first
    job = wait_until(lambda: (j := batch.read_namespaced_job("sus", ns)).status.active == 1 and j)
    suspended = next(c for c in job.status.conditions if c.type == "Suspended")
    assert (suspended.status, suspended.reason) == ("False", "JobResumed")


def test_job_template_is_immutable(batch, ns):
    batch.create_namespaced_job(ns, job_manifest("imm", annotations=LONG))
    with pytest.raises(ApiException) as exc:
        batch.patch_namespaced_job("imm", ns, {"spec": {"template": {"spec": {"containers": [
            {"name": "main", "image": "other:1"}]}}}})
    assert exc.value.status == 422 and "field is immutable" in exc.value.body


def test_deployment_scales_to_zero_and_back(apps, core, ns):
    apps.create_namespaced_deployment(ns, deployment_manifest("ws"))
    ready = wait_until(lambda: (d := apps.read_namespaced_deployment("ws", ns)).status.ready_replicas == 1 and d)
    assert conditions(ready) == {"Available": "True", "Progressing": "True"}
    assert ready.status.observed_generation == ready.metadata.generation
    pods = core.list_namespaced_pod(ns, label_selector="app=ws").items
    assert pods[0].metadata.owner_references[0].kind == "ReplicaSet" and "pod-template-hash" in pods[0].metadata.labels

    apps.patch_namespaced_deployment("ws", ns, {"spec": {"replicas": 0}})
    wait_until(lambda: not core.list_namespaced_pod(ns, label_selector="app=ws").items)
    zero = wait_until(lambda: (d := apps.read_namespaced_deployment("ws", ns)).status.replicas is None and d)
    assert zero.status.ready_replicas is None and conditions(zero)["Available"] == "True"

    scale = apps.patch_namespaced_deployment_scale("ws", ns, {"spec": {"replicas": 1}})
    assert scale.spec.replicas == 1
    wait_until(lambda: apps.read_namespaced_deployment("ws", ns).status.available_replicas == 1)


def test_service_addresses_and_load_balancer(core, ns):
    svc = core.create_namespaced_service(ns, {"metadata": {"name": "kit"}, "spec": {
        "type": "LoadBalancer", "selector": {"app": "kit"}, "ports": [{"port": 80, "targetPort": 8080}]}})
    assert svc.spec.cluster_ip.startswith("10.") and 30000 <= svc.spec.ports[0].node_port <= 32767
    ingress = wait_until(lambda: core.read_namespaced_service("kit", ns).status.load_balancer.ingress)
    assert ingress[0].ip
    networking = client.NetworkingV1Api(core.api_client)
    networking.create_namespaced_ingress(ns, {"metadata": {"name": "kit"}, "spec": {"rules": [{"host": "kit.example.com",
        "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "kit",
                                                                                       "port": {"number": 80}}}}]}}]}})
    assert wait_until(lambda: networking.read_namespaced_ingress("kit", ns).status.load_balancer.ingress)[0].ip
    pvc = core.create_namespaced_persistent_volume_claim(ns, {"metadata": {"name": "data"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}})
    assert pvc.status.phase == "Pending"
    bound = wait_until(lambda: (p := core.read_namespaced_persistent_volume_claim("data", ns)).status.phase == "Bound" and p)
    assert bound.status.capacity == {"storage": "10Gi"}


def test_knative_service_becomes_ready_with_url(custom, core, ns):
    ksvc = {"apiVersion": "serving.knative.dev/v1", "kind": "Service", "metadata": {"name": "infer"},
            "spec": {"template": {"metadata": {"annotations": {"autoscaling.knative.dev/min-scale": "2"}},
                                  "spec": {"containers": [{"image": "vllm:1", "ports": [{"containerPort": 8080}]}]}}}}
    custom.create_namespaced_custom_object("serving.knative.dev", "v1", ns, "services", ksvc)

    def ready():
        obj = custom.get_namespaced_custom_object("serving.knative.dev", "v1", ns, "services", "infer")
        return obj if any(c["type"] == "Ready" and c["status"] == "True" for c in obj["status"].get("conditions", [])) else None

    obj = wait_until(ready)
    assert obj["status"]["url"] == f"http://infer.{ns}.example.com"
    assert obj["status"]["latestReadyRevisionName"] == obj["status"]["latestCreatedRevisionName"] == "infer-00001"
    assert obj["status"]["observedGeneration"] == 1
    assert {c["type"] for c in obj["status"]["conditions"]} == {"Ready", "ConfigurationsReady", "RoutesReady"}
    pods = core.list_namespaced_pod(ns, label_selector="serving.knative.dev/service=infer").items
    assert len(pods) == 2 and pods[0].spec.containers[0].name == "user-container"

    custom.patch_namespaced_custom_object("serving.knative.dev", "v1", ns, "services", "infer", {"spec": {"template": {
        "spec": {"containers": [{"image": "vllm:2"}]}}}})
    wait_until(lambda: custom.get_namespaced_custom_object("serving.knative.dev", "v1", ns, "services", "infer")
               ["status"].get("latestReadyRevisionName") == "infer-00002")
    revisions = wait_until(lambda: {p.metadata.labels["serving.knative.dev/revision"] for p in
                                    core.list_namespaced_pod(ns, label_selector="serving.knative.dev/service=infer").items
                                    if not p.metadata.deletion_timestamp} == {"infer-00002"})
    assert revisions
    with pytest.raises(ApiException) as exc:  # custom resources take no strategic merge patch
        custom.api_client.call_api(f"/apis/serving.knative.dev/v1/namespaces/{ns}/services/infer", "PATCH",
                                   header_params={"Content-Type": "application/strategic-merge-patch+json"},
                                   body={"metadata": {"labels": {"a": "b"}}}, auth_settings=["BearerToken"])
    assert exc.value.status == 415


def test_pending_when_gpus_run_out(core, ns):
    # The module cluster has 2 nodes x 4 GPUs.
    core.create_namespaced_pod(ns, pod_manifest("big", gpus=4, annotations=LONG))
    core.create_namespaced_pod(ns, pod_manifest("big2", gpus=4, annotations=LONG))
    core.create_namespaced_pod(ns, pod_manifest("toomuch", gpus=3))
    wait_until(lambda: core.read_namespaced_pod("big2", ns).spec.node_name)
    pod = wait_until(lambda: (p := core.read_namespaced_pod("toomuch", ns)).status.conditions and p)
    cond = pod.status.conditions[0]
    assert (pod.status.phase, cond.type, cond.status, cond.reason) == ("Pending", "PodScheduled", "False",
                                                                       "Unschedulable")
    assert cond.message.startswith("0/2 nodes are available: 2 Insufficient nvidia.com/gpu.")
    event = core.list_namespaced_event(ns, field_selector="reason=FailedScheduling").items[0]
    assert event.type == "Warning" and event.involved_object.name == "toomuch"

    core.delete_namespaced_pod("big", ns)  # frees 4 GPUs: the waiting pod gets them
    wait_until(lambda: core.read_namespaced_pod("toomuch", ns).spec.node_name)


def test_gpu_fractions_share_a_device_and_node_selectors_are_honoured(core, ns):
    for name in ("half-a", "half-b"):
        core.create_namespaced_pod(ns, pod_manifest(name, annotations={"gpu-fraction": "0.5"}))
    nowhere = pod_manifest("nowhere")
    nowhere["spec"]["nodeSelector"] = {"node-type": "cpu"}
    core.create_namespaced_pod(ns, nowhere)
    nodes = wait_until(lambda: [core.read_namespaced_pod(n, ns).spec.node_name for n in ("half-a", "half-b")]
                       if all(core.read_namespaced_pod(n, ns).spec.node_name for n in ("half-a", "half-b")) else None)
    assert nodes[0] == nodes[1]  # best fit packs both halves onto one device of one node
    pod = wait_until(lambda: (p := core.read_namespaced_pod("nowhere", ns)).status.conditions and p)
    assert "2 node(s) didn't match Pod's node affinity/selector" in pod.status.conditions[0].message


def test_mig_slices_are_a_resource_of_their_own():
    with KubeSim(nodes=1, gpus_per_node=0, mig_per_node={"1g.10gb": 2}, token=TOKEN, **FAST) as sim, \
            api_client(sim) as k8s:
        core = client.CoreV1Api(k8s)
        node = core.read_node("sim-node-0")
        assert node.status.allocatable["nvidia.com/mig-1g.10gb"] == "2"
        for i in range(3):
            pod = pod_manifest(f"slice-{i}")
            pod["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/mig-1g.10gb": "1"}}
            core.create_namespaced_pod("default", pod)
        waiting = wait_until(lambda: (p := core.read_namespaced_pod("slice-2", "default")).status.conditions and p)
        assert "1 Insufficient nvidia.com/mig-1g.10gb" in waiting.status.conditions[0].message
        assert all(core.read_namespaced_pod(f"slice-{i}", "default").spec.node_name for i in range(2))


def test_image_pull_failures(core, sim, ns):
    core.create_namespaced_pod(ns, pod_manifest("ghost", image="registry.example.com/team/does-not-exist:1"))
    pod = wait_until(lambda: (p := core.read_namespaced_pod("ghost", ns)) and waiting_reason(p) == "ErrImagePull" and p)
    message = pod.status.container_statuses[0].state.waiting.message
    assert message.startswith('rpc error: code = NotFound desc = failed to pull and unpack image '
                              '"registry.example.com/team/does-not-exist:1"')
    assert pod.status.phase == "Pending" and pod.spec.node_name
    wait_until(lambda: waiting_reason(core.read_namespaced_pod("ghost", ns)) == "ImagePullBackOff")
    failed = [e.message for e in core.list_namespaced_event(ns, field_selector="reason=Failed").items]
    assert "Error: ErrImagePull" in failed and "Error: ImagePullBackOff" in failed

    sim.set_faults(pull_fail_images={"nginx"})  # a fault by repository, whatever the tag
    try:
        core.create_namespaced_pod(ns, pod_manifest("web", image="nginx:1.27"))
        wait_until(lambda: waiting_reason(core.read_namespaced_pod("web", ns)) in ("ErrImagePull", "ImagePullBackOff"))
    finally:
        sim.set_faults(pull_fail_images=set())
    wait_until(lambda: core.read_namespaced_pod("web", ns).status.phase == "Running", timeout=8)


def test_crash_loop_and_failed_job(core, batch, apps, ns):
    apps.create_namespaced_deployment(ns, deployment_manifest("crashy", image="example/crashloop:1"))

    def restarted_twice():
        pods = core.list_namespaced_pod(ns, label_selector="app=crashy").items
        status = pods and pods[0].status.container_statuses
        return status and status[0].restart_count >= 2 and pods[0]

    pod = wait_until(restarted_twice, timeout=8)
    status = pod.status.container_statuses[0]
    assert pod.status.phase == "Running" and status.last_state.terminated.exit_code == 1
    wait_until(lambda: waiting_reason(core.list_namespaced_pod(ns, label_selector="app=crashy").items[0])
               == "CrashLoopBackOff", timeout=8)
    assert core.list_namespaced_event(ns, field_selector="reason=BackOff").items[0].type == "Warning"

    batch.create_namespaced_job(ns, job_manifest("doomed", image="crashloop", backoffLimit=1))
    job = wait_until(lambda: (j := batch.read_namespaced_job("doomed", ns)).status.conditions and
                     conditions(j).get("Failed") == "True" and j, timeout=8)
    failed = next(c for c in job.status.conditions if c.type == "Failed")
    assert failed.reason == "BackoffLimitExceeded" and job.status.failed == 2
    phases = {p.status.phase for p in core.list_namespaced_pod(ns, label_selector="job-name=doomed").items}
    assert phases == {"Failed"}


def test_garbage_collection_follows_propagation_policy(core, batch, apps, k8s, ns):
    apps.create_namespaced_deployment(ns, deployment_manifest("gc"))
    wait_until(lambda: core.list_namespaced_pod(ns, label_selector="app=gc").items)
    apps.delete_namespaced_deployment("gc", ns)  # Background by default for apps/v1
    wait_until(lambda: not apps.list_namespaced_replica_set(ns).items and
               not core.list_namespaced_pod(ns, label_selector="app=gc").items)

    batch.create_namespaced_job(ns, job_manifest("kept", annotations=LONG))
    wait_until(lambda: [p for p in core.list_namespaced_pod(ns, label_selector="job-name=kept").items
                        if p.status.phase == "Running"])
    _, code, headers = batch.delete_namespaced_job_with_http_info("kept", ns)
    assert code == 200 and "child pods are preserved by default" in headers["Warning"]
    orphan = wait_until(lambda: (p := core.list_namespaced_pod(ns, label_selector="job-name=kept").items)
                        and not p[0].metadata.owner_references and p[0])
    assert orphan.status.phase == "Running"  # batch/v1 orphans by default, as a real cluster does

    batch.create_namespaced_job(ns, job_manifest("fg", annotations=LONG))
    wait_until(lambda: core.list_namespaced_pod(ns, label_selector="job-name=fg").items)
    batch.delete_namespaced_job("fg", ns, propagation_policy="Foreground")
    pending = batch.read_namespaced_job("fg", ns)
    assert pending.metadata.deletion_timestamp and "foregroundDeletion" in pending.metadata.finalizers

    def gone():
        try:
            batch.read_namespaced_job("fg", ns)
        except ApiException as exc:
            return exc.status == 404
    wait_until(gone)
    assert not core.list_namespaced_pod(ns, label_selector="job-name=fg").items


def test_pod_deletion_is_graceful(core, ns):
    core.create_namespaced_pod(ns, pod_manifest("bye"))
    wait_until(lambda: core.read_namespaced_pod("bye", ns).status.phase == "Running")
    deleted = core.delete_namespaced_pod("bye", ns)
    assert deleted.metadata.deletion_timestamp and deleted.metadata.deletion_grace_period_seconds == 30

    def gone():
        try:
            core.read_namespaced_pod("bye", ns)
        except ApiException as exc:
            return exc.status == 404
    wait_until(gone)


def test_pod_logs(core, ns):
    core.create_namespaced_pod(ns, pod_manifest("chatty"))
    with pytest.raises(ApiException) as exc:
        core.read_namespaced_pod_log("chatty", ns)
    assert exc.value.status == 400 and "is waiting to start" in json.loads(exc.value.body)["message"]
    wait_until(lambda: core.read_namespaced_pod("chatty", ns).status.phase == "Running")
    assert "started from image busybox:1.36" in core.read_namespaced_pod_log("chatty", ns)


def test_hpa_keeps_its_target_within_bounds(apps, k8s, ns):
    apps.create_namespaced_deployment(ns, deployment_manifest("api"))
    client.AutoscalingV2Api(k8s).create_namespaced_horizontal_pod_autoscaler(ns, {
        "metadata": {"name": "api"}, "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                                                 "name": "api"}, "minReplicas": 2, "maxReplicas": 4}})
    hpa = wait_until(lambda: (h := client.AutoscalingV2Api(k8s).read_namespaced_horizontal_pod_autoscaler("api", ns))
                     .status.desired_replicas == 2 and h)
    assert hpa.status.current_replicas is not None
    wait_until(lambda: apps.read_namespaced_deployment("api", ns).status.ready_replicas == 2)


def test_a_small_cluster_from_the_command_line(tmp_path):
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "kubesim", "--port", str(port), "--nodes", "1",
                             "--no-knative", "--token", "cli", "--quiet"], stderr=subprocess.PIPE)
    try:
        def answered():
            try:
                request = urllib.request.Request(f"http://127.0.0.1:{port}/apis", headers={"Authorization": "Bearer cli"})
                return json.loads(urllib.request.urlopen(request, timeout=1).read())
            except OSError:
                time.sleep(0.05)
        groups = wait_until(answered, timeout=10)
        assert "serving.knative.dev" not in {g["name"] for g in groups["groups"]}
    finally:
        proc.terminate()
        assert proc.wait(timeout=10) == 0


def test_small_cluster_fixture_alone():
    with KubeSim(nodes=1, gpus_per_node=0, token=TOKEN, **FAST) as sim, api_client(sim) as k8s:
        node = client.CoreV1Api(k8s).read_node("sim-node-0")
        assert node.metadata.labels["node-type"] == "cpu" and "nvidia.com/gpu" not in node.status.capacity


def test_schedule_seconds_keeps_a_new_pod_unscheduled_for_that_long():
    import time

    with KubeSim(nodes=1, gpus_per_node=1, token=TOKEN, **{**FAST, "schedule_seconds": 1.5}) as sim, \
            api_client(sim) as api:
        core = client.CoreV1Api(api)
        core.create_namespace({"metadata": {"name": "slow"}})
        core.create_namespaced_pod("slow", pod_manifest("p"))
        time.sleep(0.5)
        pod = core.read_namespaced_pod("p", "slow")
        assert pod.status.phase == "Pending" and not pod.spec.node_name
        wait_until(lambda: core.read_namespaced_pod("p", "slow").spec.node_name, timeout=5)
