"""Storage classes read from the simulated cluster (its default class `standard`, and one an operator adds with
the official client), in 2.18's and latest's shapes; latest's storage class configuration stored, merged into
`/api/v2/storage-classes`, written by platform admins only; bad input a 400 naming each problem; a cluster the
caller does not see a 404."""

import pytest
from kubernetes import client

from tests.conftest import bearer_client
from tests.factories import UserFactory
from tests.runai_spec import assert_matches_spec

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def fast(sim_org):
    """An extra class on the cluster, removed afterwards (the session's cluster is shared)."""
    storage = client.StorageV1Api(sim_org.k8s)
    name = f"fast-{sim_org.project.name}"
    storage.create_storage_class({"metadata": {"name": name}, "provisioner": "csi.example.com",
                                  "allowVolumeExpansion": True})
    yield name
    storage.delete_storage_class(name)


def test_a_clusters_storage_classes_are_read_from_it_in_both_shapes(sim_org, fast):
    api, cluster = sim_org.api, str(sim_org.cluster.pk)
    old = api.get(f"/v1/k8s/clusters/{cluster}/storage-classes")
    assert old.status_code == 200, old.json()
    assert_matches_spec(old, "get", "/v1/k8s/clusters/{uuid}/storage-classes", ("2.18",))
    assert {"storage_class_name": "standard", "is_default": True} in old.json()
    assert {"storage_class_name": fast, "is_default": False} in old.json()
    latest = api.get(f"/v1/k8s/clusters/{cluster}/storage-classes", {"includeNone": "true"})
    assert_matches_spec(latest, "get", "/v1/k8s/clusters/{uuid}/storage-classes", ("latest",))
    assert {"standard", fast, "runai-none"} <= set(latest.json()["storageClasses"])

    v1 = api.get("/api/v1/storage-classes", {"clusterId": cluster, "name": fast})
    assert_matches_spec(v1, "get", "/api/v1/storage-classes", ("latest",))
    assert v1.json() == {"items": [{"cluster_id": cluster, "storage_class_name": fast, "Spec": {
        "provisioner": "csi.example.com", "allow_volume_expansion": True, "is_default": False}}]}
    v2 = api.get("/api/v2/storage-classes", {"clusterId": cluster, "name": "standard"})
    assert_matches_spec(v2, "get", "/api/v2/storage-classes", ("latest",))
    assert v2.json()["items"] == [{"clusterId": cluster, "storageClassName": "standard", "spec": {
        "provisioner": "rancher.io/local-path", "allowVolumeExpansion": False, "isDefault": True}}]


def test_storage_classes_need_a_cluster_the_caller_sees(sim_org):
    api = sim_org.api
    missing = api.get("/api/v1/storage-classes", {"includeNone": "maybe"})
    assert missing.status_code == 400
    assert {e["field"] for e in missing.json()["errors"]} == {"clusterId", "includeNone"}
    stranger = bearer_client(UserFactory(username=f"stranger-{sim_org.project.name}"))
    for url in (f"/v1/k8s/clusters/{sim_org.cluster.pk}/storage-classes",
                f"/api/v2/storage-classes?clusterId={sim_org.cluster.pk}"):
        assert stranger.get(url).status_code == 404
    assert api.get("/v1/k8s/clusters/not-a-uuid/storage-classes").status_code == 404


def test_a_storage_class_configuration_is_stored_and_answered_with_its_class(sim_org):
    root = bearer_client(UserFactory(username=f"root-{sim_org.project.name}", platform_admin=True))
    cluster, base = str(sim_org.cluster.pk), "/api/v1/storage-class-configuration"
    body = {"scopeType": "cluster", "scopeId": cluster, "name": "standard",
            "permissions": {"allowedForWorkloads": True, "allowDataSharing": False},
            "customization": {"accessMode": {"default": {"readWriteOnce": True}},
                              "claimSize": {"default": "10Gi", "min": "1Gi", "supportedUnits": ["GiB"]}}}
    assert sim_org.api.post(base, body, format="json").status_code == 403  # a project's member
    made = root.post(base, body, format="json")
    assert made.status_code == 201, made.json()
    assert_matches_spec(made, "post", base, ("latest",))
    config = made.json()
    assert (config["scopeId"], config["name"], config["permissions"]["allowDataSharing"]) == (cluster, "standard",
                                                                                             False)
    assert root.post(base, body, format="json").status_code == 409

    listed = sim_org.api.get(base)  # read by those who see the cluster
    assert_matches_spec(listed, "get", base, ("latest",))
    assert [c["id"] for c in listed.json()["storageClassConfigurations"]] == [config["id"]]
    item = f"{base}/{config['id']}"
    assert_matches_spec(sim_org.api.get(item), "get", f"{base}/{{id}}", ("latest",))
    v2 = sim_org.api.get("/api/v2/storage-classes", {"clusterId": cluster, "name": "standard"}).json()["items"][0]
    assert v2["permissions"] == body["permissions"] and v2["customization"]["claimSize"]["default"] == "10Gi"

    patched = root.patch(item, {"permissions": {"allowDataSharing": True}}, format="json")
    assert patched.status_code == 200
    assert_matches_spec(patched, "patch", f"{base}/{{id}}", ("latest",))
    assert patched.json()["permissions"] == {"allowedForWorkloads": True, "allowDataSharing": True}
    replaced = root.put(item, {"permissions": {"allowedForAssets": False}}, format="json")
    assert_matches_spec(replaced, "put", f"{base}/{{id}}", ("latest",))
    assert replaced.json()["permissions"] == {"allowedForAssets": False} and "customization" not in replaced.json()
    assert sim_org.api.delete(item).status_code == 403
    assert root.delete(item).status_code == 204
    assert root.get(item).status_code == 404


def test_every_problem_of_a_configuration_is_named_in_one_400(sim_org):
    root = bearer_client(UserFactory(username=f"root-{sim_org.project.name}", platform_admin=True))
    bad = root.post("/api/v1/storage-class-configuration", {
        "scopeType": "project", "scopeId": "nope", "permissions": {"allowedForAssets": "yes", "colour": True},
        "customization": {"volumeMode": {"default": "Tape"}, "claimSize": {"min": "ten", "supportedUnits": ["PB"]},
                          "attributes": [{"key": "-bad-"}]}}, format="json")
    assert bad.status_code == 400
    assert {e["field"] for e in bad.json()["errors"]} == {
        "scopeType", "scopeId", "name", "permissions.allowedForAssets", "permissions.colour",
        "customization.volumeMode.default", "customization.claimSize.min", "customization.claimSize.supportedUnits",
        "customization.attributes[0].key"}
