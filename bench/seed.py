"""Rows the benchmarks need, written in bulk."""

import uuid


def org(*, cluster_url: str = "http://127.0.0.1:1", token: str = "kubesim-token", projects: int = 1):
    from django.contrib.auth import get_user_model

    from studio.models import AccessRule, Cluster, Department, Project, Role

    user = get_user_model().objects.create_user("bench", "bench@example.com", "bench-password-1")
    user.is_superuser = True
    user.save()
    cluster = Cluster.objects.create(name="bench", api_server_url=cluster_url, token=token, verify_tls=False)
    department = Department.objects.create(name="bench")
    made = [
        Project.objects.create(name=f"bench{i}", department=department, cluster=cluster,
                               namespace=Project.namespace_for(f"bench{i}"), gpu_deserved=100000, gpu_limit=100000)
        for i in range(projects)
    ]
    editor = Role.objects.get(name="Editor")
    AccessRule.objects.bulk_create([
        AccessRule(subject_type="user", subject_id=user.username, user=user, role=editor, scope_type="project",
                   scope_id=str(p.pk), project=p)
        for p in made
    ])
    return user, cluster, made


def workloads(projects, cluster, count: int, *, phase: str = "Running"):
    from workloads.models import Workload

    spec = {"image": "python:3.11", "command": "python", "args": "-c pass", "completions": 1, "parallelism": 1,
            "backoffLimit": 6}
    rows = [
        Workload(id=uuid.uuid4(), kind="training", name=f"w{i}", requested_name=f"w{i}",
                 project=projects[i % len(projects)], department=projects[0].department, cluster=cluster,
                 created_by_name="bench@example.com", spec=spec, actual_phase=phase, running_pods=1)
        for i in range(count)
    ]
    Workload.objects.bulk_create(rows, batch_size=1000)
    return rows


def token(user) -> str:
    from studio.iam.auth import issue_token

    return issue_token(user=user)["accessToken"]


def analyze() -> None:
    """The state autovacuum leaves a bulk load in (PostgreSQL 13+ vacuums after inserts too): fresh statistics
    (without them PostgreSQL plans for 11 rows) and the visibility map set, so that index-only scans — the quota
    sum over `workload_gpus_held_by_pool` — read no table pages."""
    from django.db import connection

    with connection.cursor() as cursor:  # autocommit: VACUUM cannot run in a transaction
        cursor.execute("VACUUM ANALYZE")
