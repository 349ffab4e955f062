"""The usage pages over HTTP: the GPU trend cards (every range, every scope, who sees what), the Usage page's
GPU-hours and cost per project, and the Reports page (request, list, download, delete; platform admins only)."""

import json
import re
from datetime import timedelta

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from studio.models import NodePool
from tests.factories import ProjectFactory, usage_history
from tests.usage.scenario import make_scenario
from tests.workloads.cluster_support import make_workload
from usage import tasks
from usage.models import NodePoolPrice, Report, UsageDay, UsageHour, UsageUnitHour
from workloads.models import MetricSample, Workload

pytestmark = pytest.mark.django_db


def client_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def chart(response) -> dict:
    """The JSON the trend card carries for its chart."""
    html = response.content.decode()
    match = re.search(r'<script id="[^"]+" type="application/json">(.*?)</script>', html, re.S)
    assert match, html
    return json.loads(match.group(1))


@pytest.fixture
def history(org):
    NodePool.objects.get_or_create(cluster=org.cluster, name="default", defaults={"is_default": True})
    usage_history(org.a, hours=24 * 8)  # alpha: 2 GPUs (1 every other hour), half busy
    usage_history(org.b, hours=24, gpus=4.0, busy=0.25, user_name="dave@example.com")
    return org


def test_the_trend_of_a_project_over_each_range(history):
    client = client_of(history.users.member)
    url = reverse("usage-trend-project", args=[history.a.pk])
    expected_points = {"24h": 24, "7d": 24 * 7, "30d": 30}
    for range_key, points in expected_points.items():
        response = client.get(url, {"range": range_key})
        assert response.status_code == 200
        data = chart(response)
        assert data["range"] == range_key and len(data["labels"]) == points
        assert [s["key"] for s in data["series"]] == ["allocated", "used", "idle"]
        allocated, used, idle = (s["values"] for s in data["series"])
        if range_key != "30d":
            assert max(allocated) == 2.0 and 0.0 in allocated  # every sixth hour held nothing
        else:  # a day's point: its GPU-hours ÷ 24; alpha's history is 8 days long
            held = sum(r.gpu_hours for r in UsageHour.objects.filter(project_id=history.a.pk))
            assert abs(sum(allocated) * 24 - held) < 0.1 and allocated[:21] == [0.0] * 21
        assert all(abs(u + i - a) < 0.002 for a, u, i in zip(allocated, used, idle, strict=True))
    # 24 h: 20 rows of the last 24 hours (every sixth missing), alternately 2 and 1 GPU-hours
    response = client.get(url, {"range": "24h"})
    rows = [n for n in range(1, 25) if n % 6]
    allocated = sum(2.0 if n % 2 else 1.0 for n in rows)
    html = response.content.decode()
    assert f'data-total="allocated">{allocated:g}<' in html
    assert f'data-total="idle">{allocated / 2:g}<' in html
    assert 'aria-pressed="true" hx-get="' + url + '?range=24h"' in html


def test_nothing_measured_draws_no_used_or_idle_series_and_nothing_held_no_chart(org):
    NodePool.objects.get_or_create(cluster=org.cluster, name="default", defaults={"is_default": True})
    usage_history(org.a, hours=24)
    for rows in (UsageHour, UsageUnitHour, UsageDay):
        rows.objects.update(gpu_measured_hours=0, gpu_used_hours=0)
    client = client_of(org.users.platform_admin)
    data = chart(client.get(reverse("usage-trend-project", args=[org.a.pk]), {"range": "24h"}))
    assert [s["key"] for s in data["series"]] == ["allocated"]
    response = client.get(reverse("usage-trend-project", args=[org.b.pk]), {"range": "7d"})
    assert b'data-testid="trend-empty"' in response.content and b"<canvas" not in response.content


def test_the_last_hour_comes_from_the_running_workloads_in_five_minute_steps(org):
    now = timezone.now()
    workload = make_workload(org.a, "live", compute={"gpuDevicesRequest": 2})
    Workload.objects.filter(pk=workload.pk).update(actual_phase="Running", created_at=now - timedelta(hours=3),
                                                   started_at=now - timedelta(hours=2),
                                                   phase_updated_at=now - timedelta(hours=2))
    for minutes in range(2, 60, 5):
        MetricSample.objects.create(workload=workload, type="GPU_UTILIZATION", value=25.0,
                                    timestamp=now - timedelta(minutes=minutes))
    data = chart(client_of(org.users.member).get(reverse("usage-trend-project", args=[org.a.pk]), {"range": "1h"}))
    allocated, used, idle = (s["values"] for s in data["series"])
    assert len(data["labels"]) == 12 and allocated == [2.0] * 12
    assert used[1:] == [0.5] * 11 and idle[1:] == [1.5] * 11


def test_each_scope_and_who_sees_it(history, django_assert_max_num_queries):
    member, other, admin = history.users.member, history.users.other, history.users.platform_admin
    pool_url = reverse("usage-trend-pool", args=[history.cluster.pk, "default"])
    overview = reverse("usage-trend-overview")
    department = reverse("usage-trend-department", args=[history.department.pk])

    def total(user, url):
        data = chart(client_of(user).get(url, {"range": "24h"}))
        return round(sum(data["series"][0]["values"]), 3)

    alpha = sum(2.0 if n % 2 else 1.0 for n in range(1, 25) if n % 6)
    beta = sum(4.0 if n % 2 else 2.0 for n in range(1, 25) if n % 6)
    assert total(admin, overview) == total(admin, pool_url) == total(admin, department) == alpha + beta
    # a member of alpha sees alpha's usage only, wherever the trend is
    assert total(member, overview) == total(member, pool_url) == total(member, department) == alpha
    assert b"your projects" in client_of(member).get(overview).content
    assert client_of(member).get(reverse("usage-trend-project", args=[history.b.pk])).status_code == 404
    assert client_of(other).get(reverse("usage-trend-project", args=[history.a.pk])).status_code == 404
    nope = client_of(member).get(reverse("usage-trend-pool", args=[history.cluster.pk, "nope"]))
    assert nope.status_code == 200 and b'data-testid="trend-empty"' in nope.content
    assert client_of(other).get(reverse("usage-trend-pool", args=[history.cluster.pk, "default"])).status_code == 200
    assert client_of(member).get(reverse("usage-trend-department", args=[999999])).status_code == 404
    anonymous = Client().get(overview)
    assert anonymous.status_code == 302
    client = client_of(member)
    for url in (overview, pool_url, department):
        with django_assert_max_num_queries(8):  # session, user, rules; the scope; one read
            client.get(url, {"range": "7d"})


def test_the_pages_load_their_trends(history):
    client = client_of(history.users.member)
    pages = {reverse("gpu-overview"): reverse("usage-trend-overview"),
             reverse("gpu-node-pool", args=[history.cluster.pk, "default"]):
                 reverse("usage-trend-pool", args=[history.cluster.pk, "default"]),
             reverse("project-quota", args=[history.a.pk]): reverse("usage-trend-project", args=[history.a.pk]),
             reverse("quota-overview"): reverse("usage-trend-department", args=[history.department.pk])}
    for page, fragment in pages.items():
        html = client.get(page).content.decode()
        assert f'hx-get="{fragment}"' in html, page


def test_the_usage_page_shows_cost_and_idle_gpu_hours_per_project(org):
    scenario = make_scenario(org)
    from usage.rollup import usage_rollup

    usage_rollup(max_hours=24 * 5)
    assert scenario.day
    response = client_of(org.users.platform_admin).get(reverse("usage"), {"range": "7d"})
    html = response.content.decode()
    alpha = re.search(r'<tr data-project="alpha">(.*?)</tr>', html, re.S).group(1)
    assert 'data-value="gpu_hours">7<' in alpha and 'data-value="used_hours">3<' in alpha
    assert "1 idle" in alpha and 'data-value="unmeasured_hours">3<' in alpha
    assert "15.68 USD" in alpha and 'data-value="idle_cost">2.00 USD' in alpha
    beta = re.search(r'<tr data-project="beta">(.*?)</tr>', html, re.S).group(1)
    assert 'data-value="gpu_hours">2.50<' in beta and "10.00 USD" in beta
    # bob (alpha) sees alpha only; dave (beta) beta only
    member_html = client_of(org.users.member).get(reverse("usage"), {"range": "7d"}).content.decode()
    assert 'data-project="alpha"' in member_html and 'data-project="beta"' not in member_html
    assert 'data-project="alpha"' not in client_of(org.users.other).get(reverse("usage"), {"range": "7d"}).content.decode()


def test_the_usage_page_groups_by_department_and_by_user(org):
    make_scenario(org)
    from usage.rollup import usage_rollup

    usage_rollup(max_hours=24 * 5)
    admin = client_of(org.users.platform_admin)
    html = admin.get(reverse("usage"), {"range": "7d", "by": "department"}).content.decode()
    department = re.search(rf'<tr data-department="{org.department.name}">(.*?)</tr>', html, re.S).group(1)
    assert 'data-value="gpu_hours">9.50<' in department and "25.68 USD" in department  # alpha's 7 + beta's 2.5
    html = admin.get(reverse("usage"), {"range": "7d", "by": "user"}).content.decode()
    bob = re.search(rf'<tr data-user="{org.users.member.email}">(.*?)</tr>', html, re.S).group(1)
    assert 'data-value="gpu_hours">7<' in bob and "15.68 USD" in bob
    assert f'data-user="{org.users.other.email}"' in html
    # a member's users are those of the projects they see
    mine = client_of(org.users.member).get(reverse("usage"), {"range": "7d", "by": "user"}).content.decode()
    assert f'data-user="{org.users.member.email}"' in mine and f'data-user="{org.users.other.email}"' not in mine
    assert client_of(org.users.member).get(reverse("usage"), {"by": "nonsense"}).status_code == 200  # per project


def test_reports_request_list_download_delete(org, django_assert_max_num_queries):
    make_scenario(org)
    from usage.rollup import usage_rollup

    usage_rollup(max_hours=24 * 5)
    client = client_of(org.users.platform_admin)
    start = (timezone.now() - timedelta(days=6)).strftime("%Y-%m-%dT%H:00")
    end = timezone.now().strftime("%Y-%m-%dT%H:00")
    response = client.post(reverse("usage-reports"), {"name": "week", "start": start, "end": end,
                                                      "group_by": "Project", "projects": ["alpha"]})
    assert response.status_code == 302
    report = Report.objects.get(name="week")
    assert report.filter_by == ["projectName==alpha"] and report.group_by == "Project"
    assert report.status == Report.Status.PENDING
    html = client.get(reverse("usage-reports")).content.decode()
    assert 'data-status="Pending"' in html and 'hx-trigger="every 2s"' in html
    assert client.get(reverse("usage-report-download", args=[report.pk])).status_code == 409
    tasks.report_produce(str(report.pk))  # what the worker does
    html = client.get(reverse("usage-reports")).content.decode()
    assert 'data-status="Ready"' in html and 'hx-trigger="every 2s"' not in html
    download = client.get(reverse("usage-report-download", args=[report.pk]))
    assert download.status_code == 200 and download["Content-Type"].startswith("text/csv")
    lines = download.content.decode().splitlines()
    assert lines[0].startswith("date,project_id,project,department,user,gpu_allocation_hours")
    assert len(lines) == 2 and ",alpha,research," in lines[1] and ",15.68" in lines[1]
    for n in range(5):
        Report.objects.create(name=f"old{n}", start=report.start, end=report.end, created_by_name="root",
                              status_updated_at=timezone.now())
    with django_assert_max_num_queries(12):
        assert client.get(reverse("usage-reports")).status_code == 200
    response = client.post(reverse("usage-report-delete", args=[report.pk]))
    assert response.status_code == 302 and not Report.objects.filter(pk=report.pk).exists()


def test_a_bad_report_request_names_each_problem(org):
    client = client_of(org.users.platform_admin)
    response = client.post(reverse("usage-reports"), {"name": "", "start": "yesterday", "end": "2026-01-01T00:00"})
    assert response.status_code == 400
    html = response.content.decode()
    assert html.count('role="alert"') >= 2 and "Enter a valid date/time." in html and "This field is required." in html
    response = client.post(reverse("usage-reports"), {"name": "backwards", "start": "2026-01-02T00:00",
                                                      "end": "2026-01-01T00:00"})
    assert response.status_code == 400 and "Must be after start." in response.content.decode()
    assert not Report.objects.exists()


def test_only_platform_admins_use_the_reports_page(org):
    report = Report.objects.create(name="r", start=timezone.now() - timedelta(days=1), end=timezone.now(),
                                   created_by_name="root", status="Ready", csv="date\n",
                                   status_updated_at=timezone.now())
    for user in (org.users.admin, org.users.member, org.users.viewer):
        client = client_of(user)
        assert client.get(reverse("usage-reports")).status_code == 403
        assert client.post(reverse("usage-reports"), {"name": "x", "start": "2026-01-01T00:00",
                                                      "end": "2026-01-02T00:00"}).status_code == 403
        assert client.get(reverse("usage-report-download", args=[report.pk])).status_code == 403
        assert client.post(reverse("usage-report-delete", args=[report.pk])).status_code == 403
    assert Report.objects.count() == 1
    nav = client_of(org.users.member).get(reverse("home")).content.decode()
    assert reverse("usage") in nav and reverse("usage-reports") not in nav
    assert reverse("usage-reports") in client_of(org.users.platform_admin).get(reverse("home")).content.decode()


def test_prices_of_another_project_do_not_leak(org):
    """A project made since with the same name as a deleted one: the page counts the ids it may see."""
    NodePool.objects.get_or_create(cluster=org.cluster, name="default", defaults={"is_default": True})
    NodePoolPrice.objects.create(node_pool=NodePool.objects.get(cluster=org.cluster, name="default"), gpu_hour=1)
    ghost = ProjectFactory(name="ghost", department=org.department, cluster=org.cluster)
    usage_history(ghost, hours=5)
    html = client_of(org.users.member).get(reverse("usage")).content.decode()
    assert 'data-project="ghost"' not in html and "No usage recorded" in html


def test_the_usage_page_reads_a_fixed_number_of_queries(org, django_assert_max_num_queries):
    NodePool.objects.get_or_create(cluster=org.cluster, name="default", defaults={"is_default": True})
    client = client_of(org.users.platform_admin)  # sees every project: the list grows
    counts = []
    for n in range(2):
        for _ in range(3):
            project = ProjectFactory(department=org.department, cluster=org.cluster)
            usage_history(project, hours=30)
        usage_history(org.a, hours=30, user_name=f"user{n}@example.com")
        with django_assert_max_num_queries(12) as captured:
            response = client.get(reverse("usage"), {"range": "7d"})
        assert response.content.decode().count("<tr data-project=") == 1 + 3 * (n + 1)
        counts.append(len(captured))
    assert counts[0] == counts[1]
