"""A department's admins change its projects through the API as on the portal's pages (issue 36, point 5): create,
update, set per-pool quotas and delete the projects of their department — bounded by the department's share —
and nothing of another department; the department's own quota stays with platform admins."""

import pytest

from studio.models import AccessRule, NodePool, Project, Role
from tests.factories import DepartmentFactory, ProjectFactory, UserFactory, seed_node_pools

pytestmark = pytest.mark.django_db
PROJECTS = "/api/v1/org-unit/projects"


@pytest.fixture
def head(org):
    """Erin, Department administrator of research (alpha's and beta's department), and nothing else."""
    erin = UserFactory(username="erin")
    AccessRule.objects.create(subject_type="user", subject_id="erin", user=erin, scope_type="department",
                              role=Role.objects.get(name="Department administrator"),
                              scope_id=str(org.department.pk), department=org.department)
    return erin


@pytest.fixture
def default_pool(org):
    seed_node_pools(org.cluster)
    return NodePool.objects.get(cluster=org.cluster, name="default")


def _quota(pool, deserved, limit=None) -> list[dict]:
    return [{"nodePool": {"id": str(pool.pk), "name": pool.name}, "gpu": {"deserved": deserved, "limit": limit}}]


def test_a_department_admin_manages_the_projects_of_their_department(client_for, org, head, default_pool):
    org.department.node_pool_resources = _quota(default_pool, 6)
    org.department.save()
    api = client_for(head)
    created = api.post(PROJECTS, {"name": "gamma", "parentId": str(org.department.pk), "clusterId": str(org.cluster.pk),
                                  "resources": _quota(default_pool, 2, 4)}, format="json")
    assert created.status_code == 201, created.json()
    gamma = created.json()["id"]
    assert api.patch(f"{PROJECTS}/{gamma}", {"description": "vision"}, format="json").status_code == 200
    answer = api.put(f"{PROJECTS}/{gamma}/resources", _quota(default_pool, 3, 4), format="json")
    assert answer.status_code == 200, answer.json()
    assert client_for(org.users.platform_admin).get(f"{PROJECTS}/{gamma}").json()["resources"][0]["gpu"]["deserved"] == 3
    # bounded by the department's share: research deserves 6 in default, 3 now go to gamma
    past = api.patch(f"{PROJECTS}/{org.a.pk}/resources", _quota(default_pool, 4), format="json")
    assert past.status_code == 400 and "research" in past.json()["details"], past.json()
    assert api.delete(f"{PROJECTS}/{gamma}").status_code == 204
    assert not Project.objects.filter(pk=gamma).exists()


def test_nothing_of_another_department_nor_the_departments_own_quota(client_for, org, head, default_pool):
    other = DepartmentFactory(name="finance")
    ledger = ProjectFactory(name="ledger", department=other, cluster=org.cluster)
    api = client_for(head)
    refused = api.post(PROJECTS, {"name": "sneaky", "parentId": str(other.pk), "clusterId": str(org.cluster.pk)},
                       format="json")
    assert refused.status_code == 403 and "finance" in refused.json()["message"]
    assert api.patch(f"{PROJECTS}/{ledger.pk}", {"description": "x"}, format="json").status_code == 404
    assert api.put(f"{PROJECTS}/{ledger.pk}/resources", _quota(default_pool, 1), format="json").status_code == 404
    moved = api.patch(f"{PROJECTS}/{org.a.pk}", {"parentId": str(other.pk)}, format="json")
    assert moved.status_code == 403, moved.json()
    assert Project.objects.get(pk=org.a.pk).department_id == org.department.pk
    own = api.put(f"/api/v1/org-unit/departments/{org.department.pk}/resources", _quota(default_pool, 99),
                  format="json")
    assert own.status_code == 403


@pytest.mark.parametrize("role", ["Department viewer", "L1 researcher"])
def test_lower_department_roles_and_project_members_only_read(client_for, org, default_pool, role):
    viewer = UserFactory(username="vic")
    AccessRule.objects.create(subject_type="user", subject_id="vic", user=viewer, scope_type="department",
                              role=Role.objects.get(name=role), scope_id=str(org.department.pk),
                              department=org.department)
    for caller in (viewer, org.users.member, org.users.admin):
        api = client_for(caller)
        assert api.get(f"{PROJECTS}/{org.a.pk}").status_code == 200
        assert api.patch(f"{PROJECTS}/{org.a.pk}", {"description": "x"}, format="json").status_code == 403
        assert api.put(f"{PROJECTS}/{org.a.pk}/resources", _quota(default_pool, 1), format="json").status_code == 403
        assert api.post(PROJECTS, {"name": "nope", "parentId": str(org.department.pk),
                                   "clusterId": str(org.cluster.pk)}, format="json").status_code == 403
