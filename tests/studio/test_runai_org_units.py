"""Run:ai's Projects and Departments tags: Run:ai's own request bodies accepted, every answer checked against the
schemas of both of its documents (the union of their fields), CONTRACT §2's bodies and fields kept, the list's
filters and `/count`, GPU use read from the workloads, bad input a 400 naming each field, and the rules of who
may do what unchanged."""

import pytest

from studio.models import Cluster, Department, NodePool, Project
from tests.factories import ClusterFactory, DepartmentFactory, ProjectFactory, UserFactory
from tests.runai_spec import request_errors, spec_errors
from workloads.models import Workload

pytestmark = pytest.mark.django_db

PROJECTS, DEPARTMENTS = "/api/v1/org-unit/projects", "/api/v1/org-unit/departments"
# Run:ai 2.18 types a department's id as a uuid in its list (DepartmentSlim) and nowhere else (Department: "50");
# PaaS Studio's department ids are numeric strings in every answer, as Run:ai's own are.
SLIM_UUID = "is not a 'uuid'"


def matches(response, method, path):
    body = response.json() if response.content else None
    problems = [p for p in spec_errors(body, method, path, response.status_code)
                if not (p.startswith("[2.18] departments/") and SLIM_UUID in p)]
    assert not problems, f"{method.upper()} {path} differs from Run:ai's schema:\n" + "\n".join(problems)
    return body


@pytest.fixture
def pools(org):
    org.cluster.status = Cluster.Status.CONNECTED
    org.cluster.save()
    return (NodePool.objects.create(cluster=org.cluster, name="default", is_default=True),
            NodePool.objects.create(cluster=org.cluster, name="pool-a", label_key="run.ai/node-pool",
                                    label_value="pool-a"))


def project_body(org, pool, **extra):
    """Run:ai's ProjectCreationRequest, as its documents and runapy shape it."""
    return {"name": "vision", "clusterId": str(org.cluster.pk), "parentId": str(org.department.pk),
            "description": "Vision team", "requestedNamespace": "team-vision",
            "resources": [{"nodePool": {"id": str(pool.pk), "name": pool.name},
                           "gpu": {"deserved": 2, "limit": 4, "overQuotaWeight": 1},
                           "cpu": {"deserved": 8000, "limit": None}, "memory": {"deserved": 4, "units": "GB"}}],
            "schedulingRules": {"trainingJobTimeLimitSeconds": 3600}, "defaultNodePools": [pool.name],
            "nodeTypes": {"training": ["a100"], "workspace": []}, "enforceRunaiScheduler": False, **extra}


def test_a_project_through_runais_bodies_answered_as_runais_project(client_for, org, pools):
    api = client_for(org.users.platform_admin)
    body = project_body(org, pools[1])
    assert request_errors(body, "post", PROJECTS) == []  # the body is Run:ai's own
    created = api.post(PROJECTS, body, format="json")
    assert created.status_code == 201, created.json()
    project = matches(created, "post", PROJECTS)
    assert project["parentId"] == project["departmentId"] == str(org.department.pk)  # a string, as in workloads
    assert project["namespace"] == project["status"]["namespace"] == project["requestedNamespace"] == "team-vision"
    assert (project["phase"], project["status"]["phase"]) == ("Ready", "Ready")
    assert project["totalResources"] == {"gpuQuota": 2.0, "cpuQuota": 8000.0, "memoryQuota": 4000.0}
    assert project["resources"][0]["nodePool"] == {"id": str(pools[1].pk), "name": "pool-a"}
    assert project["effective"]["schedulingRules"] == {"trainingJobTimeLimitSeconds": 3600}
    assert (project["defaultNodePools"], project["enforceRunaiScheduler"]) == (["pool-a"], False)
    assert project["createdBy"] == "root" and project["id"] == str(Project.objects.get(name="vision").pk)
    url = f"{PROJECTS}/{project['id']}"
    matches(api.get(url), "get", f"{PROJECTS}/{{projectId}}")

    update = {"description": "Vision", "resources": [{"nodePool": {"id": str(pools[0].pk)}, "gpu": {"deserved": 1}}],
              "schedulingRules": None, "defaultNodePools": None}
    assert request_errors(update, "put", f"{PROJECTS}/{{projectId}}") == []
    updated = api.put(url, update, format="json")
    assert updated.status_code == 200, updated.json()
    answer = matches(updated, "put", f"{PROJECTS}/{{projectId}}")
    assert (answer["description"], answer["schedulingRules"], answer["defaultNodePools"]) == ("Vision", {}, None)
    assert [r["nodePool"]["name"] for r in answer["resources"]] == ["default"] and answer["updatedBy"] == "root"
    assert answer["nodeTypes"] == {"training": ["a100"], "workspace": []}  # left out: kept

    listed = api.get(PROJECTS, {"filterBy": "parentName==research,totalGpuQuota>=1", "sortBy": "name"})
    assert [p["name"] for p in matches(listed, "get", PROJECTS)["projects"]] == ["alpha", "beta", "vision"]
    assert "next" not in listed.json()  # Run:ai types it as an integer: left out on the last page
    counted = api.get(f"{PROJECTS}/count", {"filterBy": "name=^vis"})
    assert matches(counted, "get", f"{PROJECTS}/count") == {"count": 1}
    deleted = api.delete(url)
    assert deleted.status_code == 204
    matches(deleted, "delete", f"{PROJECTS}/{{projectId}}")


def test_contract_bodies_and_fields_keep_working(client_for, org, pools):
    api = client_for(org.users.platform_admin)
    created = api.post(PROJECTS, {"name": "legacy", "departmentId": org.department.pk, "clusterId": str(org.cluster.pk),
                                  "resources": {"gpu": {"deserved": 2, "limit": 4}}}, format="json")
    assert created.status_code == 201, created.json()
    project = matches(created, "post", PROJECTS)
    assert project["namespace"] == "studio-legacy" and project["requestedNamespace"] is None
    # CONTRACT's totals: one pool-less entry (the project may use every pool of its cluster), accepted back
    assert project["resources"] == [{"nodePool": None, "gpu": {"deserved": 2.0, "limit": 4.0, "overQuotaWeight": None}}]
    again = api.put(f"{PROJECTS}/{project['id']}", {"resources": [{"nodePool": None, "gpu": {"deserved": 3,
                                                                                            "limit": None}}]},
                    format="json")
    assert again.status_code == 200, again.json()
    assert again.json()["resources"][0]["gpu"] == {"deserved": 3.0, "limit": None, "overQuotaWeight": None}
    assert Project.objects.get(name="legacy").node_pool_resources == []
    # a numeric string as departmentId (ids are strings now) and an integer as parentId are taken too
    made = api.post(PROJECTS, {"name": "strings", "departmentId": str(org.department.pk), "clusterId": str(org.cluster.pk)},
                    format="json")
    assert made.status_code == 201 and made.json()["departmentId"] == str(org.department.pk)


def test_a_department_through_runais_bodies_answered_as_runais_department(client_for, org, pools):
    api = client_for(org.users.platform_admin)
    body = {"name": "physics", "clusterId": str(org.cluster.pk), "description": "Physics",
            "resources": [{"nodePool": {"id": str(pools[1].pk)}, "gpu": {"deserved": 8, "limit": -1}}],
            "schedulingRules": {"interactiveJobTimeLimitSeconds": 60}, "defaultNodePools": ["pool-a"]}
    assert request_errors(body, "post", DEPARTMENTS) == []
    created = api.post(DEPARTMENTS, body, format="json")
    assert created.status_code == 201, created.json()
    department = matches(created, "post", DEPARTMENTS)
    assert department["clusterId"] == str(org.cluster.pk) and department["totalResources"]["gpuQuota"] == 8
    url = f"{DEPARTMENTS}/{department['id']}"
    project = api.post(PROJECTS, project_body(org, pools[1], parentId=department["id"]), format="json")
    assert project.status_code == 201, project.json()
    one = matches(api.get(url), "get", f"{DEPARTMENTS}/{{departmentId}}")
    assert one["projectsAggregatedResources"] == [{"nodePool": {"id": str(pools[1].pk), "name": "pool-a"},
                                                   "gpu": {"deserved": 2.0}, "cpu": {"deserved": 8000.0},
                                                   "memory": {"deserved": 4000.0, "units": "MB"}}]
    update = {"description": "Physics dept", "resources": []}
    assert request_errors(update, "put", f"{DEPARTMENTS}/{{departmentId}}") == []
    updated = api.put(url, update, format="json")
    assert matches(updated, "put", f"{DEPARTMENTS}/{{departmentId}}")["description"] == "Physics dept"
    listed = matches(api.get(DEPARTMENTS, {"filterBy": f"clusterId=={org.cluster.pk}", "sortBy": "name",
                                           "sortOrder": "desc", "verbosity": "verbose"}), "get", DEPARTMENTS)
    assert [d["name"] for d in listed["departments"]] == ["physics"]
    # a CONTRACT department (no cluster of its own) answers its first project's cluster
    assert api.get(f"{DEPARTMENTS}/{org.department.pk}").json()["clusterId"] == str(org.cluster.pk)
    assert matches(api.get(f"{DEPARTMENTS}/count", {"search": "phys"}), "get", f"{DEPARTMENTS}/count") == {"count": 1}
    # the department is on its cluster: a project elsewhere is refused, naming clusterId
    elsewhere = ClusterFactory(name="elsewhere")
    bad = api.post(PROJECTS, {"name": "far", "parentId": department["id"], "clusterId": str(elsewhere.pk)},
                   format="json")
    assert bad.status_code == 400 and [e["field"] for e in bad.json()["errors"]] == ["clusterId"]
    assert api.delete(url).status_code == 409  # it still holds a project
    api.delete(f"{PROJECTS}/{project.json()['id']}")
    deleted = api.delete(url)
    assert deleted.status_code == 204
    matches(deleted, "delete", f"{DEPARTMENTS}/{{departmentId}}")


def test_gpu_use_comes_from_the_workloads(client_for, org, pools):
    def workload(project, name, phase, gpus, cpu=0, memory=0):
        Workload.objects.create(project=project, department=project.department, cluster=project.cluster,
                                name=name, kind="training", cpu_request=cpu, memory_request=memory,
                                actual_phase=phase, desired_phase="Running", gpu_request=gpus)

    workload(org.a, "running", "Running", 2, cpu=1500, memory=2 * 10**9)
    workload(org.a, "pending", "Pending", 1)
    workload(org.a, "cpu-only", "Running", 0, cpu=250, memory=5 * 10**8)  # no GPUs: its CPU and memory count
    workload(org.b, "done", "Completed", 4, cpu=8000)
    api = client_for(org.users.platform_admin)
    alpha = api.get(f"{PROJECTS}/{org.a.pk}").json()["status"]["quotaStatus"]
    assert alpha == {"allocated": {"gpu": 2.0, "cpu": 1750.0, "memory": 2500.0},  # millicores, MB
                     "requested": {"gpu": 3.0, "cpu": 1750.0, "memory": 2500.0}}
    assert api.get(f"{DEPARTMENTS}/{org.department.pk}").json()["status"]["quotaStatus"]["allocated"] == {
        "gpu": 2.0, "cpu": 1750.0, "memory": 2500.0}
    busy = api.get(PROJECTS, {"filterBy": "gpuAllocated>=1"}).json()["projects"]
    assert [p["name"] for p in busy] == ["alpha"]
    by_use = api.get(PROJECTS, {"sortBy": "gpuAllocated", "sortOrder": "desc"}).json()["projects"]
    assert [p["name"] for p in by_use] == ["alpha", "beta"]
    assert api.get(f"{PROJECTS}/count", {"filterBy": "phase==Ready"}).json() == {"count": 2}


def test_bad_input_is_a_400_naming_each_field(client_for, org, pools):
    api = client_for(org.users.platform_admin)
    bad = api.post(PROJECTS, {"name": "x1", "clusterId": str(org.cluster.pk), "parentId": "999",
                              "requestedNamespace": "kube-system", "defaultNodePools": ["nowhere"],
                              "resources": [{"nodePool": {"name": "nope"}, "gpu": {"deserved": 1}}]}, format="json")
    assert bad.status_code == 400
    assert {e["field"] for e in bad.json()["errors"]} == {"parentId", "requestedNamespace", "defaultNodePools[0]",
                                                          "resources[0].nodePool"}
    bad = api.post(PROJECTS, {"name": "x2", "clusterId": str(org.cluster.pk), "nodeTypes": {"gpu": []},
                              "schedulingRules": {"trainingJobTimeLimitSeconds": 0}, "enforceRunaiScheduler": "maybe"},
                   format="json")
    assert {e["field"] for e in bad.json()["errors"]} == {
        "nodeTypes.gpu", "schedulingRules.trainingJobTimeLimitSeconds", "enforceRunaiScheduler"}
    bad = api.post(PROJECTS, {"name": "x3", "clusterId": str(org.cluster.pk)}, format="json")
    assert [e["field"] for e in bad.json()["errors"]] == ["parentId"]  # a project needs its department
    bad = api.post(PROJECTS, {"name": "x4", "clusterId": str(org.cluster.pk), "parentId": str(org.department.pk),
                              "resources": [{"nodePool": None, "gpu": {"deserved": -2}, "cpu": {"deserved": 1}}]},
                   format="json")
    assert {e["field"] for e in bad.json()["errors"]} == {"resources[0].cpu"}
    bad = api.put(f"{PROJECTS}/{org.a.pk}", {"requestedNamespace": "other-ns", "parentId": "abc"}, format="json")
    assert {e["field"] for e in bad.json()["errors"]} == {"requestedNamespace", "parentId"}
    bad = api.post(DEPARTMENTS, {"name": "D!", "clusterId": "nope", "resources": {"gpu": {"deserved": 1}}},
                   format="json")
    assert {e["field"] for e in bad.json()["errors"]} == {"name", "clusterId"}
    bad = api.post(DEPARTMENTS, {"name": "d1", "resources": {"gpu": {"deserved": 1}}}, format="json")
    assert [e["field"] for e in bad.json()["errors"]] == ["resources"]
    for url in (PROJECTS, DEPARTMENTS, f"{PROJECTS}/count", f"{DEPARTMENTS}/count"):
        bad = api.get(url, {"filterBy": "avgGpuUtilisation24h>=5"})  # misspelt: not a field
        assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "filterBy"
        bad = api.get(url, {"filterBy": "avgGpuUtilization24h>=many"})
        assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "filterBy"


def test_who_may_do_what_is_unchanged(client_for, org, pools):
    member = client_for(org.users.member)
    assert [p["name"] for p in member.get(PROJECTS).json()["projects"]] == ["alpha"]
    assert member.get(f"{PROJECTS}/count").json() == {"count": 1}
    assert member.get(f"{PROJECTS}/{org.b.pk}").status_code == 404
    assert member.post(PROJECTS, project_body(org, pools[1]), format="json").status_code == 403
    assert member.put(f"{PROJECTS}/{org.a.pk}", {"description": "mine"}, format="json").status_code == 403
    assert member.get(f"{DEPARTMENTS}/count").json() == {"count": 1}
    outsider = client_for(UserFactory(username="eve"))
    assert outsider.get(f"{PROJECTS}/count").json() == {"count": 0}
    assert outsider.get(f"{DEPARTMENTS}/{org.department.pk}").status_code == 404
    other = DepartmentFactory(name="other")
    ProjectFactory(name="gamma", department=other, cluster=org.cluster)
    assert member.get(f"{DEPARTMENTS}/{other.pk}").status_code == 404
    assert Department.objects.count() == 2


def test_project_and_department_metrics_sum_their_workloads_samples(client_for, org, pools):
    from datetime import timedelta

    from django.utils import timezone

    from workloads.models import MetricSample

    now = timezone.now().replace(microsecond=0)
    rounds = [now - timedelta(minutes=2), now - timedelta(minutes=1)]

    def workload(project, name, gpus, cpu, pool=None):
        made = Workload.objects.create(project=project, department=project.department, cluster=project.cluster,
                                       name=name, kind="training", actual_phase="Running", gpu_request=gpus,
                                       spec={"nodePools": [pool]} if pool else {}, node_pool=pool or "")
        for at in rounds:
            MetricSample.objects.bulk_create([
                MetricSample(workload=made, type="GPU_ALLOCATION", value=gpus, timestamp=at),
                MetricSample(workload=made, type="CPU_REQUEST_CORES", value=cpu, timestamp=at),
                MetricSample(workload=made, type="GPU_ALLOCATION", value=gpus, timestamp=at, pod_name="pod-0")])

    workload(org.a, "one", 2, 0.5)
    workload(org.a, "two", 1, 1, pool="pool-a")
    workload(org.b, "three", 4, 2)
    query = {"metricType": "GPU_ALLOCATION,CPU_ALLOCATION_MILLICORES", "start": (now - timedelta(hours=1)).isoformat(),
             "end": now.isoformat(), "numberOfSamples": 0}
    member = client_for(org.users.member)
    path = f"{PROJECTS}/{{projectId}}/metrics"
    answer = member.get(f"{PROJECTS}/{org.a.pk}/metrics", query)
    assert answer.status_code == 200, answer.json()
    body = matches(answer, "get", path)
    assert [(m["type"], [v["value"] for v in m["values"]]) for m in body["measurements"]] == [
        ("GPU_ALLOCATION", ["3", "3"]), ("CPU_ALLOCATION_MILLICORES", ["1500", "1500"])]
    one_pool = member.get(f"{PROJECTS}/{org.a.pk}/metrics", {**query, "metricType": "ALLOCATED_GPU",
                                                             "nodepoolName": "pool-a"}).json()
    assert one_pool["measurements"][0]["type"] == "ALLOCATED_GPU"  # the seed's spelling, answered as asked
    assert [v["value"] for v in one_pool["measurements"][0]["values"]] == ["1", "1"]
    partial = member.get(f"{PROJECTS}/{org.a.pk}/metrics", {**query, "metricType": "GPU_QUOTA,GPU_ALLOCATION"})
    assert partial.status_code == 207  # quotas are not kept over time: no values
    assert [m["values"] == [] for m in matches(partial, "get", path)["measurements"]] == [True, False]
    assert member.get(f"{PROJECTS}/{org.b.pk}/metrics", query).status_code == 404
    department = member.get(f"{DEPARTMENTS}/{org.department.pk}/metrics", {**query, "numberOfSamples": 1})
    body = matches(department, "get", f"{DEPARTMENTS}/{{departmentId}}/metrics")
    assert [v["value"] for v in body["measurements"][0]["values"]] == ["7"]  # one bucket: the rounds' average
    bad = member.get(f"{PROJECTS}/{org.a.pk}/metrics", {"metricType": "GPU_UTILIZATION", "end": "x"})
    assert bad.status_code == 400
    assert {e["field"] for e in bad.json()["errors"]} == {"metricType", "start", "end"}


def test_a_projects_default_node_pools_are_the_pools_of_a_workload_naming_none(client_for, org, pools):
    from tests.workloads.cluster_support import training_body

    admin = client_for(org.users.platform_admin)
    set_pools = admin.put(f"{PROJECTS}/{org.a.pk}", {"defaultNodePools": ["pool-a", "default"]}, format="json")
    assert set_pools.status_code == 200, set_pools.json()
    member = client_for(org.users.member)
    made = member.post("/api/v1/workloads/trainings", training_body(org.a, "pooled"), format="json")
    assert made.status_code == 200, made.json()
    assert Workload.objects.get(name="pooled").spec["nodePools"] == ["pool-a", "default"]
    named = member.post("/api/v1/workloads/trainings", training_body(org.a, "named", nodePools=["default"]),
                        format="json")
    assert Workload.objects.get(pk=named.json()["workloadId"]).spec["nodePools"] == ["default"]  # its own wins
    NodePool.objects.filter(name="pool-a").delete()  # a default pool gone since: the submission names it
    gone = member.post("/api/v1/workloads/trainings", training_body(org.a, "gone"), format="json")
    assert gone.status_code == 400 and [e["field"] for e in gone.json()["errors"]] == ["spec.nodePools[0]"]


def test_telemetry_sums_quotas_and_allocation_of_what_the_caller_sees(client_for, org, pools):
    org.a.node_pool_resources = [{"nodePool": {"id": str(pools[1].pk), "name": "pool-a"},
                                  "gpu": {"deserved": 3, "limit": 6}, "cpu": {"deserved": 2000},
                                  "memory": {"deserved": 2, "units": "GB"}}]
    org.a.save()  # beta keeps CONTRACT's totals (4 GPUs, no per-pool quota)
    for project, name, kind, gpus, pool in ((org.a, "t", "training", 2, "pool-a"), (org.a, "i", "inference", 1, None),
                                            (org.b, "w", "workspace", 4, None)):
        Workload.objects.create(project=project, department=project.department, cluster=project.cluster, name=name,
                                kind=kind, actual_phase="Running", gpu_request=gpus, running_pods=2,
                                cpu_request=1000, memory_request=2 * 10**9,  # 2 pods of 0.5 cores and 1G
                                node_pool=pool or "",  # placed where it asked ("": the cluster's default pool)
                                spec={"compute": {"cpuCoreRequest": 0.5, "cpuMemoryRequest": "1G"},
                                      **({"nodePools": [pool]} if pool else {})})
    admin = client_for(org.users.platform_admin)
    path = f"{PROJECTS}/telemetry"

    def values(url, **query):
        answer = admin.get(url, query)
        assert answer.status_code == 200, answer.json()
        body = matches(answer, "get", url)
        return [(v["value"], [(g["key"], g.get("name", g["value"])) for g in v.get("groups", [])])
                for v in body["values"]]

    assert values(path, telemetryType="GPU_QUOTA") == [("7", [])]
    # beta's totals count in the cluster's default pool, as every other place counts them (studio.org.numbers)
    assert values(path, telemetryType="GPU_QUOTA", groupBy="NodepoolId") == [("4", [("NodepoolId", "default")]),
                                                                            ("3", [("NodepoolId", "pool-a")])]
    assert values(path, telemetryType="CPU_QUOTA") == [("2000", [])]
    assert values(path, telemetryType="MEMORY_QUOTA", nodepoolId=str(pools[1].pk)) == [("2000", [])]
    assert values(path, telemetryType="GPU_ALLOCATION", groupBy="ClusterId,ParentId") == [
        ("7", [("ClusterId", "main"), ("ParentId", "research")])]
    assert values(path, telemetryType="GPU_ALLOCATION_NON_PREEMPTIBLE") == [("5", [])]  # not the training
    assert values(path, telemetryType="CPU_ALLOCATION", departmentId=str(org.department.pk)) == [("3000", [])]
    assert values(path, telemetryType="MEMORY_ALLOCATION", groupBy="NodepoolId") == [
        ("4000", [("NodepoolId", "default")]), ("2000", [("NodepoolId", "pool-a")])]
    # a member sees alpha only; departments answer their own quotas (none here) and their workloads
    member = client_for(org.users.member)
    assert member.get(path, {"telemetryType": "GPU_ALLOCATION"}).json()["values"] == [{"value": "3"}]
    dept = f"{DEPARTMENTS}/telemetry"
    assert values(dept, telemetryType="GPU_ALLOCATION", groupBy="CLUSTER_ID") == [("7", [("CLUSTER_ID", "main")])]
    assert values(dept, telemetryType="GPU_QUOTA") == [("0", [])]
    bad = admin.get(path, {"telemetryType": "GPU_UTILIZATION", "groupBy": "Node", "clusterId": "x"})
    assert bad.status_code == 400
    assert {e["field"] for e in bad.json()["errors"]} == {"telemetryType", "groupBy", "clusterId"}
