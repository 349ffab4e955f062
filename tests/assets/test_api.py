"""Every asset kind through its Run:ai operations: create, read, list (alone and in its family's list), update and
delete, each answer checked against Run:ai's 2.18 and latest schemas; every bad input a 400 naming each problem;
a taken name a 409; an asset in use a 409 naming what uses it, and its usage answered."""

import pytest

from assets.models import AssetUse
from assets.services import asset_use_record
from tests.assets.bodies import KIND_OF, SPECS, body
from tests.runai_spec import assert_matches_spec, operation

pytestmark = pytest.mark.django_db
FAMILY = {"datasource": "/api/v1/asset/datasource", "credentials": "/api/v1/asset/credentials"}
NO_CONTENT = {"credentials/generic-secret", "credentials/ngc-api-key"}
# Kinds only latest knows: the combined lists that hold them are latest's shape (2.18's kind enum lacks them).
LATEST_ONLY = {"credentials/ngc-api-key", "datasource/secrets"}


def matches(response, method, path, versions=("2.18", "latest")):
    assert operation("2.18", method, path) or operation("latest", method, path)
    assert_matches_spec(response, method, path, versions)
    return response.json() if response.content else None


@pytest.mark.parametrize("path", list(SPECS))
def test_each_kind_is_created_read_listed_updated_and_deleted(path, make_asset, client_for, org):
    api = client_for(org.users.admin)
    base, item = f"/api/v1/asset/{path}", f"/api/v1/asset/{path}/{{AssetId}}"
    created = make_asset(path, "first", description="The first one.")
    asset_id = created["meta"]["id"]
    assert created["meta"]["kind"] == KIND_OF[path] and created["meta"]["projectId"] == org.a.pk
    assert created["meta"]["departmentId"] == str(org.department.pk) and created["meta"]["clusterId"] == str(org.cluster.pk)
    got = matches(api.get(f"{base}/{asset_id}"), "get", item)
    assert got["meta"] == created["meta"] and got["spec"] == created["spec"]

    listed = matches(api.get(base), "get", base)
    assert [e["meta"]["id"] for e in listed["entries"]] == [asset_id]
    family = path.split("/")[0]
    if family in FAMILY:
        combined = matches(api.get(FAMILY[family]), "get", FAMILY[family],
                           ("latest",) if path in LATEST_ONLY else ("2.18", "latest"))
        entry = next(e for e in combined["entries"] if e["meta"]["id"] == asset_id)
        assert list(entry["spec"].values()) == [created["spec"]]  # under its kind's key

    update = {"meta": {"name": "renamed", "description": "Changed."}}
    if path in ("environment", "compute"):
        update["spec"] = {**SPECS[path], "command": "bash"} if path == "environment" else {**SPECS[path],
                                                                                            "gpuPortionRequest": 0.25}
    updated = api.put(f"{base}/{asset_id}", update, format="json")
    assert updated.status_code == 202, updated.json()
    updated = matches(updated, "put", item)
    assert (updated["meta"]["name"], updated["meta"]["description"], updated["meta"]["updateCount"]) == (
        "renamed", "Changed.", 1)
    if path == "environment":
        assert updated["spec"]["command"] == "bash"
    deleted = api.delete(f"{base}/{asset_id}")
    assert deleted.status_code == (204 if path in NO_CONTENT else 202)
    assert_matches_spec(deleted, "delete", item)
    assert api.get(f"{base}/{asset_id}").status_code == 404


def test_a_pvc_update_changes_only_its_path(make_asset, client_for, org):
    api = client_for(org.users.admin)
    pvc = make_asset("datasource/pvc", "data")
    url = f"/api/v1/asset/datasource/pvc/{pvc['meta']['id']}"
    # The answer echoed back with a new path is accepted; a new claim size is not.
    echoed = api.put(url, {"meta": pvc["meta"], "spec": {**pvc["spec"], "path": "/data2"}}, format="json")
    assert echoed.status_code == 202 and echoed.json()["spec"]["path"] == "/data2"
    changed = api.put(url, {"meta": {"name": "data", "scope": "tenant"},
                            "spec": {"claimInfo": {"size": "1Ti"}}}, format="json")
    assert changed.status_code == 400
    assert {e["field"] for e in changed.json()["errors"]} == {"meta.scope", "spec.claimInfo"}


def test_every_problem_of_a_body_is_named_in_one_400(client_for, org):
    api = client_for(org.users.admin)
    bad = api.post("/api/v1/asset/environment", {
        "meta": {"name": "Not A Name", "scope": "project", "projectId": 999999, "colour": "red"},
        "spec": {"imagePullPolicy": "Sometimes", "runAsUid": "1000", "probes": {"readiness": {"periodSeconds": 0}},
                 "connections": [{"internalToolInfo": {"toolType": "jupyter-notebook"}}], "gpu": 1}}, format="json")
    assert bad.status_code == 400
    assert bad.json()["code"] == 400
    assert {e["field"] for e in bad.json()["errors"]} == {
        "meta.name", "meta.projectId", "meta.colour", "spec.image", "spec.imagePullPolicy", "spec.runAsUid",
        "spec.probes.readiness.periodSeconds", "spec.connections[0].name",
        "spec.connections[0].internalToolInfo.connectionType", "spec.connections[0].internalToolInfo.containerPort",
        "spec.gpu"}


@pytest.mark.parametrize("spec,fields", [
    ({"gpuDevicesRequest": 2, "gpuRequestType": "memory", "gpuMemoryRequest": "10G"}, {"spec.gpuRequestType"}),
    ({"gpuPortionRequest": 1.5}, {"spec.gpuPortionRequest"}),
    ({"cpuCoreRequest": 2, "cpuCoreLimit": 1, "cpuMemoryRequest": "2Gi", "cpuMemoryLimit": "1Gi"},
     {"spec.cpuCoreLimit", "spec.cpuMemoryLimit"}),
    ({"cpuMemoryRequest": "1 Gi", "gpuMemoryRequest": "NaN", "cpuCoreRequest": -1},
     {"spec.cpuMemoryRequest", "spec.gpuMemoryRequest", "spec.cpuCoreRequest"}),
    ({"gpuRequestType": "migProfile"}, {"spec.migProfile"}),
])
def test_compute_rules_are_checked(spec, fields, client_for, org):
    response = client_for(org.users.admin).post("/api/v1/asset/compute", {
        "meta": {"name": "c", "scope": "project", "projectId": org.a.pk}, "spec": spec}, format="json")
    assert response.status_code == 400 and {e["field"] for e in response.json()["errors"]} == fields


@pytest.mark.parametrize("path,spec,fields", [
    ("datasource/pvc", {"path": "/d"}, {"spec.claimInfo.size"}),
    ("datasource/pvc", {"path": "/d", "existingPvc": True}, {"spec.claimName"}),
    ("datasource/nfs", {"server": "nfs"}, {"spec.path", "spec.mountPath"}),
    ("datasource/config-map", {"configMap": "Bad_Name", "mountPath": "/x", "defaultMode": "777"},
     {"spec.configMap", "spec.defaultMode"}),
    ("credentials/password", {"user": "bot"}, {"spec.password"}),
    ("credentials/access-key", {"existingSecretName": "s3-keys", "accessKeyId": "A"}, {"spec.existingSecretName"}),
    ("credentials/ngc-api-key", {"ngc_api_key": "has space"}, {"spec.ngc_api_key"}),
    ("datasource/s3", {"bucket": "b", "path": "/p", "accessKeyAssetId": "not-a-uuid"}, {"spec.accessKeyAssetId"}),
])
def test_data_source_and_credential_rules_are_checked(path, spec, fields, client_for, org):
    response = client_for(org.users.admin).post(f"/api/v1/asset/{path}", {
        "meta": {"name": "x", "scope": "project", "projectId": org.a.pk}, "spec": spec}, format="json")
    assert response.status_code == 400 and {e["field"] for e in response.json()["errors"]} == fields


def test_a_body_that_is_not_an_object_or_lacks_meta_is_a_400(client_for, org):
    api = client_for(org.users.admin)
    for sent in ([], {"spec": {}}, {"meta": "x", "spec": {}}):
        response = api.post("/api/v1/asset/compute", sent, format="json")
        assert response.status_code == 400 and response.json()["errors"], sent


def test_a_name_is_unique_per_kind_in_its_scope(make_asset, client_for, org):
    make_asset("compute", "small")
    again = client_for(org.users.admin).post("/api/v1/asset/compute", body("compute", "small", project=org.a),
                                             format="json")
    assert again.status_code == 409 and "small" in again.json()["message"]
    make_asset("environment", "small")  # another kind
    make_asset("compute", "small", user=org.users.platform_admin, project=org.b)  # another project


def test_an_asset_in_use_is_not_deleted_and_says_what_uses_it(make_asset, client_for, org):
    api = client_for(org.users.admin)
    key = make_asset("credentials/access-key", "s3-key")
    s3 = make_asset("datasource/s3", "bucket", **{})
    s3_url = f"/api/v1/asset/datasource/s3/{s3['meta']['id']}"
    changed = api.put(s3_url, {"meta": {"name": "bucket"}, "spec": {**SPECS["datasource/s3"],
                                                                     "accessKeyAssetId": key["meta"]["id"]}},
                      format="json")
    assert changed.status_code == 202, changed.json()
    key_url = f"/api/v1/asset/credentials/access-key/{key['meta']['id']}"
    refused = api.delete(key_url)
    assert refused.status_code == 409 and "bucket" in refused.json()["message"]
    used = matches(api.get(key_url + "?usageInfo=true"), "get", "/api/v1/asset/credentials/access-key/{AssetId}")
    assert used["usedBy"]["assets"]["datasources"] == [{"id": s3["meta"]["id"], "name": "bucket", "kind": "s3"}]

    # A workload made from the S3 source (later work records it) holds the source in turn.
    from assets.models import Asset

    asset_use_record(asset=Asset.objects.get(pk=s3["meta"]["id"]), consumer=AssetUse.Consumer.TRAINING,
                     consumer_id="8c5a8ac1-2d2b-4f5e-9a57-0f1f0e8a7d11", consumer_name="train-one")
    listed = matches(api.get("/api/v1/asset/datasource/s3?usageInfo=true"), "get", "/api/v1/asset/datasource/s3")
    assert listed["entries"][0]["usedBy"]["trainings"] == [
        {"id": "8c5a8ac1-2d2b-4f5e-9a57-0f1f0e8a7d11", "name": "train-one"}]
    refused = api.delete(s3_url)
    assert refused.status_code == 409 and "training train-one" in refused.json()["message"]
    AssetUse.objects.filter(consumer=AssetUse.Consumer.TRAINING).delete()
    assert api.delete(s3_url).status_code == 202
    assert api.delete(key_url).status_code == 202  # its user went with it


def test_a_reference_must_be_a_credential_the_caller_sees_in_scope(make_asset, client_for, org):
    beta_key = make_asset("credentials/access-key", "beta-key", user=org.users.platform_admin, project=org.b)
    env = make_asset("environment", "not-a-key")
    api = client_for(org.users.admin)
    for ref in (beta_key["meta"]["id"], env["meta"]["id"], "0b3c2f36-9d43-4a0e-b1b2-5a3c7a1f2e11"):
        response = api.post("/api/v1/asset/datasource/s3", {
            "meta": {"name": "b", "scope": "project", "projectId": org.a.pk},
            "spec": {**SPECS["datasource/s3"], "accessKeyAssetId": ref}}, format="json")
        assert response.status_code == 400, ref
        assert [e["field"] for e in response.json()["errors"]] == ["spec.accessKeyAssetId"]
    # The platform admin sees beta's key, but a data source of alpha may not read another project's credential.
    root = client_for(org.users.platform_admin).post("/api/v1/asset/datasource/s3", {
        "meta": {"name": "b", "scope": "project", "projectId": org.a.pk},
        "spec": {**SPECS["datasource/s3"], "accessKeyAssetId": beta_key["meta"]["id"]}}, format="json")
    assert root.status_code == 400 and "scope" in root.json()["errors"][0]["message"]


def test_compliance_says_whether_a_project_may_use_an_asset_for_a_workload_type(make_asset, client_for, org):
    inference_only = make_asset("compute", "serving", user=org.users.platform_admin, scope="tenant",
                                workloadSupportedTypes={"inference": True, "training": False})
    api = client_for(org.users.admin)
    url = f"/api/v1/asset/compute/{inference_only['meta']['id']}"
    training = matches(api.get(f"{url}?complyToProject={org.a.pk}&complyToWorkloadType=Training"), "get",
                       "/api/v1/asset/compute/{AssetId}")
    assert training["compliance"]["compliance"] is False
    assert training["compliance"]["reason"][0]["field"] == "meta.workloadSupportedTypes"
    inference = api.get(f"{url}?complyToProject={org.a.pk}&complyToWorkloadType=Inference").json()
    assert inference["compliance"] == {"imposed": False, "compliance": True, "reason": []}
    assert [e["meta"]["name"] for e in api.get("/api/v1/asset/compute?isTraining=true").json()["entries"]] == []
    assert [e["meta"]["name"] for e in api.get("/api/v1/asset/compute?isInference=true").json()["entries"]] == [
        "serving"]


def test_pvc_history_is_answered_as_latest_documents_it(make_asset, client_for, org):
    api = client_for(org.users.admin)
    pvc = make_asset("datasource/pvc", "data")
    url = f"/api/v1/asset/datasource/pvc/{pvc['meta']['id']}/history"
    history = matches(api.get(url + "?offset=0&limit=10"), "get", "/api/v1/asset/datasource/pvc/{AssetId}/history")
    assert history == {"records": []}  # its claim is not made on a cluster yet: nothing has happened to it
    assert api.get(url + "?limit=-1").status_code == 400
    assert client_for(org.users.other).get(url).status_code == 404
