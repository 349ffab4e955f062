"""Why pending, and where in the queue, end to end: the workloads API -> a real Celery worker -> kubesim, and sync
rounds reading the scheduler's verdicts and the kubelet's pull errors back into `pendingReason`/`queuePosition`."""

from datetime import timedelta

import pytest
from django.utils.dateparse import parse_datetime

from tests.workloads.cluster_support import run_seconds, training_body, wait_for
from workloads import tasks
from workloads.models import Workload

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def sync(org):
    tasks.cluster_sync.apply(args=[str(org.cluster.pk)])


def submit(org, body: dict) -> str:
    response = org.api.post("/api/v1/workloads/trainings", body, format="json")
    assert response.status_code == 200, response.json()
    return response.json()["workloadId"]


def waiting(org, workload_id: str, reason_type: str) -> dict:
    """The workload as GET answers it, once its pendingReason has `reason_type` (and, for a reason of the
    scheduler or the quota, once it is Pending: a round that listed the Job just before it was created sees its
    pods but not the Job, and says Creating)."""
    def seen():
        answer = org.api.get(f"/api/v1/workloads/{workload_id}").json()
        queued = reason_type not in ("NoNodeRoom", "OverQuota") or answer["phase"] == "Pending"
        return answer if (answer.get("pendingReason") or {}).get("type") == reason_type and queued else None
    return wait_for(seen, step=lambda: sync(org), what=f"pendingReason {reason_type}")


def test_more_gpus_than_any_node_has_names_the_resource_and_two_such_workloads_queue_1_and_2(worker, sim_org):
    first = submit(sim_org, training_body(sim_org.project, "huge-1", compute={"gpuDevicesRequest": 16}))
    second = submit(sim_org, training_body(sim_org.project, "huge-2", compute={"gpuDevicesRequest": 16}))
    waiting(sim_org, first, "NoNodeRoom")
    waiting(sim_org, second, "NoNodeRoom")
    sync(sim_org)  # a round that sees both Pending from its start
    one, two = (sim_org.api.get(f"/api/v1/workloads/{w}").json() for w in (first, second))
    assert one["phase"] == "Pending" and "Insufficient nvidia.com/gpu" in one["phaseMessage"]
    reason = one["pendingReason"]
    assert reason["resource"] == "nvidia.com/gpu" and reason["nodePool"] == "default"
    assert "No node in node pool default has room" in reason["message"]
    assert reason["schedulerMessage"].startswith("0/4 nodes are available")
    assert (one["queuePosition"], two["queuePosition"]) == (1, 2)
    assert reason["queueLength"] == 2 and reason["estimatedStartAt"] is None  # nothing running has a known end
    listed = sim_org.api.get("/api/v1/workloads?sortBy=createdAt&sortOrder=asc").json()["workloads"]
    assert [(w["name"], w["queuePosition"], w["pendingReason"]["type"]) for w in listed] == [
        ("huge-1", 1, "NoNodeRoom"), ("huge-2", 2, "NoNodeRoom")]

    # The project's limit lowered under what it holds: the first is now over it, by 8, and says whose.
    sim_org.project.gpu_limit = 8
    sim_org.project.save(update_fields=["gpu_limit"])
    over = waiting(sim_org, first, "OverQuota")["pendingReason"]
    assert (over["scope"], over["scopeName"], over["quota"], over["over"]) == ("project", sim_org.project.name,
                                                                              "limit", 8)
    assert "Insufficient nvidia.com/gpu" in over["schedulerMessage"]
    assert waiting(sim_org, second, "OverQuota")["pendingReason"]["over"] == 24  # 16 queued ahead + its 16 - 8

    # Once the first is deleted, the second is first in the queue.
    assert sim_org.api.delete(f"/api/v1/workloads/trainings/{first}").status_code == 204
    wait_for(lambda: sim_org.api.get(f"/api/v1/workloads/{second}").json()["queuePosition"] == 1,
             step=lambda: sync(sim_org), what="the second first in the queue")


def test_an_image_that_cannot_be_pulled_says_so_while_the_workload_waits(worker, sim_org):
    body = training_body(sim_org.project, "bad-image", image="registry.example.com/does-not-exist:1")
    workload_id = submit(sim_org, body)
    answer = waiting(sim_org, workload_id, "ImagePull")
    reason = answer["pendingReason"]
    assert answer["phase"] in ("Pending", "Initializing") and answer["queuePosition"] in (None, 1)
    assert reason["image"] == "registry.example.com/does-not-exist:1"
    assert reason["reason"] in ("ErrImagePull", "ImagePullBackOff")
    assert "cannot be pulled" in reason["message"]


def test_a_running_workload_has_no_pending_reason(worker, sim_org):
    workload_id = submit(sim_org, training_body(sim_org.project, "fine"))
    done = wait_for(lambda: (lambda w: w if w["phase"] in ("Running", "Completed") else None)(
        sim_org.api.get(f"/api/v1/workloads/{workload_id}").json()), step=lambda: sync(sim_org), what="running")
    assert done["pendingReason"] is None and done["queuePosition"] is None


def test_behind_running_workloads_with_a_time_limit_the_wait_has_an_estimate(worker, sim_org):
    # Every GPU of the cluster (4 nodes x 8) held by trainings that end within the project's time limit.
    sim_org.project.scheduling_rules = {"trainingJobTimeLimitSeconds": 3600}
    sim_org.project.save(update_fields=["scheduling_rules"])
    running = [submit(sim_org, training_body(sim_org.project, f"full-{i}", compute={"gpuDevicesRequest": 8},
                                             annotations=run_seconds(600))) for i in range(4)]
    wait_for(lambda: all(sim_org.api.get(f"/api/v1/workloads/{w}").json()["phase"] == "Running" for w in running),
             step=lambda: sync(sim_org), what="the cluster full")
    waiting_id = submit(sim_org, training_body(sim_org.project, "next", compute={"gpuDevicesRequest": 8}))
    answer = waiting(sim_org, waiting_id, "NoNodeRoom")
    starts = sorted(Workload.objects.filter(pk__in=running).values_list("started_at", flat=True))
    assert answer["queuePosition"] == 1, (answer["phase"], answer["phaseMessage"], answer["pendingReason"])
    assert parse_datetime(answer["pendingReason"]["estimatedStartAt"]) == starts[0] + timedelta(seconds=3600)
