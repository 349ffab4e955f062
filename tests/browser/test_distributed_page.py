"""A distributed training's page shows its replicas by role (master and workers, with their pods), a role column
in the pods table, and the suspend action; checked in Chromium, with a screenshot for the README."""

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from workloads.models import Pod, Workload

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_page_shows_replicas_by_role(open_session, org):
    spec = {"image": "kubeflow/pytorch-dist-mnist:latest", "distributedFramework": "PyTorch", "numWorkers": 3,
            "compute": {"gpuDevicesRequest": 1}}
    workload = Workload.objects.create(
        kind="distributed", name="mnist-ddp", requested_name="mnist-ddp", project=org.a, department=org.department,
        cluster=org.cluster, created_by_name="bob@example.com", spec=spec, request={"spec": spec},
        actual_phase="Degraded", phase_message="3/4 pods ready: 0/6 nodes are available: 6 Insufficient nvidia.com/gpu.",
        running_pods=3, requested_pods=4, gpu_request=4)
    now = timezone.now()
    base = "mnist-ddp-" + workload.pk.hex[:8]
    pods = [("master", 0, "Running"), ("worker", 0, "Running"), ("worker", 1, "Running"), ("worker", 2, "Pending")]
    for role, index, phase in pods:
        Pod.objects.create(workload=workload, uid=f"{role}-{index}", name=f"{base}-{role}-{index}", role=role,
                           phase=phase, node_name="" if phase == "Pending" else f"sim-node-{index}", created_at=now,
                           message="0/6 nodes are available: 6 Insufficient nvidia.com/gpu." if phase == "Pending" else "")
    session = open_session("bob")
    page = session.page
    page.goto(f"/workloads/{workload.pk}")
    replicas = page.get_by_test_id("replicas")
    expect(replicas.get_by_role("heading")).to_have_text("Replicas by role")
    expect(replicas.locator("[data-role=master] td").first).to_have_text("1/1")
    expect(replicas.locator("[data-role=worker] td").first).to_have_text("2/3")
    expect(replicas.locator("[data-role=worker]")).to_contain_text(f"{base}-worker-2")
    expect(page.locator(f"[data-pod={base}-master-0]")).to_contain_text("master")
    expect(page.get_by_role("button", name="Suspend")).to_be_visible()
    session.screenshot("workload-distributed")

    page.goto("/workloads")
    page.get_by_label("Type", exact=True).select_option("type==distributed")
    page.get_by_role("button", name="Filter").click()
    expect(page.get_by_role("link", name="mnist-ddp")).to_be_visible()
