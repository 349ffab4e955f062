"""Run:ai 2.18's node pools of a cluster (`/v1/k8s/clusters/{clusterId}/node-pools`): Run:ai's own bodies taken,
answers and codes as its documents give them, the same pools as `/api/v1/node-pools`, writes for platform admins,
reads for whoever sees the cluster, and bad input a 400 naming each field."""

import uuid

import pytest

from studio.models import NodePool
from tests.factories import UserFactory
from tests.runai_spec import assert_matches_spec, request_errors

pytestmark = pytest.mark.django_db

LIST = "/v1/k8s/clusters/{clusterId}/node-pools"
ONE = LIST + "/{id}"
LABELS = ONE + "/labels"


def test_pools_created_listed_updated_and_deleted_in_2_18s_shapes(client_for, org):
    api, member = client_for(org.users.platform_admin), client_for(org.users.member)
    url = LIST.format(clusterId=org.cluster.pk)
    body = {"name": "a100", "overProvisioningRatio": 2, "labelKey": "gpu-type", "labelValue": "a100",
            "placementStrategy": {"cpu": "spread", "gpu": "binpack"}}
    assert request_errors(body, "post", LIST) == []  # Run:ai's own NodePoolCreateRequest
    created = api.post(url, body, format="json")
    assert created.status_code == 201, created.content
    assert_matches_spec(created, "post", LIST)
    assert api.post(url, {"name": "a100"}, format="json").status_code == 409
    assert api.post(url, {"name": "h100"}, format="json").status_code == 201  # label: run.ai/node-pool=h100

    listed = member.get(url)  # a member sees its cluster's pools
    assert listed.status_code == 200 and listed["Cache-Control"] == "no-store"  # an API path: never cached
    assert_matches_spec(listed, "get", LIST)
    pools = {p["name"]: p for p in listed.json()}
    assert {n: (p["labelKey"], p["labelValue"], p["overProvisioningRatio"]) for n, p in pools.items()} == {
        "a100": ("gpu-type", "a100", 2), "h100": ("run.ai/node-pool", "h100", 1)}
    a100 = pools["a100"]
    assert (a100["clusterId"], a100["isDefault"], a100["createdBy"]) == (str(org.cluster.pk), False, "root")
    # the same pools as latest's API
    assert sorted(p["id"] for p in api.get("/api/v1/node-pools").json()["nodepools"]) == sorted(
        str(p["id"]) for p in pools.values())

    one = ONE.format(clusterId=org.cluster.pk, id=a100["id"])
    update = {"labelKey": "gpu-type", "labelValue": "a100-80g", "overProvisioningRatio": 3}
    assert request_errors(update, "put", ONE) == []
    updated = api.put(one, update, format="json")
    assert updated.status_code == 202, updated.content
    assert_matches_spec(updated, "put", ONE)
    labels = api.put(f"{one}/labels", {"labelKey": "accelerator", "labelValue": "a100"}, format="json")
    assert labels.status_code == 202, labels.content
    assert_matches_spec(labels, "put", LABELS)
    pool = NodePool.objects.get(pk=a100["id"])
    assert (pool.label_key, pool.label_value, pool.over_provisioning_ratio) == ("accelerator", "a100", 3)

    # a pool that holds a project's quota stays: 2.18's 400 for a refused deletion, naming the project
    org.a.node_pool_resources = [{"nodePool": {"id": str(pool.pk), "name": "a100"}, "gpu": {"deserved": 1}}]
    org.a.save()
    refused = api.delete(one)
    assert refused.status_code == 400
    assert refused.json()["errors"] == [{"field": "id", "message": "Node pool a100 holds quotas of project alpha: "
                                                                   "move them to another pool first."}]
    org.a.node_pool_resources = []
    org.a.save()
    deleted = api.delete(one)
    assert deleted.status_code == 202, deleted.content
    assert_matches_spec(deleted, "delete", ONE)
    assert [p["name"] for p in api.get(url).json()] == ["h100"]
    assert api.delete(one).status_code == 404


def test_who_may_call_and_bad_input(client_for, org):
    api, member = client_for(org.users.platform_admin), client_for(org.users.member)
    default = NodePool.objects.create(cluster=org.cluster, name="default", is_default=True)
    pool = NodePool.objects.create(cluster=org.cluster, name="a100", label_key="run.ai/node-pool", label_value="a100")
    url = LIST.format(clusterId=org.cluster.pk)
    one = ONE.format(clusterId=org.cluster.pk, id=pool.pk)
    assert member.post(url, {"name": "h100"}, format="json").status_code == 403
    assert member.put(f"{one}/labels", {"labelKey": "k", "labelValue": "v"}, format="json").status_code == 403
    assert member.delete(one).status_code == 403
    # a cluster the caller does not see, one that does not exist, an id that is not one: JSON 404s
    assert client_for(UserFactory(username="eve")).get(url).status_code == 404
    for missing in (LIST.format(clusterId=uuid.uuid4()), f"{url}/nope", ONE.format(clusterId=uuid.uuid4(),
                                                                                    id=pool.pk)):
        answer = api.put(missing, {"labelKey": "k", "labelValue": "v"}, format="json")
        assert answer.status_code in (404, 405) and answer["Content-Type"] == "application/json", missing
        assert answer.json()["code"] == answer.status_code

    bad = api.post(url, {"name": "A100!", "overProvisioningRatio": 9, "placementStrategy": {"gpu": "spread"},
                         "colour": "red"}, format="json")
    assert bad.status_code == 400
    assert {e["field"] for e in bad.json()["errors"]} == {"name", "overProvisioningRatio", "placementStrategy.gpu",
                                                          "colour"}
    bad = api.put(one, {"overProvisioningRatio": 2}, format="json")  # a PUT gives the whole label
    assert {e["field"] for e in bad.json()["errors"]} == {"labelKey", "labelValue"}
    bad = api.put(f"{one}/labels", {"labelKey": ""}, format="json")
    assert bad.status_code == 400 and {e["field"] for e in bad.json()["errors"]} == {"labelKey", "labelValue"}
    default_url = ONE.format(clusterId=org.cluster.pk, id=default.pk)
    assert api.put(f"{default_url}/labels", {"labelKey": "k", "labelValue": "v"}, format="json").status_code == 400
    assert api.delete(default_url).status_code == 400
    assert NodePool.objects.filter(pk=default.pk).exists()
