"""Distributed trainings end to end: the Run:ai API -> a real Celery worker -> studio.clusters.kube -> the Kubeflow Training
Operator's jobs over HTTP, and back through sync rounds; the cluster seen with the official client. `cluster_org`
runs a test on kubesim (its own Training Operator) and, in `make e2e-real`, on the real cluster with the real
Kubeflow training operator (its pods run by kubesim's node side, kubesim/node/remote.py). Gang scheduling
and a cluster without the operator: kubesim only (each needs a cluster of its own shape)."""

from collections import Counter

import pytest
from kubernetes import client

from tests.conftest import official_client
from tests.runai_spec import assert_matches_spec
from tests.workloads.cluster_support import run_seconds, wait_for
from tests.workloads.test_e2e import object_name, phase_events, pods_of, submit, sync, wait_phase
from workloads.cluster.push import NO_KUBEFLOW

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def distributed_body(project, name: str, framework="PyTorch", workers=2, **spec) -> dict:
    return {"name": name, "projectId": str(project.id), "clusterId": str(project.cluster_id),
            "spec": {"image": "python:3.11", "command": "python", "args": "train.py",
                     "distributedFramework": framework, "numWorkers": workers, **spec}}


def job_of(org, workload_id: str, plural="pytorchjobs") -> dict:
    return client.CustomObjectsApi(org.k8s).get_namespaced_custom_object(
        "kubeflow.org", "v1", org.namespace, plural, object_name(org, workload_id))


def roles(org, workload_id: str) -> Counter:
    answer = org.api.get(f"/api/v1/workloads/{workload_id}/pods")
    assert_matches_spec(answer, "get", "/api/v1/workloads/{workloadId}/pods")
    return Counter(p["role"] for p in answer.json()["pods"])


def test_a_pytorch_job_runs_its_master_and_workers_and_completes_with_the_master(worker, cluster_org):
    body = distributed_body(cluster_org.project, "torch", compute={"gpuDevicesRequest": 1}, cleanPodPolicy="Running",
                            annotations=run_seconds(4))
    workload_id = submit(cluster_org, "distributed", body)
    running = wait_phase(cluster_org, workload_id, "Running")
    assert running["type"] == "distributed" and running["distributedFramework"] == "PyTorch"
    assert running["requestedGpus"] == 3 and running["requestedPods"] == {"number": 3}
    wait_for(lambda: roles(cluster_org, workload_id) == Counter({"master": 1, "worker": 2}), step=lambda: sync(cluster_org),
             what="a master and two workers in the pod list")

    def counted():  # the operator's own count (the real one writes it a moment after the pods run, beside a selector)
        job = job_of(cluster_org, workload_id)
        statuses = (job.get("status") or {}).get("replicaStatuses") or {}
        return job if {role: s.get("active") for role, s in statuses.items()} == {"Master": 1, "Worker": 2} else None

    job = wait_for(counted, what="the operator to count the active replicas")
    assert {c["type"] for c in job["status"]["conditions"] if c["status"] == "True"} >= {"Created", "Running"}
    names = sorted(p.metadata.name for p in pods_of(cluster_org, workload_id))
    base = object_name(cluster_org, workload_id)
    assert names == [f"{base}-master-0", f"{base}-worker-0", f"{base}-worker-1"]
    master = next(p for p in pods_of(cluster_org, workload_id) if p.metadata.name.endswith("master-0"))
    env = {e.name: e.value for e in master.spec.containers[0].env}
    assert (env["WORLD_SIZE"], env["RANK"], env["MASTER_ADDR"]) == ("3", "0", f"{base}-master-0")
    assert master.spec.containers[0].resources.limits["nvidia.com/gpu"] == "1"

    done = wait_phase(cluster_org, workload_id, "Completed")
    assert done["completedAt"] and done["startedAt"]
    job = job_of(cluster_org, workload_id)
    succeeded = next(c for c in job["status"]["conditions"] if c["type"] == "Succeeded")
    assert succeeded["status"] == "True" and succeeded["reason"] == "PyTorchJobSucceeded"
    reasons = phase_events(cluster_org, workload_id)
    assert reasons[0] == "Submitted" and reasons.index("Running") < reasons.index("Completed"), reasons


def test_suspend_resume_and_delete_a_tf_job(worker, cluster_org):
    body = distributed_body(cluster_org.project, "tf", framework="TF", workers=1, annotations=run_seconds(600))
    workload_id = submit(cluster_org, "distributed", body)
    wait_phase(cluster_org, workload_id, "Running")
    assert roles(cluster_org, workload_id) == Counter({"chief": 1, "worker": 1})
    assert cluster_org.api.post(f"/api/v1/workloads/distributed/{workload_id}/suspend").status_code == 202
    stopped = wait_phase(cluster_org, workload_id, "Stopped")
    assert stopped["runningPods"] == 0
    assert job_of(cluster_org, workload_id, "tfjobs")["spec"]["runPolicy"]["suspend"] is True
    wait_for(lambda: not pods_of(cluster_org, workload_id), what="the job's pods to be gone")

    assert cluster_org.api.post(f"/api/v1/workloads/distributed/{workload_id}/resume").status_code == 202
    assert wait_phase(cluster_org, workload_id, "Running")["runningPods"] == 2
    assert job_of(cluster_org, workload_id, "tfjobs")["spec"]["runPolicy"]["suspend"] is False

    assert cluster_org.api.delete(f"/api/v1/workloads/distributed/{workload_id}").status_code == 204

    def deleted():
        listed = cluster_org.api.get("/api/v1/workloads?deleted=true").json()["workloads"]
        return [w for w in listed if w["id"] == workload_id and w["phase"] == "Deleted"]

    wait_for(deleted, step=lambda: sync(cluster_org), what="the workload to be Deleted")
    jobs = client.CustomObjectsApi(cluster_org.k8s).list_namespaced_custom_object(
        "kubeflow.org", "v1", cluster_org.namespace, "tfjobs")["items"]
    assert jobs == [] and pods_of(cluster_org, workload_id) == []


def test_a_failed_worker_fails_the_job(worker, cluster_org):
    body = distributed_body(cluster_org.project, "bad", framework="XGBoost", image="example/crashloop:1",
                            restartPolicy="Never")
    workload_id = submit(cluster_org, "distributed", body)
    failed = wait_phase(cluster_org, workload_id, "Failed")
    assert "XGBoostJobFailed" in failed["phaseMessage"], failed


def test_gang_scheduling_makes_a_pod_group_where_the_cluster_has_one(worker, sim_org, start_kubesim):
    sim = start_kubesim(gang="volcano")
    sim_org.cluster.api_server_url = sim.url
    sim_org.cluster.save()
    sim_org.k8s = official_client(sim)
    workload_id = submit(sim_org, "distributed", distributed_body(sim_org.project, "gang", framework="MPI",
                                                                  slotsPerWorker=2, annotations=run_seconds(600)))
    wait_phase(sim_org, workload_id, "Running")
    group = client.CustomObjectsApi(sim_org.k8s).get_namespaced_custom_object(
        "scheduling.volcano.sh", "v1beta1", sim_org.namespace, "podgroups", object_name(sim_org, workload_id))
    assert group["spec"] == {"minMember": 3}
    job = job_of(sim_org, workload_id, "mpijobs")
    assert job["spec"]["runPolicy"]["schedulingPolicy"] == {"minAvailable": 3}
    assert job["spec"]["slotsPerWorker"] == 2
    assert roles(sim_org, workload_id) == Counter({"launcher": 1, "worker": 2})
    for pod in pods_of(sim_org, workload_id):
        assert pod.spec.scheduler_name == "volcano"
        assert pod.metadata.annotations["scheduling.k8s.io/group-name"] == group["metadata"]["name"]


def test_a_cluster_without_the_training_operator_fails_the_workload_saying_so(worker, sim_org, start_kubesim):
    sim = start_kubesim(kubeflow=False)
    sim_org.cluster.api_server_url = sim.url
    sim_org.cluster.save()
    workload_id = submit(sim_org, "distributed", distributed_body(sim_org.project, "nokf"))
    failed = wait_phase(sim_org, workload_id, "Failed")
    assert failed["phaseMessage"] == NO_KUBEFLOW


def test_a_gang_that_cannot_all_fit_waits_whole_and_says_why(worker, sim_org, start_kubesim):
    """scheduler-plugins' coscheduling on a 2-GPU cluster: a master and two workers of one GPU each cannot all
    start, so none does (no GPU is held by a part of the job) and the workload is Pending, saying why."""
    sim = start_kubesim(gang="scheduler-plugins", nodes=1, gpus_per_node=2)
    sim_org.cluster.api_server_url = sim.url
    sim_org.cluster.save()
    sim_org.k8s = official_client(sim)
    workload_id = submit(sim_org, "distributed", distributed_body(sim_org.project, "big",
                                                                  compute={"gpuDevicesRequest": 1}))
    pending = wait_for(lambda: (lambda w: w if w["phase"] == "Pending" and "pod group" in w["phaseMessage"] else None)(
        sim_org.api.get(f"/api/v1/workloads/{workload_id}").json()), step=lambda: sync(sim_org),
        what="Pending with the pod group's reason")
    assert "2/3 members fit" in pending["phaseMessage"] and "Insufficient nvidia.com/gpu" in pending["phaseMessage"]
    assert pending["runningPods"] == 0
    assert all(not p.spec.node_name for p in pods_of(sim_org, workload_id))
    assert all(p.metadata.labels["scheduling.x-k8s.io/pod-group"] == object_name(sim_org, workload_id)
               for p in pods_of(sim_org, workload_id))
