"""A department's deserved GPUs in a node pool bound what its projects deserve there (Run:ai): a project's quota
that would take them past it, or a department's that would fall below them, is a 400 naming the department and
the pool — through the org-unit API, its `/resources` routes, and the portal's forms alike (one service)."""

import pytest

from studio.models import Cluster, NodePool

pytestmark = pytest.mark.django_db

PROJECTS, DEPARTMENTS = "/api/v1/org-unit/projects", "/api/v1/org-unit/departments"


@pytest.fixture
def pool(org):
    org.cluster.status = Cluster.Status.CONNECTED
    org.cluster.save()
    NodePool.objects.create(cluster=org.cluster, name="default", is_default=True)
    return NodePool.objects.create(cluster=org.cluster, name="pool-a", label_key="run.ai/node-pool",
                                   label_value="pool-a")


def share(pool, deserved, limit=-1):
    return [{"nodePool": {"id": str(pool.pk), "name": pool.name}, "gpu": {"deserved": deserved, "limit": limit}}]


def errors(response) -> dict:
    return {e["field"]: e["message"] for e in response.json()["errors"]}


def test_projects_may_not_deserve_more_than_their_department_in_a_pool(client_for, org, pool):
    api = client_for(org.users.platform_admin)
    assert api.put(f"{DEPARTMENTS}/{org.department.pk}/resources", share(pool, 12), format="json").status_code == 200
    assert api.put(f"{PROJECTS}/{org.a.pk}/resources", share(pool, 7), format="json").status_code == 200
    over = api.put(f"{PROJECTS}/{org.b.pk}/resources", share(pool, 6), format="json")
    assert over.status_code == 400
    assert errors(over) == {"resources[0].gpu.deserved": (
        "Department research deserves 12 GPUs in node pool pool-a; its projects would deserve 13 (7 given to its "
        "other projects).")}
    assert api.put(f"{PROJECTS}/{org.b.pk}/resources", share(pool, 5), format="json").status_code == 200
    # a new project is held to the same share, and an unlimited one (-1) takes none of it
    body = {"name": "gamma", "clusterId": str(org.cluster.pk), "parentId": str(org.department.pk)}
    new = api.post(PROJECTS, {**body, "resources": share(pool, 1)}, format="json")
    assert new.status_code == 400 and "resources[0].gpu.deserved" in errors(new)
    assert api.post(PROJECTS, {**body, "resources": share(pool, -1)}, format="json").status_code in (200, 201, 202)


def test_a_department_may_not_fall_below_what_its_projects_deserve(client_for, org, pool):
    api = client_for(org.users.platform_admin)
    assert api.put(f"{PROJECTS}/{org.a.pk}/resources", share(pool, 4), format="json").status_code == 200
    assert api.put(f"{PROJECTS}/{org.b.pk}/resources", share(pool, 4), format="json").status_code == 200
    low = api.put(f"{DEPARTMENTS}/{org.department.pk}/resources", share(pool, 7), format="json")
    assert low.status_code == 400
    assert errors(low) == {"resources[0].gpu.deserved": (
        "Department research's projects deserve 8 GPUs in node pool pool-a: lower theirs first.")}
    assert api.put(f"{DEPARTMENTS}/{org.department.pk}/resources", share(pool, 8), format="json").status_code == 200
