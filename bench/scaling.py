"""Scaling: ms per request (CPU in process and wall), in process (Django's test client, no HTTP), at 1k, 10k and 100k workloads (100, 1,000
and 5,000 service profiles), for the paths whose cost must not grow with history: the workload list, a submission
with and without a GPU, the catalog API and the portal's /catalog page. The caller is an Editor of one of 20
projects, which holds the first 100 workloads (so the list's page is full, 100 rows, at every size) and a
twentieth of the rest; a quarter of the workloads hold a GPU. Rows are written with bulk inserts (5,000 a statement)."""

import gc
import json
import time
import uuid

from bench import env, seed

SIZES = ((1_000, 100), (10_000, 1_000), (100_000, 5_000))
PROJECTS, VERSIONS = 20, 10
PATHS = ("bare view (the floor)", "workload list (limit=100)", "submit, no GPU", "submit, 1 GPU",
         "catalog API (limit=100)", "portal /catalog page")


def _seed(workloads: int, profiles: int):
    from django.contrib.auth import get_user_model

    from profiles.models import EnvironmentTemplate, ServiceProfile, TemplateVersion
    from studio.models import AccessRule, Role
    from workloads.models import Workload

    _, cluster, projects = seed.org(projects=PROJECTS)
    spec = {"image": "python:3.11", "command": "python", "args": "-c pass"}
    for start in range(0, workloads, 5_000):
        Workload.objects.bulk_create([
            Workload(id=uuid.uuid4(), kind="training", name=f"w{i}", requested_name=f"w{i}",
                     project=projects[0] if i < 100 else projects[i % PROJECTS],
                     department=projects[0].department, cluster=cluster,
                     created_by_name="bench@example.com", spec=spec, actual_phase="Running", running_pods=1,
                     gpu_request=1 if i % 4 == 0 else 0)
            for i in range(start, min(start + 5_000, workloads))])
    template = EnvironmentTemplate.objects.create(name="bench-template", owner_project=None)
    versions = [TemplateVersion.objects.create(
        template=template, version=f"1.0.{i}", kind="training", spec_template={"image": "python:3.11"},
        variables=[{"name": f"v{j}", "type": "string", "default": "x"} for j in range(8)], outputs=[],
        state=TemplateVersion.State.ACTIVE) for i in range(VERSIONS)]
    ServiceProfile.objects.bulk_create([
        ServiceProfile(name=f"profile-{i}", template_version=versions[i % VERSIONS], service_type="training",
                       sharing_mode=("all", "selected", "none")[i % 3], owner_project=projects[i % PROJECTS])
        for i in range(profiles)], batch_size=5_000)
    member = get_user_model().objects.create_user("member", "member@example.com", "bench-password-1")
    AccessRule.objects.create(subject_type="user", subject_id=member.username, user=member,
                              role=Role.objects.get(name="Editor"), scope_type="project",
                              scope_id=str(projects[0].pk), project=projects[0])
    seed.analyze()
    return member, cluster, projects[0]


ROUNDS = 5


def interleaved(calls: dict, rounds: int = ROUNDS) -> dict:
    """{path: (CPU in this process, wall) ms per request} for {path: (call, n)}, measured in `rounds` turns: each
    turn runs n / rounds requests of every path in order, each from a collected heap. A drift of the machine's
    speed during the measurement (another process, the CPU's clock) then falls on the floor and on each path alike,
    where paths measured one after the other each took the speed of their own minute (a ratio moved by 0.2 between
    two runs of the same code). CPU is the stable figure on a shared machine; wall adds the database's time and
    every wait for a core."""
    for call, _ in calls.values():
        for _ in range(3):  # warm: the first request of a path compiles templates, fills caches
            call()
    spent = {path: [0.0, 0.0, 0] for path in calls}
    for _ in range(rounds):
        for path, (call, n) in calls.items():
            count = max(1, n // rounds)
            call()  # not counted: it refills what the path before emptied (the cold list clears the kept rows)
            gc.collect()
            cpu, wall = time.process_time(), time.perf_counter()
            for _ in range(count):
                call()
            totals = spent[path]
            totals[0] += time.process_time() - cpu
            totals[1] += time.perf_counter() - wall
            totals[2] += count
    return {path: (cpu / count * 1000, wall / count * 1000) for path, (cpu, wall, count) in spent.items()}


def _measure(workloads: int, profiles: int) -> dict:
    env.recreate_database()
    env.setup_django()
    from django.test import Client, override_settings

    member, cluster, project = _seed(workloads, profiles)
    api = Client(HTTP_AUTHORIZATION=f"Bearer {seed.token(member)}", HTTP_HOST="127.0.0.1")
    portal = Client(HTTP_HOST="127.0.0.1")
    portal.force_login(member)

    def get(client, url):
        def call():
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code, response.content[:300])
        return call

    def submit(gpus):
        def call():
            spec = {"image": "python:3.11", "command": "python", "args": "-c pass"}
            if gpus:
                spec["compute"] = {"gpuDevicesRequest": gpus}
            body = {"name": "bench", "useGivenNameAsPrefix": True, "projectId": str(project.pk),
                    "clusterId": str(cluster.pk), "spec": spec}
            response = api.post("/api/v1/workloads/trainings", json.dumps(body), content_type="application/json")
            assert response.status_code < 300, response.content[:300]
        return call

    # the bare view (bench/urls.py) measured here too, in turns with the paths (`interleaved`): each ratio's floor
    # in the same process, heap, data and minutes
    calls = (get(Client(HTTP_HOST="127.0.0.1"), "/bench/bare-workloads"), get(api, "/api/v1/workloads?limit=100"),
             submit(0), submit(1), get(api, f"/api/v1/catalog?projectId={project.pk}&limit=100"),
             get(portal, "/catalog"))
    counts = (200, 200, 200, 200, 100, 30)  # enough requests that a passing stall on a shared machine is averaged out
    with override_settings(ROOT_URLCONF="bench.urls"):
        return interleaved({path: (call, n) for path, call, n in zip(PATHS, calls, counts, strict=True)})


def run() -> dict:
    return {size: _measure(*size) for size in SIZES}


if __name__ == "__main__":
    for (workloads, profiles), figures in run().items():
        print(workloads, profiles, {k: f"{cpu:.1f} / {wall:.1f} ms" for k, (cpu, wall) in figures.items()})
