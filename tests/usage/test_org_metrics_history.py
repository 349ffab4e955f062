"""Projects' and departments' metrics over long ranges come from the usage history: the hand-computed day of
tests/usage/scenario.py (three days ago) as a point per hour inside the hourly window, a point per day before it."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.conftest import bearer_client
from tests.runai_spec import assert_matches_spec
from tests.usage.scenario import day_d, make_scenario
from usage.rollup import usage_rollup

pytestmark = pytest.mark.django_db
PROJECT = "/api/v1/org-unit/projects/{projectId}/metrics"
DEPARTMENT = "/api/v1/org-unit/departments/{departmentId}/metrics"


@pytest.fixture
def rolled(org, settings):
    settings.USAGE_ROLLUP_MAX_HOURS = 24 * 5
    scenario = make_scenario(org)
    usage_rollup()
    return scenario


def _series(response, path):
    assert response.status_code == 200, response.json()
    assert_matches_spec(response, "get", path, versions=("latest",))
    body = response.json()
    return {m["type"]: [(v["timestamp"][:13], v["value"]) for v in m["values"]] for m in body["measurements"]}


def _query(start, end, types="GPU_ALLOCATION"):
    return {"metricType": types, "start": start.isoformat(), "end": end.isoformat(), "numberOfSamples": 0}


def test_a_projects_week_is_a_point_per_hour_it_held_gpus(org, rolled):
    now = timezone.now()
    answer = bearer_client(org.users.member).get(
        PROJECT.format(projectId=org.a.pk), _query(now - timedelta(days=7), now, "GPU_ALLOCATION,CPU_ALLOCATION_MILLICORES"))
    d = day_d().isoformat()[:11]
    series = _series(answer, PROJECT)
    # train: 2 GPUs and 4 cores, 01:00–04:30
    assert series["GPU_ALLOCATION"] == [(f"{d}01", "2"), (f"{d}02", "2"), (f"{d}03", "2"), (f"{d}04", "1")]
    assert [v for _, v in series["CPU_ALLOCATION_MILLICORES"]] == ["4000", "4000", "4000", "2000"]


def test_a_departments_week_sums_its_projects_and_one_pool_is_its_own(org, rolled):
    now = timezone.now()
    admin = bearer_client(org.users.platform_admin)
    path = DEPARTMENT.format(departmentId=org.department.pk)
    d = day_d().isoformat()[:11]
    # train 2 GPUs 01:00–04:30; space 1 GPU 02:00–03:30 and 05:00–06:00
    assert _series(admin.get(path, _query(now - timedelta(days=7), now)), DEPARTMENT)["GPU_ALLOCATION"] == [
        (f"{d}01", "2"), (f"{d}02", "3"), (f"{d}03", "2.5"), (f"{d}04", "1"), (f"{d}05", "1")]
    a100 = admin.get(path, {**_query(now - timedelta(days=7), now), "nodepoolName": "a100"})
    assert _series(a100, DEPARTMENT)["GPU_ALLOCATION"] == [(f"{d}02", "1"), (f"{d}03", "0.5"), (f"{d}05", "1")]
    averaged = admin.get(path, {**_query(now - timedelta(days=7), now), "numberOfSamples": 1}).json()
    assert averaged["measurements"][0]["values"][0]["value"] == "1.9"  # (2 + 3 + 2.5 + 1 + 1) / 5


def test_a_departments_month_is_a_point_per_day(org, rolled):
    now = timezone.now()
    path = DEPARTMENT.format(departmentId=org.department.pk)
    answer = bearer_client(org.users.platform_admin).get(path, {**_query(now - timedelta(days=30), now),
                                                                "nodepoolName": "a100"})
    # space in a100: 2.5 GPU-hours on day D
    assert _series(answer, DEPARTMENT)["GPU_ALLOCATION"] == [(day_d().isoformat()[:11] + "00", "0.104167")]


def test_a_range_older_than_the_hourly_window_is_a_point_per_day(org, rolled, settings):
    settings.USAGE_HOURLY_RETENTION_DAYS = 2  # day D (three days ago) is now read from the daily rows
    now = timezone.now()
    path = DEPARTMENT.format(departmentId=org.department.pk)
    series = _series(bearer_client(org.users.platform_admin).get(path, _query(now - timedelta(days=60), now)),
                     DEPARTMENT)
    assert series["GPU_ALLOCATION"] == [(day_d().isoformat()[:11] + "00", "0.395833")]  # 9.5 GPU-hours / 24


def test_another_projects_member_cannot_read_its_history(org, rolled):
    now = timezone.now()
    outsider = bearer_client(org.users.other)
    assert outsider.get(PROJECT.format(projectId=org.a.pk), _query(now - timedelta(days=7), now)).status_code == 404
