"""CPU and memory in the quota numbers (issue 36): what workloads submitted through the API ask for over all their
pods is what the projects and departments API (`status.quotaStatus`, `status.nodePoolQuotaStatuses`), the node pools
API and the org-unit telemetry answer, in Run:ai's units (CPU in millicores, memory in MB), allocated once the
workload runs and requested from submission."""

import pytest

from studio.models import Cluster, NodePool
from tests.runai_spec import assert_matches_spec
from tests.workloads.cluster_support import training_body
from workloads.models import Workload

pytestmark = pytest.mark.django_db

MIB = 1.048576  # MB


@pytest.fixture
def pools(org):
    org.cluster.status = Cluster.Status.CONNECTED
    org.cluster.save()
    default = NodePool.objects.create(cluster=org.cluster, name="default", is_default=True)
    pool_a = NodePool.objects.create(cluster=org.cluster, name="pool-a", label_key="run.ai/node-pool",
                                     label_value="pool-a")
    org.a.node_pool_resources = [{"nodePool": {"id": str(p.pk), "name": p.name},
                                  "gpu": {"deserved": 2, "limit": 4, "overQuotaWeight": 1}} for p in (pool_a, default)]
    org.a.save()
    return default, pool_a


def _submitted(member, kind: str, body: dict) -> str:
    answer = member.post(f"/api/v1/workloads/{kind}", body, format="json")
    assert answer.status_code == 200, answer.json()
    return answer.json()["workloadId"]


def _use(status: dict) -> tuple:
    return tuple(round(status[side][kind], 6) for side in ("allocated", "requested") for kind in ("cpu", "memory"))


def test_cpu_and_memory_of_submitted_workloads_in_every_answer(client_for, org, pools):
    default, pool_a = pools
    member, admin = client_for(org.users.member), client_for(org.users.platform_admin)
    # 3 pods of 0.5 cores and 1G in pool-a; an inference of up to 2 replicas that gives only limits (0.25 cores,
    # 512Mi: Kubernetes makes them its requests), in the default pool; a workspace of 2 cores and 2G.
    training = _submitted(member, "trainings", training_body(
        org.a, "train", parallelism=3, nodePools=["pool-a"],
        compute={"cpuCoreRequest": 0.5, "cpuMemoryRequest": "1G"}))
    inference = _submitted(member, "inferences", {
        "name": "serve", "projectId": org.a.id, "clusterId": str(org.cluster.id),
        "spec": {"image": "example/serve:1", "servingPort": {"container": 8000}, "nodePools": ["default"],
                 "autoscaling": {"minReplicas": 1, "maxReplicas": 2, "metric": "concurrency", "metricThreshold": 5},
                 "compute": {"cpuCoreLimit": 0.25, "cpuMemoryLimit": "512Mi"}}})
    _submitted(member, "workspaces", training_body(org.a, "desk", nodePools=["default"],
                                                   compute={"cpuCoreRequest": 2, "cpuMemoryRequest": "2G"}))
    Workload.objects.filter(pk=training).update(actual_phase="Running")  # as the sync sees its pods run
    Workload.objects.filter(name="desk").update(desired_phase="Stopped", actual_phase="Stopped")  # counts nowhere

    answer = admin.get(f"/api/v1/org-unit/projects/{org.a.pk}")
    assert_matches_spec(answer, "get", "/api/v1/org-unit/projects/{projectId}")
    status = answer.json()["status"]
    # allocated: the running training (1500m, 3000 MB); requested: the waiting inference too (500m, 2 x 512Mi)
    assert _use(status["quotaStatus"]) == (1500.0, 3000.0, 2000.0, round(3000 + 1024 * MIB, 6))
    pools_answered = {p["nodePoolName"]: p for p in status["nodePoolQuotaStatuses"]}
    assert pools_answered["pool-a"]["nodePoolId"] == str(pool_a.pk)
    assert _use(pools_answered["pool-a"]) == (1500.0, 3000.0, 1500.0, 3000.0)
    assert _use(pools_answered["default"]) == (0.0, 0.0, 500.0, round(1024 * MIB, 6))
    assert status["quotaStatus"]["allocated"]["gpu"] == 0.0  # GPUs unchanged: none asked

    department = admin.get(f"/api/v1/org-unit/departments/{org.department.pk}")
    assert_matches_spec(department, "get", "/api/v1/org-unit/departments/{departmentId}")
    assert _use(department.json()["status"]["quotaStatus"]) == _use(status["quotaStatus"])
    listed = admin.get("/api/v1/org-unit/projects", {"filterBy": "name==alpha"}).json()["projects"]
    assert _use(listed[0]["status"]["quotaStatus"]) == _use(status["quotaStatus"])

    pool_answer = member.get(f"/api/v1/node-pools/{pool_a.pk}").json()
    assert _use(pool_answer["quotaStatus"]) == (1500.0, 3000.0, 1500.0, 3000.0)
    assert _use(member.get(f"/api/v1/node-pools/{default.pk}").json()["quotaStatus"]) == _use(
        pools_answered["default"])

    def telemetry(kind: str, **query) -> list:
        body = admin.get("/api/v1/org-unit/projects/telemetry", {"telemetryType": kind, **query}).json()
        return [(v["value"], [g.get("name", g["value"]) for g in v.get("groups", [])]) for v in body["values"]]

    assert telemetry("CPU_ALLOCATION") == [("1500", [])]
    assert telemetry("MEMORY_ALLOCATION", groupBy="NodepoolId") == [("3000", ["pool-a"])]

    # an inference's update stores its new ask: 1 core per replica, up to 2 replicas
    patched = member.patch(f"/api/v1/workloads/inferences/{inference}",
                           {"spec": {"compute": {"cpuCoreRequest": 1, "cpuMemoryRequest": "1G"}}}, format="json")
    assert patched.status_code == 202, patched.json()
    status = admin.get(f"/api/v1/org-unit/projects/{org.a.pk}").json()["status"]
    assert _use(status["quotaStatus"]) == (1500.0, 3000.0, 3500.0, 5000.0)


def test_a_distributed_trainings_master_and_workers_all_count(client_for, org, pools):
    member = client_for(org.users.member)
    body = {"name": "dist", "projectId": org.a.id, "clusterId": str(org.cluster.id),
            "spec": {"image": "python:3.11", "distributedFramework": "PyTorch", "numWorkers": 3,
                     "compute": {"cpuCoreRequest": 1, "cpuMemoryRequest": "1Gi"}},
            "masterSpec": {"image": "python:3.11", "compute": {"cpuCoreRequest": 2, "cpuMemoryRequest": "4G"}}}
    workload = _submitted(member, "distributed", body)
    assert Workload.objects.get(pk=workload).cpu_request == 5000  # 3 workers x 1 core + the master's 2
    status = client_for(org.users.platform_admin).get(f"/api/v1/org-unit/projects/{org.a.pk}").json()["status"]
    assert _use(status["quotaStatus"]) == (0.0, 0.0, 5000.0, round(3 * 1024 * MIB + 4000, 6))
