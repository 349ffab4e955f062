"""The roll-up against the hand-computed day of tests/usage/scenario.py: hourly rows, daily rows, idempotence."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.usage.scenario import make_scenario
from usage.intervals import held_intervals, hours_within
from usage.models import RollupState, UsageDay, UsageHour
from usage.rollup import usage_hour_roll, usage_rollup
from workloads.runai_fields import ALLOCATED_PHASES

pytestmark = pytest.mark.django_db


def _hours(workload) -> dict:
    return {row.hour: row for row in UsageHour.objects.filter(workload_id=workload.pk)}


def _sum(rows, field):
    return round(sum(getattr(r, field) for r in rows), 6)


def test_each_hour_of_each_workload(org, settings):
    settings.USAGE_ROLLUP_MAX_HOURS = 24 * 5
    s = make_scenario(org)
    usage_rollup()
    train = _hours(s.train)
    assert sorted(train) == [s.day + timedelta(hours=n) for n in (1, 2, 3, 4)]
    assert [train[s.day + timedelta(hours=n)].gpu_hours for n in (1, 2, 3, 4)] == [2, 2, 2, 1]
    assert train[s.day + timedelta(hours=1)].gpu_used_hours == 1.0
    assert train[s.day + timedelta(hours=2)].gpu_used_hours == 2.0
    assert train[s.day + timedelta(hours=3)].gpu_measured_hours == 0
    assert _sum(train.values(), "cpu_core_hours") == 14 and _sum(train.values(), "memory_gib_hours") == 28
    space = _hours(s.space)
    assert {h.hour - s.day: h.gpu_hours for h in space.values()} == {
        timedelta(hours=2): 1.0, timedelta(hours=3): 0.5, timedelta(hours=5): 1.0}
    assert {r.node_pool for r in space.values()} == {"a100"} and {r.node_pool for r in train.values()} == {"default"}


def test_days_roll_up_without_the_workload(org, settings):
    settings.USAGE_ROLLUP_MAX_HOURS = 24 * 5
    s = make_scenario(org)
    usage_rollup()
    rows = {(r.project_name, r.user_name): r for r in UsageDay.objects.filter(day=s.day.date())}
    assert set(rows) == {("alpha", org.users.member.email), ("beta", org.users.other.email)}
    alpha = rows[("alpha", org.users.member.email)]
    assert (alpha.gpu_hours, alpha.gpu_measured_hours, alpha.gpu_used_hours) == (7, 4, 3)
    assert rows[("beta", org.users.other.email)].gpu_hours == 2.5


def test_rolling_again_gives_the_same_rows(org, settings):
    """An hour rolled twice, a run repeated, or a run after a retry: no hour lost, none doubled."""
    settings.USAGE_ROLLUP_MAX_HOURS = 24 * 5
    s = make_scenario(org)
    usage_rollup()

    def snapshot():
        return (sorted(UsageHour.objects.values_list("hour", "workload_id", "gpu_hours", "gpu_used_hours")),
                sorted(UsageDay.objects.values_list("day", "project_id", "user_name", "gpu_hours")))

    first = snapshot()
    usage_hour_roll(hour=s.day + timedelta(hours=2))
    usage_rollup()
    RollupState.objects.update(rolled_until=s.day)  # as if the last run had died after day D began
    usage_rollup()
    assert snapshot() == first


def test_a_run_catches_up_at_most_its_hours_then_goes_on(org, settings):
    settings.USAGE_ROLLUP_MAX_HOURS = 24
    s = make_scenario(org)
    rolled = []
    while (count := usage_rollup()) and len(rolled) < 10:
        rolled.append(count)
        if RollupState.objects.get().rolled_until >= timezone.now().replace(minute=0, second=0, microsecond=0):
            break
    assert rolled[0] == 24
    assert _sum(UsageHour.objects.filter(workload_id=s.train.pk), "gpu_hours") == 7
    assert _sum(UsageDay.objects.all(), "gpu_hours") == 9.5


def test_hourly_rows_older_than_their_window_go_daily_rows_stay(org, settings):
    settings.USAGE_ROLLUP_MAX_HOURS = 24 * 5
    s = make_scenario(org)
    usage_rollup()
    settings.USAGE_HOURLY_RETENTION_DAYS = 2
    usage_rollup()
    assert not UsageHour.objects.filter(hour__lt=s.day + timedelta(days=1)).exists()
    assert _sum(UsageDay.objects.filter(day=s.day.date()), "gpu_hours") == 9.5


@pytest.mark.parametrize(("changes", "expected"), [
    ([], 3.0),  # no change recorded: started_at to completed_at
    ([(1, "Creating")], 3.0),  # changes that never held resources: the same
    ([(1, "Running"), (2, "Stopped"), (3, "Running")], 2.0),  # a suspend between
    ([(1, "Initializing"), (1.5, "Running"), (2.5, "Failed")], 1.5),
])
def test_held_intervals(changes, expected):
    t0 = timezone.now().replace(minute=0, second=0, microsecond=0)
    h = lambda n: t0 + timedelta(hours=n)  # noqa: E731
    spans = held_intervals(phases=[(h(n), p) for n, p in changes], allocated=ALLOCATED_PHASES, started_at=h(1),
                           completed_at=h(4), deleted_at=None, now=h(10))
    assert hours_within(spans, h(0), h(10)) == expected
