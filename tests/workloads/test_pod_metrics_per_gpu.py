"""A pod's per-GPU metric types (`GPU_UTILIZATION_PER_GPU`, `GPU_MEMORY_USAGE_BYTES_PER_GPU`): the pod's GPU samples
as collected from the DCGM exporter, one series per GPU, checked against Run:ai's schemas; the types with no
source stay a 400 naming them."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.runai_spec import assert_matches_spec
from workloads.models import MetricSample, Pod, Workload

pytestmark = pytest.mark.django_db
URL = "/api/v1/workloads/{workloadId}/pods/{podId}/metrics"


def test_per_gpu_types_answer_one_series_per_gpu(client_for, org):
    org.cluster.prometheus_url = "http://prometheus.example:9090"
    org.cluster.save()
    workload = Workload.objects.create(kind="training", name="t", requested_name="t", project=org.a,
                                       department=org.department, cluster=org.cluster, created_by_name="bob")
    Pod.objects.create(workload=workload, uid="7d3c5a52-0a3e-4a8e-9a4c-1f6f3c2a9b10", name="t-0", phase="Running")
    start = timezone.now() - timedelta(minutes=5)
    MetricSample.objects.bulk_create([
        MetricSample(workload=workload, pod_name="t-0", type=type_, labels={"gpu": gpu}, value=value,
                     timestamp=start + timedelta(seconds=10))
        for type_, gpu, value in [("GPU_UTILIZATION", "0", 40), ("GPU_UTILIZATION", "1", 80),
                                  ("GPU_MEMORY_USAGE_BYTES", "0", 1024), ("GPU_MEMORY_USAGE_BYTES", "1", 2048)]])
    url = URL.format(workloadId=workload.pk, podId="7d3c5a52-0a3e-4a8e-9a4c-1f6f3c2a9b10")
    params = {"metricType": "GPU_UTILIZATION_PER_GPU,GPU_MEMORY_USAGE_BYTES_PER_GPU", "start": start.isoformat(),
              "end": timezone.now().isoformat(), "numberOfSamples": 1}
    response = client_for(org.users.member).get(url, params)
    assert response.status_code == 200, response.json()
    assert_matches_spec(response, "get", URL)
    got = sorted((m["type"], m["labels"]["gpu"], m["values"][0]["value"]) for m in response.json()["measurements"])
    assert got == [("GPU_MEMORY_USAGE_BYTES_PER_GPU", "0", "1024"), ("GPU_MEMORY_USAGE_BYTES_PER_GPU", "1", "2048"),
                   ("GPU_UTILIZATION_PER_GPU", "0", "40"), ("GPU_UTILIZATION_PER_GPU", "1", "80")]
    # Workload-level metrics have no per-GPU types (the spec's MetricType has none), and sourceless pod types
    # are still refused by name.
    workload_url = f"/api/v1/workloads/{workload.pk}/metrics"
    refused = client_for(org.users.member).get(workload_url, {**params, "metricType": "GPU_UTILIZATION_PER_GPU"})
    assert refused.status_code == 400
    refused = client_for(org.users.member).get(url, {**params, "metricType": "GPU_SM_ACTIVITY_PER_GPU,NVLINK_BANDWIDTH_TOTAL"})
    assert refused.status_code == 400
    message = refused.json()["errors"][0]["message"]
    assert "GPU_SM_ACTIVITY_PER_GPU" in message and "NVLINK_BANDWIDTH_TOTAL" in message
