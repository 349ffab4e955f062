"""Idle GPU reclaim and time limits (a project's Run:ai schedulingRules): the pure decision as a table, and end to
end on the simulated cluster — a workspace whose GPU sits idle is suspended by the reclaim round (its Deployment
scaled to zero, an event saying why, the reason on its page) and resumes in one call; a busy one is left alone; a
training past its time limit is suspended."""

from datetime import UTC, datetime, timedelta

import pytest
from django.test import Client
from kubernetes import client

from tests.conftest import bearer_client
from tests.factories import UserFactory
from tests.workloads.cluster_support import run_seconds, wait_for
from tests.workloads.test_e2e import object_name, submit, sync, wait_phase, workload
from workloads import tasks
from workloads.cluster import collect
from workloads.cluster.reclaim import Usage, reclaim_reason
from workloads.models import Workload

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
IDLE = {"interactiveJobMaxIdleDurationSeconds": 600}


def usage(first_ago: float, last_ago: float, peak: float, count: int = 10) -> Usage:
    return Usage(NOW - timedelta(seconds=first_ago), NOW - timedelta(seconds=last_ago), peak, count)


@pytest.mark.parametrize("case, kind, has_gpu, ran, rules, samples, expected", [
    ("idle for the whole window", "workspace", True, 900, IDLE, usage(590, 10, 2.0), "IdleGpuReclaimed"),
    ("busy once in the window", "workspace", True, 900, IDLE, usage(590, 10, 40.0), None),
    ("at the threshold is not idle", "workspace", True, 900, IDLE, usage(590, 10, 5.0), None),
    ("not running long enough", "workspace", True, 300, IDLE, usage(290, 10, 0.0), None),
    ("samples start late in the window", "workspace", True, 900, IDLE, usage(200, 10, 0.0), None),
    ("no recent sample", "workspace", True, 900, IDLE, usage(590, 120, 0.0), None),
    ("no samples at all", "workspace", True, 900, IDLE, None, None),
    ("no GPU: nothing to reclaim", "workspace", False, 900, IDLE, usage(590, 10, 0.0), None),
    ("no rule for the project", "workspace", True, 900, {}, usage(590, 10, 0.0), None),
    ("a training's own idle rule", "training", True, 900, {"trainingJobMaxIdleDurationSeconds": 600},
     usage(590, 10, 0.0), "IdleGpuReclaimed"),
    ("a workspace rule does not apply to trainings", "training", True, 900, IDLE, usage(590, 10, 0.0), None),
    ("past the time limit, busy or not", "training", True, 3601, {"trainingJobTimeLimitSeconds": 3600},
     usage(590, 10, 90.0), "TimeLimitReached"),
    ("within the time limit", "training", True, 3599, {"trainingJobTimeLimitSeconds": 3600}, None, None),
    ("a workspace's time limit", "workspace", False, 7200, {"interactiveJobTimeLimitSeconds": 7200}, None,
     "TimeLimitReached"),
])
def test_reclaim_reason(case, kind, has_gpu, ran, rules, samples, expected):
    verdict = reclaim_reason(kind=kind, has_gpu=has_gpu, running_since=NOW - timedelta(seconds=ran), rules=rules,
                             usage=samples, now=NOW, threshold=5.0, sample_gap=30)
    assert (verdict[0] if verdict else None) == expected, case
    if verdict:
        assert "Resume" in verdict[1]


def test_never_running_is_never_reclaimed():
    assert reclaim_reason(kind="workspace", has_gpu=True, running_since=None, rules={
        "interactiveJobTimeLimitSeconds": 1, **IDLE}, usage=usage(590, 10, 0.0), now=NOW, threshold=5.0,
        sample_gap=30) is None


# --- end to end on the simulated cluster ---------------------------------------------------------------------

def platform_admin(org):
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.filter(username=f"root-{org.project.name}").first()
    return bearer_client(user or UserFactory(username=f"root-{org.project.name}", platform_admin=True))


def set_rules(org, rules: dict):
    answer = platform_admin(org).patch(f"/api/v1/org-unit/projects/{org.project.pk}", {"schedulingRules": rules}, format="json")
    assert answer.status_code == 200, answer.json()
    return answer.json()


def workspace_body(org, name: str, *, idle: bool) -> dict:
    annotations = [{"name": "kubesim.paas-studio/gpu-utilization", "value": "0"}] if idle else []
    return {"name": name, "projectId": org.project.id, "clusterId": str(org.project.cluster_id),
            "spec": {"image": "jupyter/base-notebook", "compute": {"gpuDevicesRequest": 1},
                     "annotations": annotations}}


def collect_for(org, seconds: float):
    deadline = datetime.now(UTC) + timedelta(seconds=seconds)
    while datetime.now(UTC) < deadline:
        collect.cluster_collect_metrics(org.cluster.pk)
        wait_for(lambda: True, timeout=0.5)


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_project_rules_are_read_and_validated(sim_org):
    assert set_rules(sim_org, {"interactiveJobMaxIdleDurationSeconds": 600})["schedulingRules"] == {
        "interactiveJobMaxIdleDurationSeconds": 600}
    bad = platform_admin(sim_org).patch(f"/api/v1/org-unit/projects/{sim_org.project.pk}",
                      {"schedulingRules": {"interactiveJobMaxIdleDurationSeconds": 0, "idleForever": 1}},
                      format="json")
    assert bad.status_code == 400
    fields = {error["field"] for error in bad.json()["errors"]}
    assert {"schedulingRules.interactiveJobMaxIdleDurationSeconds", "schedulingRules.idleForever"} <= fields
    # A member reads the project's rules; null clears one.
    assert sim_org.api.get(f"/api/v1/org-unit/projects/{sim_org.project.pk}").json()["schedulingRules"] == {
        "interactiveJobMaxIdleDurationSeconds": 600}
    assert set_rules(sim_org, {"interactiveJobMaxIdleDurationSeconds": None})["schedulingRules"] == {}


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_an_idle_workspace_is_suspended_and_resumes_in_one_call_a_busy_one_runs_on(worker, sim_org):
    set_rules(sim_org, {"interactiveJobMaxIdleDurationSeconds": 2})
    idle_id = submit(sim_org, "workspaces", workspace_body(sim_org, "idle-notebook", idle=True))
    busy_id = submit(sim_org, "workspaces", workspace_body(sim_org, "busy-notebook", idle=False))
    wait_phase(sim_org, idle_id, "Running")
    wait_phase(sim_org, busy_id, "Running")

    collect_for(sim_org, 3.0)  # GPU samples over the whole 2 s window
    tasks.workloads_reclaim.apply()

    suspended = workload(sim_org, idle_id)
    assert suspended["desiredPhase"] == "Stopped"
    events = sim_org.api.get(f"/api/v1/workloads/{idle_id}/events").json()["events"]
    reclaimed = next(e for e in events if e["reason"] == "IdleGpuReclaimed")
    assert "GPU utilisation stayed under 5%" in reclaimed["message"]
    assert workload(sim_org, busy_id)["desiredPhase"] == "Running"

    wait_phase(sim_org, idle_id, "Stopped")
    deployment = client.AppsV1Api(sim_org.k8s).read_namespaced_deployment(object_name(sim_org, idle_id),
                                                                          sim_org.namespace)
    assert deployment.spec.replicas == 0  # its GPU is back in the pool
    browser = Client()
    browser.force_login(sim_org.user)
    page = browser.get(f"/workloads/{idle_id}").content.decode()
    assert "Suspended: idle GPU" in page and "GPU utilisation stayed under 5%" in page
    assert "No pods: the workload is suspended" in page and "No pods yet" not in page

    assert sim_org.api.post(f"/api/v1/workloads/workspaces/{idle_id}/resume").status_code == 202
    wait_phase(sim_org, idle_id, "Running")
    assert Workload.objects.get(pk=idle_id).events.filter(reason="Resume").exists()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_training_past_its_time_limit_is_suspended(worker, sim_org):
    set_rules(sim_org, {"trainingJobTimeLimitSeconds": 2})
    body = {"name": "long-train", "projectId": sim_org.project.id, "clusterId": str(sim_org.project.cluster_id),
            "spec": {"image": "python:3.11", "annotations": run_seconds(600)}}
    train_id = submit(sim_org, "trainings", body)
    wait_phase(sim_org, train_id, "Running")
    wait_for(lambda: tasks.workloads_reclaim.apply().get(), timeout=15, interval=0.5, what="the time limit")
    wait_phase(sim_org, train_id, "Stopped")
    events = sim_org.api.get(f"/api/v1/workloads/{train_id}/events").json()["events"]
    assert any(e["reason"] == "TimeLimitReached" for e in events)
    sync(sim_org)
