"""The GPUs a project has in use, as its quota check reads them (one partial index of the workloads that hold
GPUs), follow every way a workload takes or gives back GPUs: submit, suspend, resume, delete, completion."""

import re

import pytest

from tests.workloads.cluster_support import run_seconds, training_body, wait_for
from workloads.cluster import push, sync
from workloads.models import Workload

pytestmark = pytest.mark.django_db(transaction=True)
LIMIT = 4


def test_gpus_in_use_follow_submit_suspend_resume_delete_and_completion(sim_org):
    project = sim_org.project
    project.gpu_deserved, project.gpu_limit = LIMIT, LIMIT
    project.save()
    api = sim_org.api

    def submit(name: str, gpus: int, seconds: int = 600):
        body = training_body(project, name, compute={"gpuDevicesRequest": gpus}, annotations=run_seconds(seconds))
        return api.post("/api/v1/workloads/trainings", body, format="json")

    def in_use() -> float:
        """What the quota check counts: a request for more than the limit is refused with the total it saw."""
        refused = submit("probe", LIMIT + 1)
        assert refused.status_code == 400
        total = re.search(r"([\d.]+) GPUs requested in total", refused.json()["errors"][0]["message"])
        return float(total.group(1)) - (LIMIT + 1)

    long = submit("long", 2).json()["workloadId"]
    short = submit("short", 1, seconds=1).json()["workloadId"]
    assert in_use() == 3
    assert api.post(f"/api/v1/workloads/trainings/{long}/suspend").status_code == 202
    assert in_use() == 1
    assert submit("over", 4).status_code == 400  # 1 + 4 > 4
    assert api.post(f"/api/v1/workloads/trainings/{long}/resume").status_code == 202
    assert in_use() == 3
    assert api.delete(f"/api/v1/workloads/trainings/{long}").status_code == 204
    assert in_use() == 1

    push.workload_push(short)  # the cluster runs it for a second; the sync sees it complete
    wait_for(lambda: Workload.objects.get(pk=short).actual_phase == "Completed", timeout=30,
             step=lambda: sync.cluster_sync(sim_org.cluster.pk), what="the short training to complete")
    assert in_use() == 0
    assert submit("whole", LIMIT).status_code == 200
