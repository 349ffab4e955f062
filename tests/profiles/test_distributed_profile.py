"""A catalog template can be distributed: a platform admin makes an environment template version of kind
`distributed` and a service profile on it (through the API), a member launches it from the catalog, and the
launch runs on kubesim as a PyTorchJob with a master and workers, to Completed; a bad worker count is a 400
naming the input that set it."""

import pytest

from tests.conftest import bearer_client
from tests.factories import UserFactory
from tests.workloads.cluster_support import wait_for
from tests.workloads.test_distributed_e2e import roles
from tests.workloads.test_e2e import sync, wait_phase
from workloads.models import Workload

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

SPEC_TEMPLATE = {
    "image": "{{ image }}", "command": "torchrun", "args": "train.py --epochs {{ epochs }}",
    "distributedFramework": "PyTorch", "numWorkers": "{{ workers }}", "cleanPodPolicy": "Running",
    "compute": {"gpuDevicesRequest": "{{ gpus }}"},
    "annotations": [{"name": "kubesim.paas-studio/run-seconds", "value": "4"}],
}
VARIABLES = [
    {"name": "image", "type": "string", "default": "pytorch/pytorch:latest", "pattern": r"\S+"},
    {"name": "epochs", "type": "integer", "default": 1, "min": 1, "max": 100},
    {"name": "workers", "type": "integer", "default": 2, "description": "Worker pods besides the master."},
    {"name": "gpus", "type": "integer", "default": 1, "min": 0, "max": 8, "description": "GPUs per pod."},
]


def test_a_distributed_profile_launches_a_kubeflow_job_from_the_catalog(worker, sim_org):
    admin = bearer_client(UserFactory(username="platform-root", platform_admin=True))
    template = admin.post("/api/v1/environment-templates", {"name": "torch-ddp"}, format="json")
    assert template.status_code == 201, template.json()
    version = admin.post(f"/api/v1/environment-templates/{template.json()['id']}/versions",
                         {"version": "1.0.0", "kind": "distributed", "specTemplate": SPEC_TEMPLATE,
                          "variables": VARIABLES, "state": "active",
                          "outputs": [{"name": "job", "label": "Job", "expression": "{{ workload.name }}"}]},
                         format="json")
    assert version.status_code == 201, version.json()
    assert version.json()["kind"] == "distributed"
    profile = admin.post("/api/v1/service-profiles", {
        "name": "torch-ddp", "displayName": "PyTorch DDP", "projectId": sim_org.project.id,
        "environmentTemplate": "torch-ddp", "environmentTemplateVersion": "1.0.0", "serviceType": "jobs",
        "sharing": {"mode": "selected", "projectIds": [sim_org.project.id]}}, format="json")
    assert profile.status_code == 201, profile.json()
    assert profile.json()["kind"] == "distributed"
    catalog = sim_org.api.get(f"/api/v1/catalog?projectId={sim_org.project.id}").json()["profiles"]
    entry = next(p for p in catalog if p["name"] == "torch-ddp")

    url = f"/api/v1/service-profiles/{entry['id']}/launch"
    bad = sim_org.api.post(url, {"projectId": sim_org.project.id, "name": "ddp", "inputs": {"workers": 0}},
                           format="json")
    assert bad.status_code == 400, bad.json()
    assert {e["field"] for e in bad.json()["errors"]} == {"inputs.workers"}, bad.json()

    launched = sim_org.api.post(url, {"projectId": sim_org.project.id, "name": "ddp", "inputs": {"workers": 3}},
                                format="json")
    assert launched.status_code == 201, launched.json()
    workload_id = launched.json()["id"]
    row = Workload.objects.get(pk=workload_id)
    assert (row.kind, row.source, row.gpu_request, row.requested_pods) == ("distributed", "catalog", 4, 4)
    assert row.spec["numWorkers"] == 3
    wait_phase(sim_org, workload_id, "Running")
    wait_for(lambda: roles(sim_org, workload_id) == {"master": 1, "worker": 3}, step=lambda: sync(sim_org),
             what="the master and three workers")
    done = wait_phase(sim_org, workload_id, "Completed")
    assert done["distributedFramework"] == "PyTorch" and done["launchedFrom"] == "catalog"
