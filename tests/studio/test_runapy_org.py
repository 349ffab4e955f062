"""Run:ai's SDK (runapy) against a live server: the organisation half of its API, logged in with an app token."""

import pytest
from runai.models import AccessRuleCreationFields, UserChangePasswordRequest, UserCreationRequest1

from studio.models import Role
from tests.runapy_support import runapy_client

pytestmark = pytest.mark.django_db(transaction=True)


def test_runapy_roles_access_rules_and_users(live_server, org):
    admin = runapy_client(live_server.url, org.users.platform_admin)
    roles = admin.authentication_and_authorization.roles.get_roles_v1()
    assert roles.status_code == 200
    viewer = next(r for r in roles.data if r["name"] == "Viewer")
    assert admin.authentication_and_authorization.roles.get_role_v1(role_id_path=viewer["id"]).data["name"] == "Viewer"

    rules = admin.authentication_and_authorization.access_rules
    created = rules.create_access_rule(AccessRuleCreationFields(
        subject_id="dave", subject_type="user", role_id=viewer["id"], scope_id=str(org.a.pk), scope_type="project"))
    assert created.status_code == 201
    rule_id = created.data["id"]
    assert rules.get_access_rule(access_rule_id=rule_id).data["scopeName"] == "alpha"
    listed = rules.get_access_rules(subject_id_filter="dave", filter_by=["roleName==Viewer"])
    assert [r["id"] for r in listed.data["accessRules"]] == [rule_id]
    assert rules.count_access_rules(filter_by=["subjectId==dave"]).data == {"count": 2}
    assert rules.delete_access_rule(access_rule_id=rule_id).status_code == 204

    users = admin.authentication_and_authorization.users
    made = users.create_user(UserCreationRequest1(email="sdk.user@example.com"))
    assert made.status_code == 201 and made.data["tempPassword"]
    assert users.get_user_by_id(user_id=made.data["id"]).data["username"] == "sdk.user@example.com"
    assert any(u["username"] == "sdk.user@example.com" for u in users.get_users(filter_by=["username=@sdk"]).data)
    assert users.count_users().data["count"] == 6
    assert users.reset_user_password(user_id=made.data["id"]).data["tempPassword"]
    assert users.delete_user_by_id(user_id=made.data["id"]).status_code == 204

    member = runapy_client(live_server.url, org.users.member)
    changed = member.authentication_and_authorization.users.change_user_password(
        UserChangePasswordRequest(current_password="pw-for-tests-1", new_password="sdk-chosen-password-2"))
    assert changed.status_code == 200
    assert Role.objects.filter(name="Viewer").exists()


def test_runapy_clusters_node_pools_nodes_and_project_resources(live_server, start_kubesim):
    from runai.exceptions import ConflictException
    from runai.models import NodepoolCreateFields, Resources

    from studio.services import cluster_create
    from tests.conftest import SIM_TOKEN
    from tests.factories import DepartmentFactory, ProjectFactory, UserFactory

    sim = start_kubesim(nodes=2, node_pools={"pool-a": 1})
    root = UserFactory(username="root", platform_admin=True)
    cluster = cluster_create(actor=root, name="sdk", api_server_url=sim.url, token=SIM_TOKEN, verify_tls=False)
    project = ProjectFactory(name="sdk-project", cluster=cluster, department=DepartmentFactory(name="sdk-dept"))
    org = runapy_client(live_server.url, root).organizations

    clusters = org.clusters.get_clusters()
    assert [c["uuid"] for c in clusters.data] == [str(cluster.pk)]
    assert org.clusters.get_cluster_by_uuid(cluster_uuid=str(cluster.pk)).data["name"] == "sdk"

    made = org.node_pools.create_nodepool(NodepoolCreateFields(
        name="pool-a", label_key="run.ai/node-pool", label_value="pool-a", cluster_id=str(cluster.pk)))
    assert made.status_code == 201
    assert org.node_pools.get_nodepool(nodepool_id=made.data["id"]).data["labelValue"] == "pool-a"
    assert {p["name"] for p in org.node_pools.get_nodepools().data["nodepools"]} == {"default", "pool-a"}
    nodes = org.nodes.get_nodes(cluster_uuid=str(cluster.pk)).data["nodes"]
    assert sorted(n["nodePool"] for n in nodes) == ["default", "pool-a"]

    quota = [Resources.from_dict({"nodePool": {"id": made.data["id"]}, "gpu": {"deserved": 2, "limit": 4}})]
    updated = org.projects.update_project_resources(project_id=str(project.pk), resources_nullable=quota)
    assert updated.status_code == 200 and updated.data[0]["nodePool"]["name"] == "pool-a"
    project.refresh_from_db()
    assert project.gpu_deserved == 2
    with pytest.raises(ConflictException):  # the pool holds the project's quota
        org.node_pools.delete_nodepool(nodepool_id=made.data["id"])


def test_runapy_projects_and_departments(live_server, org):
    """Run:ai's Projects and Departments operations as runapy sends them, answered as Run:ai's schemas say."""
    from runai.models import (
        DepartmentCreationRequest,
        DepartmentUpdateRequest,
        ProjectCreationRequest,
        ProjectUpdateRequest,
        ResourcesNullable,
    )

    from studio.models import NodePool
    from tests.runai_spec import spec_errors

    def checked(response, method, path):
        problems = [p for p in spec_errors(response.data, method, path, response.status_code)
                    if not (p.startswith("[2.18] departments/") and "is not a 'uuid'" in p)]  # DepartmentSlim's id
        assert not problems, "\n".join(problems)
        return response.data

    pool = NodePool.objects.create(cluster=org.cluster, name="pool-a", label_key="run.ai/node-pool",
                                   label_value="pool-a")
    quota = [ResourcesNullable.from_dict({"nodePool": {"id": str(pool.pk)}, "gpu": {"deserved": 2, "limit": 4}})]
    runai = runapy_client(live_server.url, org.users.platform_admin).organizations
    departments, projects = runai.departments, runai.projects
    d = "/api/v1/org-unit/departments"
    p = "/api/v1/org-unit/projects"

    made = departments.create_department(DepartmentCreationRequest(
        name="sdk-dept", cluster_id=str(org.cluster.pk), resources=quota, description="from runapy"))
    assert made.status_code == 201
    dept_id = checked(made, "post", d)["id"]
    assert checked(departments.get_department(department_id=dept_id), "get", f"{d}/{{departmentId}}")["name"] == \
        "sdk-dept"
    listed = checked(departments.get_departments(filter_by=["name=^sdk"], sort_by="name"), "get", d)
    assert [x["id"] for x in listed["departments"]] == [dept_id]
    assert checked(departments.count_departments(filter_by=["name==sdk-dept"]), "get", f"{d}/count") == {"count": 1}
    changed = departments.update_department(department_id=dept_id, department_update_request=DepartmentUpdateRequest(
        resources=quota, description="changed"))
    assert checked(changed, "put", f"{d}/{{departmentId}}")["description"] == "changed"

    created = projects.create_project(ProjectCreationRequest(
        name="sdk-project", cluster_id=str(org.cluster.pk), parent_id=dept_id, resources=quota,
        requested_namespace="sdk-ns"))
    assert created.status_code == 201
    project = checked(created, "post", p)
    assert (project["parentId"], project["namespace"]) == (dept_id, "sdk-ns")
    url_id = project["id"]
    assert checked(projects.get_project(project_id=url_id), "get", f"{p}/{{projectId}}")["name"] == "sdk-project"
    page = checked(projects.get_projects(filter_by=[f"parentId=={dept_id}", "name=@sdk"], sort_by="createdAt",
                                         limit=10), "get", p)
    assert [x["name"] for x in page["projects"]] == ["sdk-project"]
    assert checked(projects.count_projects(filter_by=[f"clusterId=={org.cluster.pk}"]), "get", f"{p}/count") == \
        {"count": 3}
    updated = projects.update_project(project_id=url_id, project_update_request=ProjectUpdateRequest(
        resources=quota, description="runapy", default_node_pools=["pool-a"]))
    assert checked(updated, "put", f"{p}/{{projectId}}")["defaultNodePools"] == ["pool-a"]
    from datetime import UTC, datetime, timedelta

    end = datetime.now(UTC)
    metrics = projects.get_project_metrics(project_id=url_id, metric_type=["GPU_ALLOCATION", "GPU_QUOTA"],
                                           start=end - timedelta(hours=1), end=end, number_of_samples=10)
    assert metrics.status_code == 207  # no quota history: GPU_QUOTA has no values
    assert [m["type"] for m in checked(metrics, "get", f"{p}/{{projectId}}/metrics")["measurements"]] == [
        "GPU_ALLOCATION", "GPU_QUOTA"]
    dept_metrics = departments.get_department_metrics(department_id=dept_id, metric_type=["GPU_ALLOCATION"],
                                                      start=end - timedelta(hours=1), end=end)
    assert checked(dept_metrics, "get", f"{d}/{{departmentId}}/metrics") == {
        "measurements": [{"type": "GPU_ALLOCATION", "labels": {}, "values": []}]}
    assert projects.delete_project(project_id=url_id).status_code == 204
    assert departments.delete_department(department_id=dept_id).status_code == 204
