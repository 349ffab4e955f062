"""Project GPU quotas with a real cluster behind them: what fits the limit runs on the real server (the GPUs
counted by its node side), what does not is refused by the API before anything reaches the cluster."""

import pytest
from kubernetes import client

from tests.workloads.cluster_support import run_seconds, training_body, wait_for
from workloads import manifests, tasks

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_training_within_the_limit_runs_and_one_over_it_never_reaches_the_cluster(worker, real_org):
    real_org.project.gpu_deserved, real_org.project.gpu_limit = 2, 2
    real_org.project.save()
    body = training_body(real_org.project, "fits", annotations=run_seconds(600), compute={"gpuDevicesRequest": 2})
    fits = real_org.api.post("/api/v1/workloads/trainings", body, format="json")
    assert fits.status_code == 200, fits.json()
    workload_id = fits.json()["workloadId"]

    def phase():
        tasks.cluster_sync.apply(args=[str(real_org.cluster.pk)])
        return real_org.api.get(f"/api/v1/workloads/{workload_id}").json()["phase"] == "Running"

    wait_for(phase, what="the 2-GPU training to run")
    over = real_org.api.post("/api/v1/workloads/trainings",
                             training_body(real_org.project, "over", compute={"gpuDevicesRequest": 1}), format="json")
    assert over.status_code == 400 and "limit" in over.json()["errors"][0]["message"]
    jobs = client.BatchV1Api(real_org.k8s).list_namespaced_job(real_org.namespace,
                                                               label_selector=f"{manifests.MANAGED_BY_LABEL}={manifests.MANAGED_BY}").items
    assert [j.metadata.labels[manifests.WORKLOAD_ID_LABEL] for j in jobs] == [workload_id]
    pods = client.CoreV1Api(real_org.k8s).list_namespaced_pod(real_org.namespace,
                                                              label_selector=f"job-name={jobs[0].metadata.name}").items
    assert pods[0].spec.containers[0].resources.limits["nvidia.com/gpu"] == "2"
