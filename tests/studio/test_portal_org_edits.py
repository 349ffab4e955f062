"""The portal edits what the API edits (issue 36): per-node-pool quotas of projects and departments, node pools,
and Run:ai's roles at project and department scope, each checked through the API or the page a role may open."""

import pytest

from studio.models import AccessRule, NodePool, Role
from tests.factories import DepartmentFactory, ProjectFactory, UserFactory, seed_node_pools

pytestmark = pytest.mark.django_db


@pytest.fixture
def pools(org):
    seed_node_pools(org.cluster)
    return {p.name: p for p in NodePool.objects.filter(cluster=org.cluster)}


def field(pools, pool, kind, part):
    return f"pool_{pools[pool].pk}_{kind}_{part}"


def grant(user, role, department):
    return AccessRule.objects.create(subject_type="user", subject_id=user.username, user=user,
                                     role=Role.objects.get(name=role), scope_type="department",
                                     scope_id=str(department.pk), department=department)


def test_project_quota_form_writes_the_apis_resources(client, client_for, org, pools):
    client.force_login(org.users.platform_admin)
    url = f"/org/projects/{org.a.pk}/edit"
    page = client.get(url).content.decode()
    assert f'name="{field(pools, "my-node-pool-a", "gpu", "deserved")}"' in page
    assert 'name="gpu_deserved"' not in page and 'name="gpu_limit"' not in page  # no total the scheduler ignores
    saved = client.post(url, {"action": "quotas",
                              field(pools, "default", "gpu", "deserved"): "2", field(pools, "default", "gpu", "limit"): "4",
                              field(pools, "default", "gpu", "overQuotaWeight"): "3",
                              field(pools, "default", "cpu", "deserved"): "1.5",
                              field(pools, "default", "memory", "deserved"): "16",
                              field(pools, "default", "memory", "units"): "GB",
                              field(pools, "my-node-pool-a", "gpu", "deserved"): "1"})
    assert saved.status_code == 302
    answer = client_for(org.users.platform_admin).get(f"/api/v1/org-unit/projects/{org.a.pk}").json()
    assert answer["resources"] == [
        {"nodePool": {"id": str(pools["default"].pk), "name": "default"},
         "gpu": {"deserved": 2, "limit": 4, "overQuotaWeight": 3},
         "cpu": {"deserved": 1500, "limit": None, "overQuotaWeight": None},
         "memory": {"deserved": 16, "limit": None, "overQuotaWeight": None, "units": "GB"}},
        {"nodePool": {"id": str(pools["my-node-pool-a"].pk), "name": "my-node-pool-a"},
         "gpu": {"deserved": 1, "limit": None, "overQuotaWeight": None}}]
    assert answer["totalResources"]["gpuQuota"] == 3
    again = client.get(url).content.decode()  # the stored values come back into the form (CPU in cores)
    assert f'name="{field(pools, "default", "cpu", "deserved")}" value="1.5"' in again


def test_a_project_past_its_departments_share_is_an_error_on_its_pool(client, org, pools):
    org.department.node_pool_resources = [{"nodePool": {"id": str(pools["default"].pk), "name": "default"},
                                           "gpu": {"deserved": 4}}]
    org.department.save()
    org.b.node_pool_resources = [{"nodePool": {"id": str(pools["default"].pk), "name": "default"},
                                  "gpu": {"deserved": 3}}]
    org.b.save()
    client.force_login(org.users.platform_admin)
    url = f"/org/projects/{org.a.pk}/edit"
    page = client.get(url).content.decode()
    assert 'data-left="1"' in page and "1 left" in page  # 4 deserved by research, 3 given to beta
    refused = client.post(url, {"action": "quotas", field(pools, "default", "gpu", "deserved"): "2"})
    assert refused.status_code == 200
    html = refused.content.decode()
    assert f'id="id_{field(pools, "default", "gpu", "deserved")}-error"' in html
    assert "Department research deserves 4 GPUs in node pool default" in html
    limit = client.post(url, {"action": "quotas", field(pools, "default", "gpu", "deserved"): "1",
                              field(pools, "default", "gpu", "limit"): "0.5"}).content.decode()
    assert f'id="id_{field(pools, "default", "gpu", "limit")}-error"' in limit and "Must be at least deserved" in limit


def test_department_quota_form_and_its_projects_floor(client, client_for, org, pools):
    org.department.cluster = org.cluster
    org.department.save()
    org.a.node_pool_resources = [{"nodePool": {"id": str(pools["default"].pk), "name": "default"},
                                  "gpu": {"deserved": 3}}]
    org.a.save()
    client.force_login(org.users.platform_admin)
    url = f"/org/departments/{org.department.pk}/edit"
    assert 'data-given="3' in client.get(url).content.decode()
    low = client.post(url, {"action": "quotas", field(pools, "default", "gpu", "deserved"): "2"}).content.decode()
    assert "Department research&#x27;s projects deserve 3 GPUs in node pool default: lower theirs first." in low
    ok = client.post(url, {"action": "quotas", field(pools, "default", "gpu", "deserved"): "6",
                           field(pools, "default", "memory", "deserved"): "512",
                           field(pools, "default", "memory", "units"): "Mib"})
    assert ok.status_code == 302
    answer = client_for(org.users.platform_admin).get(f"/api/v1/org-unit/departments/{org.department.pk}").json()
    assert answer["resources"] == [{"nodePool": {"id": str(pools["default"].pk), "name": "default"},
                                    "gpu": {"deserved": 6, "limit": None, "overQuotaWeight": None},
                                    "memory": {"deserved": 512, "limit": None, "overQuotaWeight": None,
                                               "units": "Mib"}}]


def test_node_pools_created_edited_and_a_refused_deletion_names_the_holders(client, client_for, org, pools):
    client.force_login(org.users.platform_admin)
    url = f"/org/clusters/{org.cluster.pk}/node-pools"
    created = client.post(url, {"name": "a100", "label_key": "gpu-type", "label_value": "a100",
                                "gpu_network_acceleration_detection": "Use", "over_provisioning_ratio": 2})
    assert created.status_code == 302
    pool = NodePool.objects.get(cluster=org.cluster, name="a100")
    api = client_for(org.users.platform_admin)
    answer = api.get(f"/api/v1/node-pools/{pool.pk}").json()
    assert (answer["labelKey"], answer["labelValue"], answer["gpuNetworkAccelerationDetection"],
            answer["overProvisioningRatio"]) == ("gpu-type", "a100", "Use", 2)
    taken = client.post(url, {"name": "a100", "label_key": "k", "label_value": "v",
                              "gpu_network_acceleration_detection": "Auto", "over_provisioning_ratio": 1})
    assert taken.status_code == 200 and b"has a node pool &#x27;a100&#x27; already" in taken.content
    edit = f"/org/clusters/{org.cluster.pk}/node-pools/{pool.pk}/edit"
    assert client.post(edit, {"label_key": "nvidia.com/gpu.product", "label_value": "A100",
                              "gpu_network_acceleration_detection": "DontUse",
                              "over_provisioning_ratio": 9}).status_code == 200  # 1 to 5
    assert client.post(edit, {"label_key": "nvidia.com/gpu.product", "label_value": "A100",
                              "gpu_network_acceleration_detection": "DontUse",
                              "over_provisioning_ratio": 1}).status_code == 302
    answer = api.get(f"/api/v1/node-pools/{pool.pk}").json()
    assert (answer["labelKey"], answer["labelValue"], answer["gpuNetworkAccelerationDetection"]) == (
        "nvidia.com/gpu.product", "A100", "DontUse")

    org.a.node_pool_resources = [{"nodePool": {"id": str(pool.pk), "name": "a100"}, "gpu": {"deserved": 1}}]
    org.a.save()
    org.department.node_pool_resources = [{"nodePool": {"id": str(pool.pk), "name": "a100"}, "gpu": {"deserved": 2}}]
    org.department.save()
    refused = client.post(f"/org/clusters/{org.cluster.pk}/node-pools/{pool.pk}/delete", follow=True)
    html = refused.content.decode()
    assert "Node pool a100 holds quotas of project alpha and department research" in html
    assert api.delete(f"/api/v1/node-pools/{pool.pk}").status_code == 409  # as the API answers
    org.a.node_pool_resources, org.department.node_pool_resources = [], []
    org.a.save()
    org.department.save()
    client.post(f"/org/clusters/{org.cluster.pk}/node-pools/{pool.pk}/delete")
    assert api.get(f"/api/v1/node-pools/{pool.pk}").status_code == 404
    client.force_login(org.users.admin)  # a project admin: no node pools
    assert client.get(url).status_code == 403


def test_members_and_department_access_offer_every_runai_role(client, org):
    client.force_login(org.users.platform_admin)
    members = client.get(f"/org/projects/{org.a.pk}/members").content.decode()
    assert members.count("<option value=") >= Role.objects.count() == 14
    assert client.post(f"/org/projects/{org.a.pk}/members", {"username": "dave", "role": "L2 researcher"}
                       ).status_code == 302
    assert AccessRule.objects.get(project=org.a, user=org.users.other).role.name == "L2 researcher"
    erin = UserFactory(username="erin")
    access = f"/org/departments/{org.department.pk}/access"
    assert client.post(access, {"username": "erin", "role": "Department administrator"}).status_code == 302
    assert client.post(access, {"username": "erin", "role": "Department viewer"}).status_code == 302  # replaces
    rules = AccessRule.objects.filter(department=org.department, user=erin)
    assert [r.role.name for r in rules] == ["Department viewer"]
    assert "Department viewer" in client.get(access).content.decode()
    client.post(f"{access}/{erin.pk}/remove")
    assert not AccessRule.objects.filter(department=org.department, user=erin).exists()


@pytest.fixture
def two_departments(org, pools):
    ops = DepartmentFactory(name="ops")
    gamma = ProjectFactory(name="gamma", department=ops, cluster=org.cluster)
    head, reader = UserFactory(username="heidi"), UserFactory(username="victor")
    grant(head, "Department administrator", org.department)
    grant(reader, "Department viewer", org.department)
    return ops, gamma, head, reader


def test_a_department_admin_edits_the_projects_of_their_department_only(client, org, pools, two_departments):
    ops, gamma, head, _ = two_departments
    client.force_login(head)
    listing = client.get("/org/projects").content.decode()
    assert "<strong>alpha</strong>" in listing and "<strong>beta</strong>" in listing
    assert "<strong>gamma</strong>" not in listing
    assert client.get(f"/org/projects/{gamma.pk}/edit").status_code == 404
    assert client.post(f"/org/projects/{gamma.pk}/delete").status_code == 404
    saved = client.post(f"/org/projects/{org.a.pk}/edit", {"action": "quotas",
                                                           field(pools, "default", "gpu", "deserved"): "1"})
    assert saved.status_code == 302
    org.a.refresh_from_db()
    assert org.a.node_pool_resources[0]["gpu"]["deserved"] == 1
    created = client.post("/org/projects", {"name": "delta", "department": org.department.pk,
                                            "cluster": org.cluster.pk})
    assert created.status_code == 302 and created["Location"].endswith("/edit")
    elsewhere = client.post("/org/projects", {"name": "omega", "department": ops.pk, "cluster": org.cluster.pk})
    assert elsewhere.status_code == 200 and b"id_department-error" in elsewhere.content
    # the department itself: read, not changed (its share is the platform admins' to give)
    assert client.get(f"/org/departments/{org.department.pk}/edit").status_code == 200
    assert client.post(f"/org/departments/{org.department.pk}/edit", {"action": "quotas"}).status_code == 403
    assert client.get(f"/org/departments/{ops.pk}/edit").status_code == 404
    assert client.get("/org/clusters").status_code == 403
    assert client.post(f"/org/departments/{org.department.pk}/access",
                       {"username": "dave", "role": "Editor"}).status_code == 302


def test_a_department_viewer_reads_and_a_project_role_may_not_open_the_org_pages(client, org, pools, two_departments):
    _, gamma, _, reader = two_departments
    client.force_login(reader)
    assert b"<strong>alpha</strong>" in client.get("/org/projects").content
    page = client.get(f"/org/projects/{org.a.pk}/edit").content.decode()
    assert "Save quotas" not in page and " disabled" in page
    assert client.post(f"/org/projects/{org.a.pk}/edit", {"action": "quotas"}).status_code == 403
    assert client.post(f"/org/projects/{org.a.pk}/delete").status_code == 403
    assert client.post("/org/projects", {"name": "x", "department": org.department.pk,
                                         "cluster": org.cluster.pk}).status_code == 403
    assert client.get(f"/org/projects/{gamma.pk}/edit").status_code == 404
    assert client.get(f"/org/departments/{org.department.pk}/access").status_code == 200
    assert client.post(f"/org/departments/{org.department.pk}/access",
                       {"username": "dave", "role": "Editor"}).status_code == 403
    client.force_login(org.users.admin)  # Editor of project alpha only
    assert client.get("/org/projects").status_code == 403
    assert client.get(f"/org/projects/{org.a.pk}/edit").status_code == 403
    assert client.get(f"/org/departments/{org.department.pk}/access").status_code == 403
