"""EXPLAIN ANALYZE of every list a member can ask for, at 100,000 workloads, on PostgreSQL.

    python -m bench.explain          # BENCH_DATABASE_URL (default studio_bench on the local server) is recreated

The rows: 100,000 workloads in 100 projects, the oldest 20 in a small project of their own, 5,000 service
profiles (mixed sharing) on 10 template versions. The caller is a member (Editor) of that small project alone,
the case where a plan that walks the newest workloads first and filters them reads the whole table. Each list is
requested through the real API (Django's test client, bearer token); every query it runs is explained, and the
slowest is printed with the plan's scan nodes, so that a sequential scan of a big table shows."""

import json
import re
import uuid

from bench import env, seed

WORKLOADS, PROJECTS, PROFILES, VERSIONS = 100_000, 100, 5_000, 10
SCAN = re.compile(r"(Seq Scan|Index Only Scan|Index Scan|Bitmap Heap Scan|Bitmap Index Scan)(?: Backward)? "
                  r"(?:using (\S+) )?on (\S+)")


def _seed():
    from django.contrib.auth import get_user_model

    from profiles.models import EnvironmentTemplate, ServiceProfile, TemplateVersion
    from studio.models import AccessRule, Role
    from workloads.models import Workload

    admin, cluster, projects = seed.org(projects=PROJECTS)
    small = projects[0]
    spec = {"image": "python:3.11", "command": "python", "args": "-c pass"}

    def rows(project_of, count, start):
        return [Workload(id=uuid.uuid4(), kind="training", name=f"w{start + i}", requested_name=f"w{start + i}",
                         project=project_of(i), department=small.department, cluster=cluster,
                         created_by_name="bench@example.com", spec=spec, actual_phase="Running", running_pods=1,
                         gpu_request=1 if i % 4 == 0 else 0)
                for i in range(count)]

    Workload.objects.bulk_create(rows(lambda i: small, 20, 0), batch_size=1000)  # the oldest, first
    Workload.objects.bulk_create(rows(lambda i: projects[1 + i % (PROJECTS - 1)], WORKLOADS - 20, 20),
                                 batch_size=2000)
    template = EnvironmentTemplate.objects.create(name="bench-template", owner_project=None)
    variables = [{"name": f"v{i}", "type": "string", "default": "x"} for i in range(8)]
    versions = [TemplateVersion.objects.create(template=template, version=f"1.0.{i}", kind="training",
                                               spec_template={"image": "python:3.11"}, variables=variables,
                                               outputs=[], state=TemplateVersion.State.ACTIVE)
                for i in range(VERSIONS)]
    ServiceProfile.objects.bulk_create([
        ServiceProfile(name=f"profile-{i}", template_version=versions[i % VERSIONS], service_type="training",
                       sharing_mode=["all", "selected", "none"][i % 3], owner_project=projects[i % PROJECTS])
        for i in range(PROFILES)], batch_size=1000)
    member = get_user_model().objects.create_user("member", "member@example.com", "bench-password-1")
    AccessRule.objects.create(subject_type="user", subject_id=member.username, user=member,
                              role=Role.objects.get(name="Editor"), scope_type="project", scope_id=str(small.pk),
                              project=small)
    seed.analyze()
    workload = Workload.objects.filter(project=small).first()
    return member, small, workload


def _explain(sql: str) -> tuple[float, list[str]]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql)
        plan = cursor.fetchone()[0]
    plan = plan if isinstance(plan, list) else json.loads(plan)
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN ANALYZE " + sql)
        text = [row[0] for row in cursor.fetchall()]
    scans = sorted({" ".join(filter(None, m.groups())) for line in text for m in [SCAN.search(line)] if m})
    return plan[0]["Execution Time"], scans


def run() -> list[dict]:
    env.recreate_database()
    env.setup_django()
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    member, small, workload = _seed()
    client = Client(HTTP_AUTHORIZATION=f"Bearer {seed.token(member)}", HTTP_HOST="127.0.0.1")
    lists = {
        "workloads": "/api/v1/workloads?limit=100",
        "workloads, sorted by name": "/api/v1/workloads?limit=100&sortBy=name",
        "workloads, filtered by phase": "/api/v1/workloads?limit=100&filterBy=phase==Running",
        "workloads count": "/api/v1/workloads/count",
        "pods of a workload": f"/api/v1/workloads/{workload.pk}/pods",
        "events of a workload": f"/api/v1/workloads/{workload.pk}/events",
        "catalog": f"/api/v1/catalog?projectId={small.pk}&limit=100",
        "service profiles": "/api/v1/service-profiles?limit=100",
        "environment templates": "/api/v1/environment-templates?limit=100",
        "projects": "/api/v1/org-unit/projects",
    }
    results = []
    for label, url in lists.items():
        with CaptureQueriesContext(connection) as captured:
            status = client.get(url).status_code
        explained = [(*_explain(q["sql"]), q["sql"]) for q in captured if q["sql"].lstrip().startswith("SELECT")]
        slowest = max(explained, default=(0.0, [], ""))
        results.append({"list": label, "url": url, "status": status, "queries": len(captured),
                        "total_ms": sum(e[0] for e in explained), "slowest_ms": slowest[0], "scans": slowest[1]})
    return results


def main() -> int:
    results = run()
    print(f"| List ({WORKLOADS:,} workloads, {PROFILES:,} profiles; a member of one 20-workload project) "
          "| Status | Queries | SQL time (all / slowest) | Scans of the slowest |")
    print("|---|---|---|---|---|")
    for r in results:
        print(f"| {r['list']} | {r['status']} | {r['queries']} | {r['total_ms']:.2f} / {r['slowest_ms']:.2f} ms "
              f"| {'; '.join(r['scans'])} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
