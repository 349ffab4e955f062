"""A distributed training on a KAI cluster, end to end on kubesim's KAI: KAI's pod-grouper makes its gang of all
replicas from the job the product pushed (no PodGroup of the product's own), and the gang starts whole or not at all:
one that does not fit waits with none of its pods running, saying why in KAI's words."""

import uuid

import pytest
from kubernetes import client

from studio import services
from tests.conftest import SIM_TOKEN, bearer_client, official_client
from tests.factories import UserFactory
from tests.workloads.cluster_support import wait_for
from workloads import tasks

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_gang_waits_whole_until_it_fits_and_then_runs_whole(worker, start_kubesim):
    sim = start_kubesim(nodes=2, gpus_per_node=8, kai=True, run_seconds=3600)
    root = UserFactory(username=f"root-{uuid.uuid4().hex[:6]}", platform_admin=True)
    api = bearer_client(root)
    cluster = services.cluster_create(actor=root, name=f"kai-{uuid.uuid4().hex[:6]}", api_server_url=sim.url,
                                      token=SIM_TOKEN, verify_tls=False)
    dept = api.post("/api/v1/org-unit/departments", {"name": f"d-{uuid.uuid4().hex[:4]}", "clusterId": str(cluster.pk)},
                    format="json").json()
    project = api.post("/api/v1/org-unit/projects", {
        "name": f"p-{uuid.uuid4().hex[:4]}", "clusterId": str(cluster.pk), "parentId": dept["id"],
        "resources": [{"nodePool": {"name": "default"}, "gpu": {"deserved": 16, "limit": -1}}]}, format="json").json()

    def submit(name: str, workers: int) -> str:
        body = {"name": name, "projectId": project["id"], "clusterId": str(cluster.pk), "masterSpecSameAsWorker": True,
                "spec": {"image": "busybox:1.36", "distributedFramework": "PyTorch", "numWorkers": workers,
                         "compute": {"gpuDevicesRequest": 8}}}
        answer = api.post("/api/v1/workloads/distributed", body, format="json")
        assert answer.status_code in (200, 202), answer.json()
        return answer.json()["workloadId"]

    def workload(wid):
        tasks.cluster_sync.apply(args=[str(cluster.pk)])
        return api.get(f"/api/v1/workloads/{wid}").json()

    hog = api.post("/api/v1/workloads/trainings", {
        "name": "hog", "projectId": project["id"], "clusterId": str(cluster.pk),
        "spec": {"image": "busybox:1.36", "compute": {"gpuDevicesRequest": 8}}}, format="json").json()["workloadId"]
    wait_for(lambda: workload(hog)["phase"] == "Running", timeout=60, what="8 of the 16 GPUs taken")
    pair = submit("pair", 1)  # master + 1 worker of 8 GPUs: 16, with 8 free
    waiting = wait_for(lambda: (w := workload(pair))["phase"] == "Pending"
                       and (w.get("pendingReason") or {}).get("type") == "NoNodeRoom" and w, what="the gang waiting")
    assert "didn't have enough resources: GPUs" in waiting["pendingReason"]["schedulerMessage"]
    k8s = official_client(sim)
    pods = [p for p in client.CoreV1Api(k8s).list_namespaced_pod(project["namespace"]).items
            if p.metadata.name.startswith("pair-")]
    assert len(pods) == 2 and all(p.status.phase == "Pending" and not p.spec.node_name for p in pods)  # not one
    groups = [g for g in client.CustomObjectsApi(k8s).list_namespaced_custom_object(
        "scheduling.run.ai", "v2alpha2", project["namespace"], "podgroups")["items"]
        if g["metadata"]["name"].startswith("pg-pair-")]
    assert [(g["spec"]["minMember"], g["spec"]["queue"]) for g in groups] == [(2, project["name"])]
    assert "Resources were found for 1 pods while 2 are required for gang scheduling" in \
        groups[0]["status"]["schedulingConditions"][0]["message"]

    assert api.delete(f"/api/v1/workloads/trainings/{hog}").status_code == 204
    wait_for(lambda: workload(pair)["phase"] == "Running", timeout=60, what="the gang running, whole")
    running = [p for p in client.CoreV1Api(k8s).list_namespaced_pod(project["namespace"]).items
               if p.metadata.name.startswith("pair-") and p.status.phase == "Running"]
    assert len(running) == 2
    k8s.close()
