"""Node pools are real: pools of a cluster's labelled nodes, per-pool project quotas, submissions that name a
pool the project cannot use refused as a 400 naming spec.nodePools[i], and the seeds' bodies running on pools."""

import copy

import pytest

from policies.services import policy_overwrite
from studio.models import NodePool
from studio.services import cluster_create
from tests.conftest import SIM_TOKEN
from tests.factories import MembershipFactory, ProjectFactory, UserFactory, seed_data_volume
from tests.runai_spec import assert_matches_spec
from tests.workloads.cluster_support import training_body, wait_for
from tests.workloads.seed_bodies import INFERENCE_REQUEST, TRAINING_REQUEST
from workloads import tasks

POOLS = "/api/v1/node-pools"


def quota(*pools) -> list[dict]:
    return [{"nodePool": {"id": str(p.pk), "name": p.name}, "gpu": {"deserved": 2, "limit": 4, "overQuotaWeight": 1}}
            for p in pools]


@pytest.mark.django_db
def test_node_pools_create_list_get_count_delete(client_for, org, django_assert_max_num_queries):
    api = client_for(org.users.platform_admin)
    body = {"name": "a100", "labelKey": "run.ai/node-pool", "labelValue": "a100", "clusterId": str(org.cluster.pk)}
    created = api.post(POOLS, body, format="json")
    assert created.status_code == 201, created.json()
    assert_matches_spec(created, "post", POOLS)
    pool_id = created.json()["id"]
    assert api.post(POOLS, body, format="json").status_code == 409
    with django_assert_max_num_queries(8):  # and their allocation: projects, workloads' use, pools (node_pool_api)
        listed = api.get(POOLS)
    assert_matches_spec(listed, "get", POOLS)
    assert [p["name"] for p in listed.json()["nodepools"]] == ["a100"]
    one = api.get(f"{POOLS}/{pool_id}")
    assert_matches_spec(one, "get", f"{POOLS}/{{nodepoolId}}")
    assert api.get(f"{POOLS}/count").json() == {"count": 1}
    # members read the pools of their cluster; only platform admins change them
    member = client_for(org.users.member)
    assert [p["name"] for p in member.get(POOLS).json()["nodepools"]] == ["a100"]
    assert member.delete(f"{POOLS}/{pool_id}").status_code == 403
    assert client_for(UserFactory(username="eve")).get(f"{POOLS}/{pool_id}").status_code == 404
    # a pool that holds a project's quota stays
    org.a.node_pool_resources = quota(NodePool.objects.get(pk=pool_id))
    org.a.save()
    refused = api.delete(f"{POOLS}/{pool_id}")
    assert refused.status_code == 409
    assert refused.json()["message"] == (f"Node pool a100 holds quotas of project {org.a.name}: move them to "
                                         f"another pool first.")
    org.a.node_pool_resources = []
    org.a.save()
    # ... and so does one that holds its department's (the department would point at a pool that is gone)
    org.department.node_pool_resources = quota(NodePool.objects.get(pk=pool_id))
    org.department.save()
    refused = api.delete(f"{POOLS}/{pool_id}")
    assert refused.status_code == 409 and f"department {org.department.name}" in refused.json()["message"]
    org.department.node_pool_resources = []
    org.department.save()
    assert api.delete(f"{POOLS}/{pool_id}").status_code == 204
    bad = api.post(POOLS, {"name": "B!", "clusterId": "nope", "labelKey": "k"}, format="json")
    assert bad.status_code == 400
    assert {e["field"] for e in bad.json()["errors"]} == {"name", "clusterId", "labelValue"}


@pytest.mark.django_db
def test_a_cluster_made_through_the_api_has_its_default_pool(client_for, org):
    api = client_for(org.users.platform_admin)
    made = api.post("/api/v1/clusters", {"name": "east", "apiServerUrl": "https://k8s.example.com"}, format="json")
    pools = api.get(POOLS, {"clusterId": made.json()["uuid"]}).json()["nodepools"]
    assert [(p["name"], p["isDefault"]) for p in pools] == [("default", True)]
    assert api.delete(f"{POOLS}/{pools[0]['id']}").status_code == 400


@pytest.mark.django_db
def test_a_submission_naming_a_pool_the_project_cannot_use_is_a_400_naming_it(client_for, org):
    a = NodePool.objects.create(cluster=org.cluster, name="pool-a", label_key="run.ai/node-pool", label_value="pool-a")
    NodePool.objects.create(cluster=org.cluster, name="pool-b", label_key="run.ai/node-pool", label_value="pool-b")
    org.a.node_pool_resources = quota(a)
    org.a.save()
    api = client_for(org.users.member)
    response = api.post("/api/v1/workloads/trainings",
                        training_body(org.a, "pools", nodePools=["pool-a", "pool-b", "nowhere"]), format="json")
    assert response.status_code == 400, response.json()
    errors = {e["field"]: e["message"] for e in response.json()["errors"]}
    assert set(errors) == {"spec.nodePools[1]", "spec.nodePools[2]"}
    assert "no quota in node pool 'pool-b'" in errors["spec.nodePools[1]"]
    assert "No node pool 'nowhere'" in errors["spec.nodePools[2]"]
    ok = api.post("/api/v1/workloads/trainings", training_body(org.a, "pool-a-only", nodePools=["pool-a"]),
                  format="json")
    assert ok.status_code == 200, ok.json()


@pytest.fixture
def pooled_org(transactional_db, start_kubesim):
    """A kubesim whose nodes are in the seeds' pools and of the seeds' node type, a cluster row made through the
    service (with its default pool), the two pools, a project with a quota in each, and a member."""
    sim = start_kubesim(nodes=3, node_pools={"my-node-pool-a": 1, "my-node-pool-b": 1},
                        node_labels={"run.ai/type": "my-node-type"},
                        node_resources={"hardware-vendor.example/foo": "8"})
    root = UserFactory(username="root", platform_admin=True)
    cluster = cluster_create(actor=root, name="pooled", api_server_url=sim.url, token=SIM_TOKEN, verify_tls=False)
    pools = [NodePool.objects.create(cluster=cluster, name=n, label_key="run.ai/node-pool", label_value=n)
             for n in ("my-node-pool-a", "my-node-pool-b")]
    project = ProjectFactory(name="pooled", cluster=cluster, gpu_deserved=16, gpu_limit=16,
                             node_pool_resources=quota(*pools))
    member = UserFactory(username="pool-member")
    MembershipFactory(user=member, project=project, role="member")
    return sim, cluster, project, member, root


@pytest.mark.django_db(transaction=True)
def test_nodes_are_read_from_the_cluster_in_their_pools(client_for, pooled_org):
    sim, cluster, project, member, root = pooled_org
    response = client_for(member).get(f"/api/v1/clusters/{cluster.pk}/nodes")
    assert response.status_code == 200
    assert_matches_spec(response, "get", "/api/v1/clusters/{clusterUuid}/nodes")
    assert sorted((n["name"], n["nodePool"]) for n in response.json()["nodes"]) == [
        ("sim-node-0", "my-node-pool-a"), ("sim-node-1", "my-node-pool-b"), ("sim-node-2", "default")]
    assert client_for(UserFactory(username="eve")).get(f"/api/v1/clusters/{cluster.pk}/nodes").status_code == 404


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_seeds_bodies_as_published_run_on_the_pools_they_name(client_for, pooled_org, worker):
    sim, cluster, project, member, root = pooled_org
    # Seed 003 mounts a hostPath, which the fallback policy refuses until an admin allows it for the project.
    policy_overwrite(actor=root, policy_type="trainings", body={
        "meta": {"name": "demo-host-path", "scope": "project", "projectId": project.pk},
        "policy": {"rules": {"storage": {"hostPath": {"instances": {"canAdd": True}}}}}})
    seed_data_volume(project)  # the seeds mount a data volume: the project's own
    api = client_for(member)
    made = {}
    for path, seed in (("trainings", TRAINING_REQUEST), ("inferences", INFERENCE_REQUEST)):
        body = copy.deepcopy(seed)
        body.update(projectId=project.pk, clusterId=str(cluster.pk))
        response = api.post(f"/api/v1/workloads/{path}", body, format="json")
        assert response.status_code == 200, response.json()
        made[path] = response.json()["workloadId"]

    def phases():
        tasks.cluster_sync.apply(args=[str(cluster.pk)])
        return {path: api.get(f"/api/v1/workloads/{wid}").json()["phase"] for path, wid in made.items()}

    last = {}

    def running():
        last.update(phases())
        return last["trainings"] in ("Running", "Completed") and last["inferences"] == "Running"

    try:
        wait_for(running, timeout=60, what="the seeds' workloads running")
    finally:
        print("PHASES", last, {p: api.get(f"/api/v1/workloads/{w}").json()["phaseMessage"] for p, w in made.items()})
    pods = api.get(f"/api/v1/workloads/{made['trainings']}/pods").json()["pods"]
    assert pods and all(p["nodeName"] in ("sim-node-0", "sim-node-1") for p in pods)



@pytest.mark.django_db
def test_project_and_department_resources_per_node_pool(client_for, org):
    a = NodePool.objects.create(cluster=org.cluster, name="pool-a", label_key="run.ai/node-pool", label_value="pool-a")
    b = NodePool.objects.create(cluster=org.cluster, name="pool-b", label_key="run.ai/node-pool", label_value="pool-b")
    api = client_for(org.users.platform_admin)
    url = f"/api/v1/org-unit/projects/{org.a.pk}/resources"
    body = [{"nodePool": {"id": str(a.pk)}, "gpu": {"deserved": 2, "limit": 4, "overQuotaWeight": 1},
             "cpu": {"deserved": 1000, "limit": None}, "memory": {"deserved": 1024, "units": "Mib"}},
            {"nodePool": {"name": "pool-b"}, "gpu": {"deserved": "1"}}]  # a number in a string is accepted
    put = api.put(url, body, format="json")
    assert put.status_code == 200, put.json()
    assert_matches_spec(put, "put", "/api/v1/org-unit/projects/{projectId}/resources")
    assert [(r["nodePool"]["name"], r["gpu"]["deserved"]) for r in put.json()] == [("pool-a", 2), ("pool-b", 1)]
    org.a.refresh_from_db()
    assert (org.a.gpu_deserved, org.a.gpu_limit) == (3, None)  # pool-b has no limit
    patched = api.patch(url, [{"nodePool": {"id": str(b.pk)}, "gpu": {"deserved": 3, "limit": 3}}], format="json")
    assert [(r["nodePool"]["name"], r["gpu"]["limit"]) for r in patched.json()] == [("pool-a", 4), ("pool-b", 3)]
    org.a.refresh_from_db()
    assert (org.a.gpu_deserved, org.a.gpu_limit) == (5, 7)
    # the project may now submit to pool-a and pool-b only: the default pool holds no quota of it
    bad = api.put(url, [{"nodePool": {"name": "nowhere"}, "gpu": {"deserved": -3, "limit": 1, "x": 1}},
                        {"gpu": {"deserved": 5, "limit": 2}, "memory": {"units": "TB"}}], format="json")
    assert bad.status_code == 400
    assert {e["field"] for e in bad.json()["errors"]} == {
        "resources[0].nodePool", "resources[0].gpu.deserved", "resources[0].gpu.x", "resources[1].nodePool",
        "resources[1].gpu.limit", "resources[1].memory.units"}
    assert client_for(org.users.admin).put(url, body, format="json").status_code == 403
    assert client_for(UserFactory(username="eve")).put(url, body, format="json").status_code == 403

    # the department's share covers its projects' (a share below it is refused: test_department_share.py)
    dept_body = [body[0], {"nodePool": {"name": "pool-b"}, "gpu": {"deserved": 3}}]
    dept = api.put(f"/api/v1/org-unit/departments/{org.department.pk}/resources", dept_body, format="json")
    assert dept.status_code == 200, dept.json()
    assert_matches_spec(dept, "put", "/api/v1/org-unit/departments/{departmentId}/resources")


@pytest.mark.django_db
def test_a_project_created_with_runais_per_pool_resources_array(client_for, org):
    a = NodePool.objects.create(cluster=org.cluster, name="pool-a", label_key="run.ai/node-pool", label_value="pool-a")
    api = client_for(org.users.platform_admin)
    body = {"name": "pooled", "departmentId": org.department.pk, "clusterId": str(org.cluster.pk),
            "resources": [{"nodePool": {"id": str(a.pk), "name": "pool-a"}, "gpu": {"deserved": 3, "limit": 6}}]}
    created = api.post("/api/v1/org-unit/projects", body, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["resources"] == [{"nodePool": {"id": str(a.pk), "name": "pool-a"},
                                            "gpu": {"deserved": 3, "limit": 6, "overQuotaWeight": None}}]
    assert created.json()["totalResources"]["gpuQuota"] == 3
    quotas = api.patch(f"/api/v1/org-unit/projects/{created.json()['id']}/resources",
                       [{"nodePool": {"name": "pool-a"}, "gpu": {"deserved": 1}}], format="json").json()
    assert quotas == [{"nodePool": {"id": str(a.pk), "name": "pool-a"},
                       "gpu": {"deserved": 1, "limit": None, "overQuotaWeight": None}}]
    bad = api.post("/api/v1/org-unit/projects", {**body, "name": "other",
                                                 "resources": [{"nodePool": {"name": "nope"}, "gpu": {}}]},
                   format="json")
    assert bad.status_code == 400
    assert {e["field"] for e in bad.json()["errors"]} == {"resources[0].nodePool", "resources[0].gpu.deserved"}


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_pods_stay_in_the_pool_they_name_by_its_own_label_and_default_means_no_other_pool(client_for, pooled_org,
                                                                                         worker):
    """A pool made with its own label (`example.com/gpu=h100`) keeps its workloads' pods on its nodes; a workload
    naming `default` runs on a node that no other pool holds (it used to get no node rule at all)."""
    from kubernetes import client

    from tests.conftest import official_client

    sim, cluster, project, member, root = pooled_org
    client.CoreV1Api(official_client(sim)).patch_node("sim-node-0", {"metadata": {"labels": {
        "run.ai/node-pool": None, "example.com/gpu": "h100"}}})
    NodePool.objects.filter(cluster=cluster, name="my-node-pool-a").update(label_key="example.com/gpu",
                                                                          label_value="h100")
    default = NodePool.objects.get(cluster=cluster, is_default=True)
    project.node_pool_resources = quota(*NodePool.objects.filter(cluster=cluster))
    project.save()
    api = client_for(member)
    made = {}
    for pool in ("my-node-pool-a", default.name):
        body = training_body(project, f"in-{pool}", nodePools=[pool])
        response = api.post("/api/v1/workloads/trainings", body, format="json")
        assert response.status_code == 200, response.json()
        made[pool] = response.json()["workloadId"]

    def nodes():
        tasks.cluster_sync.apply(args=[str(cluster.pk)])
        return {pool: [p["nodeName"] for p in api.get(f"/api/v1/workloads/{wid}/pods").json()["pods"]]
                for pool, wid in made.items()}

    placed = {}

    def both_placed():
        placed.update(nodes())
        return all(placed.values())

    try:
        wait_for(both_placed, timeout=60, what="both trainings' pods on a node")
    finally:
        print("PLACED", placed, {p: api.get(f"/api/v1/workloads/{w}").json()["phaseMessage"] for p, w in made.items()})
    assert placed == {"my-node-pool-a": ["sim-node-0"], default.name: ["sim-node-2"]}


@pytest.mark.django_db
def test_a_node_pool_is_updated_with_put_and_patch_as_runai_latest_does(client_for, org):
    api = client_for(org.users.platform_admin)
    created = api.post(POOLS, {"name": "h100", "labelKey": "run.ai/node-pool", "labelValue": "h100",
                               "clusterId": str(org.cluster.pk)}, format="json").json()
    one = f"{POOLS}/{created['id']}"
    patched = api.patch(one, {"gpuNetworkAccelerationDetection": "Use", "overProvisioningRatio": 2}, format="json")
    assert patched.status_code == 200, patched.json()
    assert_matches_spec(patched, "patch", f"{POOLS}/{{nodepoolId}}", versions=("latest",))
    assert (patched.json()["labelKey"], patched.json()["gpuNetworkAccelerationDetection"],
            patched.json()["overProvisioningRatio"]) == ("run.ai/node-pool", "Use", 2)
    put = api.put(one, {"labelKey": "gpu.example.com/type", "labelValue": "h100-sxm"}, format="json")
    assert put.status_code == 200, put.json()
    assert api.get(one).json()["labelKey"] == "gpu.example.com/type"
    assert api.get(one).json()["labelValue"] == "h100-sxm"
    # PUT gives the pool's whole label; the name, an unknown field, a bad value: 400s naming each
    bad = api.put(one, {"labelValue": "x", "name": "renamed", "overProvisioningRatio": 9}, format="json")
    assert bad.status_code == 400
    assert {e["field"] for e in bad.json()["errors"]} == {"labelKey", "name", "overProvisioningRatio"}
    default, _ = NodePool.objects.get_or_create(cluster=org.cluster, name="default", defaults={"is_default": True})
    refused = api.patch(f"{POOLS}/{default.pk}", {"labelKey": "k", "labelValue": "v"}, format="json")
    assert refused.status_code == 400 and refused.json()["errors"][0]["field"] == "labelKey"
    assert client_for(org.users.member).patch(one, {"labelValue": "mine"}, format="json").status_code == 403
    assert client_for(UserFactory(username="eve")).patch(one, {"labelValue": "x"}, format="json").status_code == 403
