"""Usage history at 1,000, 10,000 and 100,000 workloads, each with a year of history: a department's 30-day usage
(its metrics over time and its overtimeData) and a year-long report request, as CPU in process ÷ the bare view's,
measured in turns in the same process (bench.scaling.interleaved); and the worker's time to make that report.

The history is what the roll-up would have written for a year in which the organisation ran N workloads: the daily
rows (one per day, pool, project and user that ran something: 2 pools × 20 projects × 5 users, every day) and the
hourly rows of the last USAGE_HOURLY_RETENTION_DAYS, one per workload and hour it held GPUs — each workload ran 24
hours somewhere in the year, so about N × 35 / 365 of them fall in the window — and those hours summed per unit
and user. Written by PostgreSQL itself (INSERT … SELECT over generate_series)."""

import json
import time
import uuid
from datetime import timedelta

from bench import env, seed
from bench.scaling import interleaved

SIZES = (1_000, 10_000, 100_000)
PROJECTS, USERS, POOLS = 20, 5, ("default", "a100")
PATHS = ("bare view (the floor)", "department 30-day usage (metrics over time)",
         "department with its overtimeData", "year-long report request (POST)")


def _seed(workloads: int):
    from django.conf import settings
    from django.db import connection

    from workloads.models import Workload

    admin, cluster, projects = seed.org(projects=PROJECTS)
    department = projects[0].department
    spec = {"image": "python:3.11", "command": "python", "args": "-c pass"}
    for start in range(0, workloads, 5_000):
        Workload.objects.bulk_create([
            Workload(id=uuid.uuid4(), kind="training", name=f"w{i}", requested_name=f"w{i}",
                     project=projects[i % PROJECTS], department=department, cluster=cluster,
                     created_by_name=f"user{i % USERS}@example.com", spec=spec, actual_phase="Completed",
                     gpu_request=1)
            for i in range(start, min(start + 5_000, workloads))])
    window_days = settings.USAGE_HOURLY_RETENTION_DAYS
    in_window = max(1, workloads * window_days // 365)
    units = [(p.pk, p.name) for p in projects]
    with connection.cursor() as cursor:
        # a year of daily rows: every day, pool, project and user
        cursor.execute(
            """INSERT INTO usage_usageday (day, cluster_id, node_pool, project_id, project_name, department_id,
                 department_name, user_name, gpu_hours, gpu_measured_hours, gpu_used_hours, cpu_core_hours,
                 cpu_used_core_hours, memory_gib_hours, memory_used_gib_hours)
               SELECT (now() AT TIME ZONE 'UTC')::date - d, %s, pool, p.id, p.name, %s, %s, 'user' || u || '@example.com',
                      24 * %s, 20 * %s, 12 * %s, 96, 40, 384, 200
               FROM generate_series(1, 365) d, unnest(%s::text[]) pool,
                    unnest(%s::bigint[], %s::text[]) AS p(id, name), generate_series(0, %s) u""",
            [cluster.pk, department.pk, department.name, workloads / 10_000, workloads / 10_000, workloads / 10_000,
             list(POOLS), [u[0] for u in units], [u[1] for u in units], USERS - 1])
        # the hourly window: `in_window` workloads, 24 hours each, spread over the window
        cursor.execute(
            """INSERT INTO usage_usagehour (hour, workload_id, workload_name, cluster_id, node_pool, project_id,
                 project_name, department_id, department_name, user_name, gpu_hours, gpu_measured_hours,
                 gpu_used_hours, cpu_core_hours, cpu_used_core_hours, memory_gib_hours, memory_used_gib_hours)
               SELECT date_trunc('hour', now()) - make_interval(hours => ((w.n * 7919) %% (%s * 24 - 24) + h + 2)::int),
                      w.id, w.name, %s, CASE WHEN w.n %% 2 = 0 THEN 'default' ELSE 'a100' END, w.project_id,
                      'bench' || (w.n %% %s), %s, %s, w.created_by_name, 1, 1, 0.6, 4, 2, 16, 8
               FROM (SELECT id, name, project_id, created_by_name, row_number() OVER () AS n
                     FROM workloads_workload LIMIT %s) w, generate_series(0, 23) h""",
            [window_days, cluster.pk, PROJECTS, department.pk, department.name, in_window])
        cursor.execute(  # their sums per hour, unit and user, as the roll-up writes them beside
            """INSERT INTO usage_usageunithour (hour, cluster_id, node_pool, project_id, project_name, department_id,
                 department_name, user_name, gpu_hours, gpu_measured_hours, gpu_used_hours, cpu_core_hours,
                 cpu_used_core_hours, memory_gib_hours, memory_used_gib_hours)
               SELECT hour, cluster_id, node_pool, project_id, max(project_name), department_id, max(department_name),
                      user_name, sum(gpu_hours), sum(gpu_measured_hours), sum(gpu_used_hours), sum(cpu_core_hours),
                      sum(cpu_used_core_hours), sum(memory_gib_hours), sum(memory_used_gib_hours)
               FROM usage_usagehour GROUP BY hour, cluster_id, node_pool, project_id, department_id, user_name""")
        cursor.execute("INSERT INTO usage_rollupstate (rolled_until) VALUES (date_trunc('hour', now()))")
    seed.analyze()
    return admin, department


def _measure(workloads: int) -> dict:
    env.recreate_database()
    env.setup_django()
    from django.test import Client, override_settings
    from django.utils import timezone

    from usage.models import Report
    from usage.services import report_produce

    admin, department = _seed(workloads)
    api = Client(HTTP_AUTHORIZATION=f"Bearer {seed.token(admin)}", HTTP_HOST="127.0.0.1")
    now = timezone.now()
    month = {"metricType": "GPU_ALLOCATION,CPU_ALLOCATION_MILLICORES", "start": (now - timedelta(days=30)).isoformat(),
             "end": now.isoformat(), "numberOfSamples": 30}
    year = {"name": "bench-year", "start": (now - timedelta(days=365)).isoformat().replace("+00:00", "Z"),
            "end": now.isoformat().replace("+00:00", "Z"), "groupBy": "Project"}

    def get(client, url, query=None):
        def call():
            response = client.get(url, query or {})
            assert response.status_code == 200, (url, response.status_code, response.content[:300])
        return call

    def request_report():
        response = api.post("/api/v1/org-unit/reports", json.dumps(year), content_type="application/json")
        assert response.status_code == 202, response.content[:300]

    calls = {PATHS[0]: (get(Client(HTTP_HOST="127.0.0.1"), "/bench/bare-workloads"), 200),
             PATHS[1]: (get(api, f"/api/v1/org-unit/departments/{department.pk}/metrics", month), 100),
             PATHS[2]: (get(api, f"/api/v1/org-unit/departments/{department.pk}"), 100),
             PATHS[3]: (request_report, 100)}
    with override_settings(ROOT_URLCONF="bench.urls"):
        figures = interleaved(calls)
    report = Report.objects.first()
    cpu, wall = time.process_time(), time.perf_counter()
    produced = report_produce(report_id=report.pk)
    figures["year-long report, made by the worker"] = ((time.process_time() - cpu) * 1000,
                                                       (time.perf_counter() - wall) * 1000)
    assert produced.status == Report.Status.READY, produced.status_message
    figures["report lines"] = produced.csv.count("\n") - 1
    return figures


def run() -> dict:
    return {size: _measure(size) for size in SIZES}


if __name__ == "__main__":
    for size, figures in run().items():
        print(size, {k: v if isinstance(v, int) else f"{v[0]:.1f} / {v[1]:.1f} ms" for k, v in figures.items()})
