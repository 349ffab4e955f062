"""Run:ai's overtimeData of projects and departments, from the hand-computed day of tests/usage/scenario.py (three
days ago): in the 7-day and 30-day averages, not in the 24-hour one."""

from datetime import timedelta

import pytest
from django.utils import timezone

from studio.models import Department, Project
from tests.conftest import bearer_client
from tests.runai_spec import assert_matches_spec
from tests.usage.scenario import make_scenario
from usage.rollup import usage_rollup

pytestmark = pytest.mark.django_db


@pytest.fixture
def rolled(org, settings):
    settings.USAGE_ROLLUP_MAX_HOURS = 24 * 5
    make_scenario(org)
    month_ago = timezone.now() - timedelta(days=40)
    Project.objects.update(created_at=month_ago)
    Department.objects.update(created_at=month_ago)
    usage_rollup()


def test_a_projects_averages(org, rolled):
    response = bearer_client(org.users.member).get(f"/api/v1/org-unit/projects/{org.a.pk}")
    assert_matches_spec(response, "get", "/api/v1/org-unit/projects/{projectId}")
    data = response.json()["overtimeData"]
    assert data["range24hData"]["averageGpuAllocation"] == 0
    assert data["range7dData"]["averageGpuAllocation"] == round(7 / (7 * 24), 4)
    assert data["range7dData"]["averageGpuUtilization"] == 75.0  # 3 of the 4 measured GPU-hours
    assert data["range30dData"]["averageGpuAllocation"] == round(7 / (30 * 24), 4)


def test_the_department_sums_its_projects_in_the_list(org, rolled):
    response = bearer_client(org.users.platform_admin).get("/api/v1/org-unit/departments")
    assert_matches_spec(response, "get", "/api/v1/org-unit/departments", versions=("latest",))  # 2.18: uuid ids
    data = response.json()["departments"][0]["overtimeData"]
    assert data["range7dData"]["averageGpuAllocation"] == round(9.5 / (7 * 24), 4)


def test_a_young_project_averages_over_its_life(org, settings):
    settings.USAGE_ROLLUP_MAX_HOURS = 24 * 5
    make_scenario(org)
    Project.objects.filter(pk=org.a.pk).update(created_at=timezone.now() - timedelta(days=4))
    usage_rollup()
    data = bearer_client(org.users.member).get(f"/api/v1/org-unit/projects/{org.a.pk}").json()["overtimeData"]
    assert data["range7dData"]["averageGpuAllocation"] == data["range30dData"]["averageGpuAllocation"] > 7 / (7 * 24)


def test_the_last_hours_count_once_in_every_range(org):
    """Hours of the partial days are read from the hourly rows, whole days from the daily rows: a workload that ran
    the last 30 hours (across midnight, whatever the time) counts its 30 GPU-hours once in 7 and 30 days."""
    from tests.workloads.cluster_support import make_workload
    from usage.intervals import floor_hour
    from workloads.models import Workload

    now = timezone.now()
    running = make_workload(org.a, "recent", compute={"gpuDevicesRequest": 1})
    Workload.objects.filter(pk=running.pk).update(created_at=floor_hour(now) - timedelta(hours=30),
                                                  started_at=floor_hour(now) - timedelta(hours=30),
                                                  actual_phase="Running")
    Project.objects.update(created_at=now - timedelta(days=40))
    usage_rollup(max_hours=100)
    data = bearer_client(org.users.member).get(f"/api/v1/org-unit/projects/{org.a.pk}").json()["overtimeData"]
    assert data["range24hData"]["averageGpuAllocation"] == 1.0
    assert data["range7dData"]["averageGpuAllocation"] == round(30 / (7 * 24), 4)
    assert data["range30dData"]["averageGpuAllocation"] == round(30 / (30 * 24), 4)


def test_lists_filter_and_sort_by_the_averages(org, rolled):
    """Day D: alpha's train 7 GPU-hours, beta's space 2.5 — in the 7-day averages, not the 24-hour ones."""
    admin = bearer_client(org.users.platform_admin)
    names = lambda response: [p["name"] for p in response.json()["projects"]]  # noqa: E731
    by_week = admin.get("/api/v1/org-unit/projects", {"sortBy": "avgGpuAllocation7d", "sortOrder": "desc"})
    assert by_week.status_code == 200, by_week.json()
    assert names(by_week) == ["alpha", "beta"]
    assert names(admin.get("/api/v1/org-unit/projects", {"sortBy": "avgGpuAllocation7d"})) == ["beta", "alpha"]
    busy = admin.get("/api/v1/org-unit/projects", {"filterBy": f"avgGpuAllocation7d>={round(3 / 168, 4)}"})
    assert names(busy) == ["alpha"]
    assert admin.get("/api/v1/org-unit/projects/count", {"filterBy": "avgGpuAllocation24h>=0.0001"}).json() == {
        "count": 0}
    measured = admin.get("/api/v1/org-unit/departments", {"filterBy": "avgGpuUtilization30d>=70"}).json()
    assert [d["name"] for d in measured["departments"]] == [org.department.name]  # 3 of 4 measured: 75 %
    member = bearer_client(org.users.member)  # the averages never widen what a member sees
    assert [p["name"] for p in member.get("/api/v1/org-unit/projects",
                                          {"sortBy": "avgGpuAllocation30d"}).json()["projects"]] == ["alpha"]
