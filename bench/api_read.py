"""API read: GET /api/v1/workloads?limit=100 over 10,000 workloads against a bare Django JSON view that reads the
same 100 rows with no authentication, DRF or filters (bench/urls.py): first the CPU each costs in process (Django's
test client, time.process_time over N requests: stable on a shared machine; the three paths in turns, so that the
machine's drift falls on each alike), then both under HTTP load. The list is measured warm (its rows kept by the
process, as for any page read again) and cold (every row rendered)."""

from bench import env, load, seed
from bench.scaling import interleaved

IN_PROCESS = 200

WORKLOADS = 10_000


def run() -> dict:
    env.recreate_database()
    env.setup_django()
    user, cluster, projects = seed.org(projects=20)
    seed.workloads(projects, cluster, WORKLOADS)
    seed.analyze()
    headers = {"Authorization": f"Bearer {seed.token(user)}"}
    from django.test import Client, override_settings

    from workloads.api import list_rows

    with override_settings(ROOT_URLCONF="bench.urls"):
        client = Client(HTTP_HOST="127.0.0.1")

        def listed():
            return client.get("/api/v1/workloads?limit=100", HTTP_AUTHORIZATION=headers["Authorization"])

        def listed_cold():  # every row rendered again, as after a round that changed them all
            list_rows.ROWS.entries.clear()
            return listed()

        figures = interleaved({"bare": (lambda: client.get("/bench/bare-workloads"), IN_PROCESS),
                               "warm": (listed, IN_PROCESS), "cold": (listed_cold, IN_PROCESS)})
        (bare_cpu, _), (api_cpu, _), (cold_cpu, _) = figures["bare"], figures["warm"], figures["cold"]
    port = env.free_port()
    base = f"http://127.0.0.1:{port}"
    with env.gunicorn(port, urlconf="bench.urls"):
        load.run(f"{base}/bench/bare-workloads", connections=4, max_requests=100)  # warm the workers
        load.run(f"{base}/api/v1/workloads?limit=100", connections=4, max_requests=100, headers=headers)
        bare = load.run(f"{base}/bench/bare-workloads", connections=16, max_requests=3000, max_seconds=30)
        api = load.run(f"{base}/api/v1/workloads?limit=100", connections=16, max_requests=3000, max_seconds=30,
                       headers=headers)
    return {"bare": bare, "api": api, "ratio": api.throughput / bare.throughput, "api_cpu": api_cpu,
            "cold_cpu": cold_cpu, "bare_cpu": bare_cpu}
