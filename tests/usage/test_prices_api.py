"""Chargeback prices per node pool (PaaS Studio's own API): set, read, list, clear — platform admins only."""

import pytest

from studio.models import AuditEvent, NodePool
from tests.conftest import bearer_client

pytestmark = pytest.mark.django_db
PRICES = "/api/v1/chargeback/prices"


@pytest.fixture
def pool(org):
    return NodePool.objects.create(cluster=org.cluster, name="h100", label_key="run.ai/node-pool", label_value="h100")


def test_a_platform_admin_sets_reads_and_clears_a_pools_prices(org, pool):
    admin = bearer_client(org.users.platform_admin)
    assert admin.get(f"{PRICES}/{pool.pk}").status_code == 404
    put = admin.put(f"{PRICES}/{pool.pk}", {"gpuHour": 3.5, "memoryGibHour": "0.02"}, format="json")
    assert put.status_code == 200, put.content
    assert put.json() | {"updatedAt": None} == {
        "nodepoolId": str(pool.pk), "nodepoolName": "h100", "clusterId": str(org.cluster.pk), "gpuHour": 3.5,
        "cpuCoreHour": 0.0, "memoryGibHour": 0.02, "currency": "USD", "updatedAt": None, "updatedBy": "root"}
    assert admin.put(f"{PRICES}/{pool.pk}", {"gpuHour": 4}, format="json").json()["gpuHour"] == 4.0
    assert [p["gpuHour"] for p in admin.get(PRICES).json()["prices"]] == [4.0]
    assert AuditEvent.objects.filter(object_type="usage.nodepoolprice").count() == 2
    assert admin.delete(f"{PRICES}/{pool.pk}").status_code == 204
    assert admin.get(PRICES).json() == {"prices": []}


def test_bad_prices_are_400s_naming_each(org, pool):
    admin = bearer_client(org.users.platform_admin)
    response = admin.put(f"{PRICES}/{pool.pk}", {"gpuHour": -1, "cpuCoreHour": "NaN", "memoryGibHour": "x",
                                                 "euros": 2}, format="json")
    assert response.status_code == 400
    assert {e["field"] for e in response.json()["errors"]} == {"gpuHour", "cpuCoreHour", "memoryGibHour", "euros"}
    assert admin.put(f"{PRICES}/999999999999999999999", {"gpuHour": 1}, format="json").status_code == 404


def test_others_may_not(org, pool):
    for user in (org.users.admin, org.users.member):
        client = bearer_client(user)
        assert client.get(PRICES).status_code == 403
        assert client.put(f"{PRICES}/{pool.pk}", {"gpuHour": 1}, format="json").status_code == 403
