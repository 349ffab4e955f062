"""Run:ai's read API of nodes and node pools, from the same numbers as every page (issue 36, point 7): the tenant's
nodes (`GET /api/v1/nodes`, `/count`) read live from the clusters the caller sees, the node telemetry, a node pool
with its allocation and its metrics, each checked against Run:ai's documents; bad input is a JSON 400 naming it."""

from datetime import UTC, datetime

import pytest

from studio.models import NodePool
from studio.services import cluster_create
from tests.conftest import SIM_TOKEN
from tests.factories import MembershipFactory, ProjectFactory, UserFactory
from tests.runai_spec import assert_matches_spec, spec_errors
from tests.runapy_support import runapy_client
from workloads.models import Pod, Workload

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def pooled(start_kubesim):
    """Three 8-GPU nodes: one in pool-a, one in pool-b, one in the default pool; a project with 2 deserved GPUs in
    each pool, running 3 GPUs in pool-a (its pod on the pool's node) and waiting for 2 in pool-b."""
    sim = start_kubesim(nodes=3, gpus_per_node=8, node_pools={"pool-a": 1, "pool-b": 1})
    root = UserFactory(username="root", platform_admin=True)
    cluster = cluster_create(actor=root, name="pooled", api_server_url=sim.url, token=SIM_TOKEN, verify_tls=False)
    pools = {n: NodePool.objects.create(cluster=cluster, name=n, label_key="run.ai/node-pool", label_value=n)
             for n in ("pool-a", "pool-b")}
    cluster.gpu_capacity = {"total": 24, "largestNode": 8, "pools": {
        "default": {"total": 8, "largestNode": 8}, "pool-a": {"total": 8, "largestNode": 8},
        "pool-b": {"total": 8, "largestNode": 8}}}
    cluster.save(update_fields=["gpu_capacity"])
    project = ProjectFactory(name="pooled", cluster=cluster, gpu_deserved=4, gpu_limit=8, node_pool_resources=[
        {"nodePool": {"id": str(p.pk), "name": n}, "gpu": {"deserved": 2, "limit": 4, "overQuotaWeight": 1}}
        for n, p in pools.items()])
    member = UserFactory(username="pool-member")
    MembershipFactory(user=member, project=project, role="member")
    running = Workload.objects.create(kind="training", name="run", project=project, department=project.department,
                                      cluster=cluster, actual_phase="Running", gpu_request=3, node_pool="pool-a",
                                      running_pods=1, spec={"compute": {"cpuCoreRequest": "2"}},
                                      cpu_request=2000, memory_request=4 * 10**9)
    Pod.objects.create(workload=running, uid="u1", name="run-0", phase="Running", node_name="sim-node-0")
    Workload.objects.create(kind="training", name="wait", project=project, department=project.department,
                            cluster=cluster, actual_phase="Pending", gpu_request=2, node_pool="pool-b",
                            cpu_request=500, memory_request=10**9)
    return cluster, pools, project, member, root


def test_the_tenants_nodes_filtered_sorted_and_counted(client_for, pooled):
    cluster, pools, project, member, root = pooled
    api = client_for(member)
    answer = api.get("/api/v1/nodes")
    assert answer.status_code == 200
    assert_matches_spec(answer, "get", "/api/v1/nodes")
    assert [(n["name"], n["nodePool"], n["clusterUuid"]) for n in answer.json()["nodes"]] == [
        ("sim-node-0", "pool-a", str(cluster.pk)), ("sim-node-1", "pool-b", str(cluster.pk)),
        ("sim-node-2", "default", str(cluster.pk))]
    assert [n["name"] for n in api.get("/api/v1/nodes", {"filterBy": "nodePool=^pool", "sortBy": "nodePool",
                                                          "sortOrder": "desc"}).json()["nodes"]] == [
        "sim-node-1", "sim-node-0"]
    assert [n["name"] for n in api.get("/api/v1/nodes", {"search": "node-2"}).json()["nodes"]] == ["sim-node-2"]
    assert [n["name"] for n in api.get("/api/v1/nodes", {"offset": 1, "limit": 1}).json()["nodes"]] == ["sim-node-1"]
    count = api.get("/api/v1/nodes/count", {"filterBy": "nodePool!=default"})
    assert count.json() == {"count": 2}
    assert_matches_spec(count, "get", "/api/v1/nodes/count")
    # someone who sees none of the cluster's projects sees none of its nodes
    assert client_for(UserFactory(username="eve")).get("/api/v1/nodes").json() == {"nodes": []}
    bad = api.get("/api/v1/nodes", {"filterBy": "colour==red", "sortBy": "age", "limit": "0"})
    assert bad.status_code == 400 and bad["Content-Type"].startswith("application/json")
    assert {e["field"] for e in bad.json()["errors"]} == {"limit"}
    bad = api.get("/api/v1/nodes", {"filterBy": "colour==red", "sortBy": "age", "sortOrder": "up"})
    assert bad.status_code == 400 and {e["field"] for e in bad.json()["errors"]} == {"filterBy", "sortBy", "sortOrder"}


def test_a_node_pool_answers_its_allocation(client_for, pooled, django_assert_max_num_queries):
    cluster, pools, project, member, root = pooled
    api = client_for(member)
    answer = api.get(f"/api/v1/node-pools/{pools['pool-a'].pk}")
    assert answer.status_code == 200
    assert_matches_spec(answer, "get", "/api/v1/node-pools/{nodepoolId}")
    body = answer.json()
    assert body["quotaStatus"] == {"allocated": {"gpu": 3.0, "cpu": 2000.0, "memory": 4000.0},
                                   "requested": {"gpu": 3.0, "cpu": 2000.0, "memory": 4000.0}}
    assert body["totalResources"] == {"gpuQuota": 2.0}
    assert body["gpus"] == {"total": 8, "allocated": 3.0, "requested": 3.0, "free": 5.0}
    with django_assert_max_num_queries(8):
        listed = api.get("/api/v1/node-pools", {"clusterId": str(cluster.pk)})
    assert listed.status_code == 200  # (its default pool's empty labelKey is not latest's: checked one by one)
    assert {p["name"]: p["quotaStatus"]["requested"] for p in listed.json()["nodepools"]} == {
        "default": {"gpu": 0.0, "cpu": 0.0, "memory": 0.0}, "pool-a": {"gpu": 3.0, "cpu": 2000.0, "memory": 4000.0},
        "pool-b": {"gpu": 2.0, "cpu": 500.0, "memory": 1000.0}}
    # the project's own answer says the same, pool by pool
    status = api.get(f"/api/v1/org-unit/projects/{project.pk}").json()["status"]
    assert status["nodePoolQuotaStatuses"] == [
        {"nodePoolName": "pool-a", "nodePoolId": str(pools["pool-a"].pk),
         "allocated": {"gpu": 3.0, "cpu": 2000.0, "memory": 4000.0},
         "requested": {"gpu": 3.0, "cpu": 2000.0, "memory": 4000.0}},
        {"nodePoolName": "pool-b", "nodePoolId": str(pools["pool-b"].pk),
         "allocated": {"gpu": 0.0, "cpu": 0.0, "memory": 0.0},
         "requested": {"gpu": 2.0, "cpu": 500.0, "memory": 1000.0}}]
    assert status["quotaStatus"] == {"allocated": {"gpu": 3.0, "cpu": 2000.0, "memory": 4000.0},
                                     "requested": {"gpu": 5.0, "cpu": 2500.0, "memory": 5000.0}}
    bad = api.get("/api/v1/node-pools", {"clusterId": "not-a-uuid"})
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "clusterId"


def test_node_telemetry_by_pool_and_node(client_for, pooled):
    cluster, pools, project, member, root = pooled
    api = client_for(member)

    def values(**query):
        answer = api.get("/api/v1/nodes/telemetry", query)
        assert answer.status_code == 200, answer.json()
        assert_matches_spec(answer, "get", "/api/v1/nodes/telemetry")
        return [(v["value"], [g["value"] for g in v.get("groups", [])]) for v in answer.json()["values"]]

    assert values(telemetryType="TOTAL_GPUS") == [("24", [])]
    assert values(telemetryType="READY_GPU_NODES") == [("3", [])]
    assert values(telemetryType="ALLOCATED_GPUS", groupBy="Nodepool") == [
        ("0", ["default"]), ("3", ["pool-a"]), ("0", ["pool-b"])]
    assert values(telemetryType="ALLOCATED_GPUS", groupBy="Node", nodepoolName="pool-a") == [("3", ["sim-node-0"])]
    assert values(telemetryType="FREE_GPUS", clusterId=str(cluster.pk)) == [("21", [])]
    assert values(telemetryType="FULLY_FREE_GPU_NODES") == [("2", [])]
    assert values(telemetryType="ALLOCATED_CPU_CORES", groupBy="ClusterId") == [("2", [str(cluster.pk)])]
    assert values(telemetryType="USED_GPU_MEMORY_BYTES") == []  # not read by PaaS Studio
    bad = api.get("/api/v1/nodes/telemetry", {"telemetryType": "NOPE", "groupBy": "Colour", "clusterId": "x"})
    assert bad.status_code == 400
    assert {e["field"] for e in bad.json()["errors"]} == {"telemetryType", "groupBy[0]", "clusterId"}


def test_node_pool_metrics_now_and_over_time(client_for, pooled):
    cluster, pools, project, member, root = pooled
    api = client_for(member)
    url = f"/api/v1/clusters/{cluster.pk}/nodepools/pool-a/metrics"
    answer = api.get(url, {"metricType": "TOTAL_GPU,GPU_QUOTA,UNALLOCATED_GPU,WORKLOADS_COUNT,ALLOCATED_GPU",
                           "start": "2020-01-01T00:00:00Z", "end": "2100-01-01T00:00:00Z"})
    assert answer.status_code == 200, answer.json()
    assert_matches_spec(answer, "get", "/api/v1/clusters/{clusterUuid}/nodepools/{nodepoolName}/metrics")
    now = {m["type"]: [v["value"] for v in m["values"]] for m in answer.json()["measurements"]}
    assert now == {"TOTAL_GPU": ["8"], "GPU_QUOTA": ["2"], "UNALLOCATED_GPU": ["5"], "WORKLOADS_COUNT": ["1"],
                   "ALLOCATED_GPU": []}  # no samples collected here
    partial = api.get(url, {"metricType": "GPU_UTILIZATION", "start": "2020-01-01T00:00:00Z",
                            "end": "2100-01-01T00:00:00Z"})
    assert partial.status_code == 207
    assert api.get(f"/api/v1/clusters/{cluster.pk}/nodepools/nowhere/metrics",
                   {"metricType": "TOTAL_GPU", "start": "2020-01-01T00:00:00Z",
                    "end": "2100-01-01T00:00:00Z"}).status_code == 404
    bad = api.get(url, {"metricType": "NOPE", "start": "2030-01-01T00:00:00Z", "end": "2020-01-01T00:00:00Z"})
    assert bad.status_code == 400 and bad.json()["errors"]
    outsider = client_for(UserFactory(username="eve"))
    assert outsider.get(url, {"metricType": "TOTAL_GPU", "start": "2020-01-01T00:00:00Z",
                              "end": "2100-01-01T00:00:00Z"}).status_code == 404


def test_a_workload_and_its_pods_are_where_they_were_placed(client_for, pooled):
    cluster, pools, project, member, root = pooled
    api = client_for(member)
    workloads = {w["name"]: w for w in api.get("/api/v1/workloads").json()["workloads"]}
    assert workloads["run"]["currentNodePools"] == ["pool-a"]  # where its pods run, not the pools it may use
    assert workloads["wait"]["currentNodePools"] == []  # it holds nothing yet
    pods = api.get("/api/v1/workloads/pods", {"filterBy": "currentNodepool==pool-a"}).json()["pods"]
    assert [(p["name"], p["currentNodePool"]) for p in pods] == [("run-0", "pool-a")]
    assert api.get("/api/v1/workloads/pods", {"filterBy": "currentNodepool==pool-b"}).json()["pods"] == []


def test_runapy_reads_nodes_their_telemetry_and_a_pools_metrics(live_server, pooled):
    cluster, pools, project, member, root = pooled
    org = runapy_client(live_server.url, member).organizations
    nodes = org.nodes.get_tenant_nodes(filter_by=["nodePool==pool-a"]).data
    assert [n["name"] for n in nodes["nodes"]] == ["sim-node-0"]
    assert org.nodes.count_tenant_nodes().data == {"count": 3}
    telemetry = org.nodes.get_node_telemetry("ALLOCATED_GPUS", group_by=["Nodepool"]).data
    assert not spec_errors(telemetry, "get", "/api/v1/nodes/telemetry", 200)
    assert {v["groups"][0]["value"]: v["value"] for v in telemetry["values"]} == {
        "default": "0", "pool-a": "3", "pool-b": "0"}
    metrics = org.node_pools.get_nodepool_metrics(
        str(cluster.pk), "pool-a", datetime(2020, 1, 1, tzinfo=UTC), datetime(2100, 1, 1, tzinfo=UTC),
        ["TOTAL_GPU", "UNALLOCATED_GPU"]).data
    assert [(m["type"], [v["value"] for v in m["values"]]) for m in metrics["measurements"]] == [
        ("TOTAL_GPU", ["8"]), ("UNALLOCATED_GPU", ["5"])]
    pool = org.node_pools.get_nodepool(str(pools["pool-a"].pk)).data
    assert pool["quotaStatus"]["requested"] == {"gpu": 3.0, "cpu": 2000.0, "memory": 4000.0}
