"""Catalog: GET /api/v1/catalog over 1,000 service profiles in mixed sharing modes — p99 and query count."""

import random
import subprocess

from bench import env, load, seed

PROFILES = 1_000


def _profiles(projects) -> None:
    from profiles.models import ServiceProfile

    system = list(ServiceProfile.objects.filter(system=True))
    rng = random.Random(7)
    rows = []
    for i in range(PROFILES):
        base = system[i % len(system)]
        mode = ("none", "all", "selected")[i % 3]
        rows.append(ServiceProfile(
            name=f"profile-{i}", display_name=f"Profile {i}", description=base.description,
            template_version=base.template_version, service_type=base.service_type, readme=base.readme,
            readme_html=base.readme_html, inputs=base.inputs, outputs=base.outputs, labels=base.labels,
            owner_project=rng.choice(projects), sharing_mode=mode,
        ))
    made = ServiceProfile.objects.bulk_create(rows, batch_size=500)
    through = ServiceProfile.shared_with.through
    through.objects.bulk_create([
        through(serviceprofile_id=p.pk, project_id=project.pk)
        for p in made if p.sharing_mode == "selected" for project in rng.sample(projects, 3)
    ])


def run() -> dict:
    env.recreate_database()
    subprocess.run([env.PY, "manage.py", "system_profiles"], cwd=env.ROOT, env=env.environment(), check=True,
                   capture_output=True)
    env.setup_django()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from studio.models import AccessRule, Role

    admin, cluster, projects = seed.org(projects=20)
    _profiles(projects)
    seed.analyze()
    member = get_user_model().objects.create_user("member", password="bench-password-1")
    AccessRule.objects.create(subject_type="user", subject_id=member.username, user=member,
                              role=Role.objects.get(name="L1 researcher"), scope_type="project",
                              scope_id=str(projects[0].pk), project=projects[0])
    token = seed.token(member)
    url = f"/api/v1/catalog?projectId={projects[0].pk}&limit=100"
    client = Client(HTTP_HOST="127.0.0.1")
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url, HTTP_AUTHORIZATION=f"Bearer {token}")
    visible = len(response.json()["profiles"])
    port = env.free_port()
    with env.gunicorn(port):
        base = f"http://127.0.0.1:{port}"
        headers = {"Authorization": f"Bearer {token}"}
        load.run(base + url, connections=4, max_requests=100, headers=headers)
        result = load.run(base + url, connections=16, max_requests=2000, max_seconds=30, headers=headers)
    return {"catalog": result, "queries": len(queries.captured_queries), "visible_on_page": visible}
