"""Run:ai's own SDK (runapy) against a live server: a project's admin creates an environment, a compute and a PVC
data source with runapy's request models, lists and reads them back (and the data sources' combined list); a
member of the project reads them and may not create; every answer checked against both Run:ai documents."""

import pytest
import runai
from runai.exceptions import ApiException

from tests.runai_spec import spec_errors
from tests.runapy_support import runapy_client

pytestmark = pytest.mark.django_db(transaction=True)


def checked(response, method, path):
    problems = spec_errors(response.data, method, path, response.status_code)
    assert not problems, "\n".join(problems)
    return response.data


def test_runapy_creates_lists_and_reads_an_environment_a_compute_and_a_pvc(live_server, org):
    assets = runapy_client(live_server.url, org.users.admin).workload_assets
    meta = {"scope": "project", "projectId": org.a.pk, "clusterId": str(org.cluster.pk)}
    environment = checked(assets.environment.create_environment_asset(runai.EnvironmentCreationRequest(
        meta=runai.AssetCreationRequest(name="pytorch", description="PyTorch with Jupyter.", **meta),
        spec=runai.EnvironmentAssetSpec(image="nvcr.io/nvidia/pytorch:24.01-py3", image_pull_policy="IfNotPresent",
                                        command="python", args="train.py"))), "post", "/api/v1/asset/environment")
    compute = checked(assets.compute.create_compute_asset(runai.ComputeCreationRequest(
        meta=runai.AssetCreationRequest(name="one-gpu", **meta),
        spec=runai.ComputeAssetSpec(gpu_devices_request=1, gpu_request_type="portion", gpu_portion_request=1.0,
                                    cpu_core_request=2.0, cpu_memory_request="4Gi"))), "post", "/api/v1/asset/compute")
    pvc = checked(assets.pvc.create_pvc_asset(runai.PVCCreationRequest(
        meta=runai.AssetCreationRequest(name="datasets", **meta),
        spec=runai.PVCAssetSpec(path="/data", claim_info=runai.ClaimInfo(size="10Gi", storage_class="standard")))),
        "post", "/api/v1/asset/datasource/pvc")
    assert environment["spec"]["image"] == "nvcr.io/nvidia/pytorch:24.01-py3"
    assert compute["spec"]["gpuDevicesRequest"] == 1 and pvc["spec"]["claimInfo"]["size"] == "10Gi"

    reader = runapy_client(live_server.url, org.users.member).workload_assets
    listed = checked(reader.environment.list_environment_assets(project_id=org.a.pk, usage_info=True),
                     "get", "/api/v1/asset/environment")
    assert [e["meta"]["name"] for e in listed["entries"]] == ["pytorch"]
    assert listed["entries"][0]["usedBy"]["trainings"] == []
    computes = checked(reader.compute.list_compute_assets(scope="project", project_id=org.a.pk),
                       "get", "/api/v1/asset/compute")
    assert [e["meta"]["id"] for e in computes["entries"]] == [compute["meta"]["id"]]
    pvcs = checked(reader.pvc.list_pvc_assets(project_id=org.a.pk), "get", "/api/v1/asset/datasource/pvc")
    assert [e["meta"]["name"] for e in pvcs["entries"]] == ["datasets"]
    sources = checked(reader.datasources.list_datasource_assets(project_id=org.a.pk), "get",
                      "/api/v1/asset/datasource")
    assert [e["spec"]["pvc"]["path"] for e in sources["entries"]] == ["/data"]
    for got, (method_name, api, path) in (
            (environment, ("get_environment_asset_by_id", reader.environment, "environment")),
            (compute, ("get_compute_asset_by_id", reader.compute, "compute")),
            (pvc, ("get_pvc_asset_by_id", reader.pvc, "datasource/pvc"))):
        read = checked(getattr(api, method_name)(got["meta"]["id"]), "get", f"/api/v1/asset/{path}/{{AssetId}}")
        assert read == got

    viewer = runapy_client(live_server.url, org.users.viewer).workload_assets  # reads, manages nothing
    with pytest.raises(ApiException) as refused:
        viewer.compute.create_compute_asset({"meta": {"name": "mine", **meta}, "spec": {"gpuDevicesRequest": 1}})
    assert refused.value.status == 403


def test_runapy_makes_a_data_volume_shares_it_and_another_project_lists_it(live_server, org):
    owner = runapy_client(live_server.url, org.users.admin).datavolumes.datavolumes
    made = checked(owner.create_datavolume(runai.DatavolumeCreationFields(
        name="results", project_id=str(org.a.pk), origin_pvc_name="train-out")), "post", "/api/v1/datavolumes")
    assert (made["name"], made["status"]["phase"]) == ("results", "Creating")
    shared = owner.patch_datavolume_shared_scopes(made["id"], runai.SharedScopesPatchRequest(
        add=[runai.SharedScopeBase(scope_type="department", scope_id=str(org.department.pk))]))
    assert [s["scopeName"] for s in checked(shared, "patch", "/api/v1/datavolumes/{datavolumeId}/sharedScopes")] \
        == ["research"]

    other = runapy_client(live_server.url, org.users.other).datavolumes.datavolumes  # beta's member
    usable = checked(other.get_datavolumes(request_type="UsableInProject", usable_in_project_id=str(org.b.pk)),
                     "get", "/api/v1/datavolumes")
    assert [d["id"] for d in usable["datavolumes"]] == [made["id"]]
    with pytest.raises(ApiException) as refused:
        other.delete_datavolume(made["id"])
    assert refused.value.status == 403
