"""Counts on pages agree with their nouns: "1 GPU", "1 project", "1 department" — never "1 GPUs"."""

import pytest

from studio.models import NodePool
from tests.factories import seed_node_pools

pytestmark = pytest.mark.django_db


@pytest.fixture
def pools(org):
    seed_node_pools(org.cluster)
    return {p.name: p for p in NodePool.objects.filter(cluster=org.cluster)}


def entry(pool, deserved):
    return [{"nodePool": {"id": str(pool.pk), "name": pool.name}, "gpu": {"deserved": deserved}}]


def test_quota_forms_say_one_gpu(client, org, pools):
    org.department.node_pool_resources = entry(pools["default"], 1)
    org.department.save()
    org.b.node_pool_resources = entry(pools["default"], 1)
    org.b.save()
    client.force_login(org.users.platform_admin)
    project = client.get(f"/org/projects/{org.a.pk}/edit").content.decode()
    assert "Department research deserves 1 GPU here" in project
    department = client.get(f"/org/departments/{org.department.pk}/edit").content.decode()
    assert 'data-given="1">1</strong> GPU here.' in department  # the default pool; 0 GPUs in the others
    # a department lowered under what its one project deserves is told so in the singular
    field = f"pool_{pools['default'].pk}_gpu_deserved"
    refused = client.post(f"/org/departments/{org.department.pk}/edit", {"action": "quotas", field: "0.5"})
    assert "projects deserve 1 GPU in node pool default" in refused.content.decode().replace("&#x27;", "'")


def test_a_refused_node_pool_deletion_names_one_project_and_one_department(client, org, pools):
    pool = pools["my-node-pool-a"]
    org.a.node_pool_resources = entry(pool, 1)
    org.a.save()
    org.department.node_pool_resources = entry(pool, 2)
    org.department.save()
    client.force_login(org.users.platform_admin)
    refused = client.post(f"/org/clusters/{org.cluster.pk}/node-pools/{pool.pk}/delete", follow=True)
    assert f"Node pool {pool.name} holds quotas of project alpha and department research" in refused.content.decode()
