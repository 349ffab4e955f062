"""Run:ai's own SDK (runapy) against a live server and kubesim: a project's admin creates an environment, a compute
and a PVC data source, and a template of them; a member submits a training from the template with one field of its
own; the training runs on the simulated cluster, and its Job's pod template has the environment's image, command
and variables, the compute's GPU and the PVC mounted, with the request's arguments over the template's."""

import uuid

import pytest
import runai
from kubernetes import client
from runai.exceptions import ApiException

from studio.models import Level
from tests.factories import MembershipFactory, UserFactory
from tests.runai_spec import spec_errors
from tests.runapy_support import runapy_client
from tests.workloads.cluster_support import run_seconds
from tests.workloads.test_e2e import pods_of, wait_phase
from workloads.manifests import WORKLOAD_ID_LABEL

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
IMAGE = "nvcr.io/nvidia/pytorch:24.01-py3"


def checked(response, method, path):
    problems = spec_errors(response.data, method, path, response.status_code)
    assert not problems, "\n".join(problems)
    return response.data


def test_runapy_trains_from_a_template_of_an_environment_a_compute_and_a_pvc(live_server, worker, sim_org):
    owner = UserFactory(username=f"owner-{uuid.uuid4().hex[:6]}")
    MembershipFactory(user=owner, project=sim_org.project, role=Level.ADMIN)
    assets = runapy_client(live_server.url, owner).workload_assets
    meta = {"scope": "project", "projectId": sim_org.project.pk, "clusterId": str(sim_org.cluster.pk)}
    environment = checked(assets.environment.create_environment_asset(runai.EnvironmentCreationRequest(
        meta=runai.AssetCreationRequest(name="pytorch", **meta),
        spec=runai.EnvironmentAssetSpec(image=IMAGE, image_pull_policy="IfNotPresent", command="python",
                                        args="train.py", environment_variables=[
                                            runai.EnvironmentVariableOfAsset(name="EPOCHS", value="3")]))),
        "post", "/api/v1/asset/environment")
    compute = checked(assets.compute.create_compute_asset(runai.ComputeCreationRequest(
        meta=runai.AssetCreationRequest(name="one-gpu", **meta),
        spec=runai.ComputeAssetSpec(gpu_devices_request=1, cpu_core_request=0.5, cpu_memory_request="512Mi"))),
        "post", "/api/v1/asset/compute")
    pvc = checked(assets.pvc.create_pvc_asset({"meta": {"name": "datasets", **meta}, "spec": {
        "path": "/data", "claimInfo": {"size": "1Gi", "accessModes": {"readWriteOnce": True}}}}),
        "post", "/api/v1/asset/datasource/pvc")
    template = checked(assets.template.create_template(runai.WorkloadTemplateCreationRequest(
        meta=runai.AssetCreationRequest(name="train-from-assets", **meta),
        spec=runai.SpecificRunCreationFields(
            assets=runai.AssetsIds(environment=environment["meta"]["id"], compute=compute["meta"]["id"],
                                   datasources=[runai.AssetIdAndKind(id=pvc["meta"]["id"], kind="pvc")]),
            specific_env=runai.SpecificRunParams(args="train.py --epochs 3")))),
        "post", "/api/v1/asset/workload-template")
    assert template["spec"]["assets"]["compute"]["name"] == "one-gpu"

    workloads = runapy_client(live_server.url, sim_org.user).workloads
    created = checked(workloads.trainings.create_training1(runai.TrainingCreationRequest(
        name="from-template", project_id=str(sim_org.project.pk), cluster_id=str(sim_org.cluster.pk),
        template_id=template["meta"]["id"],
        spec=runai.TrainingSpecSpec(args="train.py --epochs 5", annotations=[
            runai.Annotation(**annotation) for annotation in run_seconds(600)]))),
        "post", "/api/v1/workloads/trainings")
    workload_id = created["workloadId"]
    wait_phase(sim_org, workload_id, "Running")
    assert [p.status.phase for p in pods_of(sim_org, workload_id)] == ["Running"]

    selector = f"{WORKLOAD_ID_LABEL}={workload_id}"
    [job] = client.BatchV1Api(sim_org.k8s).list_namespaced_job(sim_org.namespace, label_selector=selector).items
    pod = job.spec.template.spec
    [container] = pod.containers
    assert container.image == IMAGE
    assert container.command == ["python"]
    assert container.args == ["train.py", "--epochs", "5"]  # the request's, over the template's
    assert {"EPOCHS": "3"}.items() <= {e.name: e.value for e in container.env or []}.items()
    assert container.resources.limits["nvidia.com/gpu"] == "1"
    assert container.resources.requests["cpu"] == "500m" and container.resources.requests["memory"] == "512Mi"
    claims = {v.name: v.persistent_volume_claim.claim_name for v in pod.volumes if v.persistent_volume_claim}
    [(volume, claim)] = claims.items()
    assert [m.mount_path for m in container.volume_mounts if m.name == volume] == ["/data"]
    [made] = client.CoreV1Api(sim_org.k8s).list_namespaced_persistent_volume_claim(
        sim_org.namespace, label_selector=selector).items
    assert made.metadata.name == claim and made.spec.resources.requests["storage"] == "1Gi"

    # the assets say what uses them, and the environment cannot go while the training and the template do
    used = checked(assets.environment.get_environment_asset_by_id(environment["meta"]["id"], usage_info=True),
                   "get", "/api/v1/asset/environment/{AssetId}")["usedBy"]
    assert used["trainings"] == [{"id": workload_id, "name": "from-template"}]
    assert used["templates"] == [{"id": template["meta"]["id"], "name": "train-from-assets"}]
    with pytest.raises(ApiException) as in_use:
        assets.environment.delete_environment_asset_by_id(environment["meta"]["id"])
    assert in_use.value.status == 409 and "training from-template" in in_use.value.body
