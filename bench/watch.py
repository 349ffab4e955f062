"""The cluster loop at 10,000 and 100,000 workloads: the watcher (`manage.py cluster_watch`, a process of its own,
its CPU read from /proc) against the simulated cluster, with gunicorn serving the API.

For each size: the first full pass, beside its floor (`bench.list_floor`: the same Jobs and pods read by the
official client, decoded or not, and nothing done with them); the loop's CPU while nothing changes (as a share of
one core, over IDLE_SECONDS after the SETTLE_SECONDS that follow the first pass, measured apart); a change on the
cluster (a Job given a deadline already past, through the cluster's API: its controller fails it and deletes its
pod) → the phase seen by GET /api/v1/workloads/{id}, p50 / p99 over CHANGES changes one after another; a burst of
BURST such changes at once → every one written; and the requests per second the product sends the cluster API
meanwhile. (A change the product would repair, such as a Job suspended behind its back, would time the repair's
tasks as well.) Then, for comparison, one round of the sync as it
ran before the watch (LIST every kind, derive every workload), which beat ran every SYNC_INTERVAL_SECONDS."""

import contextlib
import json
import os
import re
import time
import urllib.request
from datetime import timedelta
from pathlib import Path

from bench import env, list_floor, seed
from bench.sim_process import SimProcess

SIZES = (10_000, 100_000)
NAMESPACES = 20
IDLE_SECONDS = int(os.environ.get("BENCH_WATCH_IDLE_SECONDS", 60))
SETTLE_SECONDS = 30
CHANGES = int(os.environ.get("BENCH_WATCH_CHANGES", 100))
BURST = int(os.environ.get("BENCH_WATCH_BURST", 10_000))
ROUND_INTERVAL = 5.0  # SYNC_INTERVAL_SECONDS of the rounds before the watch
TICK = os.sysconf("SC_CLK_TCK")
NODES = 200


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def _rss_mib(pid: int, field: str = "VmRSS") -> float:
    """The process's resident memory now (VmRSS), or at its peak (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _quiet_rss_mib(pid: int, timeout: float = 30.0) -> float:
    """The process's resident memory once a second of it used under 5% of a core (or after `timeout`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        cpu = _cpu_seconds(pid)
        time.sleep(1.0)
        if _cpu_seconds(pid) - cpu < 0.05:
            break
    return _rss_mib(pid)


def _requests(sim) -> int:
    return sim.call("requests")


def _job_names(workloads) -> list[tuple[str, str]]:
    from workloads import manifests
    from workloads.cluster.push import workload_ref

    return [(w.project.namespace, manifests.object_name(workload_ref(w))) for w in workloads]


def _seed_cluster(sim, rows) -> None:
    """Namespaces and a Job per workload, written into the simulated cluster's store (as its API handler would),
    in batches."""
    from workloads import manifests
    from workloads.cluster.push import workload_ref

    sim.call("create", [("v1", "Namespace", None, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
                        for ns in sorted({w.project.namespace for w in rows})])
    for start in range(0, len(rows), 2000):
        sim.call("create", [("batch/v1", "Job", w.project.namespace,
                             manifests.build_manifests(workload_ref(w), w.spec, knative=False)[-1])
                            for w in rows[start:start + 2000]])


def _running_pods(sim) -> int:
    return sim.call("count", "pods", ("status", "phase"), "Running")


DEADLINE_PASSED = json.dumps({"spec": {"activeDeadlineSeconds": 1}}).encode()  # started long ago: Failed at once


def _fail_jobs(sim, workloads) -> None:
    """The burst: each Job's status gets the Failed condition its controller gives a Job past its deadline,
    written into the simulated cluster's store as the controller would (the API's PATCH path would time the
    simulator rather than the product). Its controller then deletes the pods."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    failed = {"type": "Failed", "status": "True", "reason": "DeadlineExceeded", "lastProbeTime": stamp,
              "lastTransitionTime": stamp, "message": "Job was active longer than specified deadline"}
    sim.call("condition", "batch/v1", "Job", _job_names(workloads), failed)


def _phase(base: str, token: str, workload_id) -> str:
    request = urllib.request.Request(f"{base}/api/v1/workloads/{workload_id}",
                                     headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)["phase"]


def _wait_for_log(path: Path, pattern: str, timeout: float) -> re.Match:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = re.search(pattern, path.read_text(errors="replace")) if path.exists() else None
        if found:
            return found
        time.sleep(0.5)
    raise TimeoutError(f"no {pattern!r} in {path} after {timeout:.0f}s")


def _derived(log: Path) -> int:
    """Workloads the watcher's passes derived so far (its DEBUG lines)."""
    return sum(int(n) for n in re.findall(r"(\d+) workloads derived", log.read_text(errors="replace")))


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _measure(size: int) -> dict:
    env.recreate_database()
    env.setup_django()
    from django.db import connection
    from django.utils import timezone

    from workloads.models import Workload

    # A node runs 110 pods unless told otherwise, as kubelet's --max-pods: at 100,000 workloads the 200 nodes
    # take more each, so that every workload's pod runs (the scheduler's cost grows with the nodes, not this).
    sim = SimProcess(nodes=NODES, node_resources={"pods": str(max(110, -(-size // NODES) + 10))}, gpus_per_node=8,
                     knative=False, kubeflow=False, token="kubesim-token", pull_seconds=0, run_seconds=360000,
                     tick=0.5, history=50_000, port=env.free_port())
    try:
        user, cluster, projects = seed.org(cluster_url=sim.url, projects=NAMESPACES)
        rows = seed.workloads(projects, cluster, size, phase="Running")
        now = timezone.now()
        # Running for a while: no row's intent changed within the repair grace, which would make the watcher check
        # it for repairs once the grace has passed (a fresh submission's check, not the steady state measured).
        Workload.objects.update(submitted_at=now, started_at=now, updated_at=now - timedelta(hours=1))
        rows = list(Workload.objects.select_related("project").order_by("pk"))
        started = time.monotonic()
        _seed_cluster(sim, rows)
        sim.wait_for(lambda: _running_pods(sim) >= size, timeout=3600, what="running pod for every Job")
        seeding = time.monotonic() - started
        seed.analyze()
        token = seed.token(user)
        connection.close()
        result = {"size": size, "seeding_seconds": seeding}
        # The floor: the same cluster's Jobs and pods read by the official client, nothing done with them (its
        # time is not the first pass's).
        floor_began = time.monotonic()
        wire = list_floor.raw_lists(sim.url, "kubesim-token", decode=False)
        decoded = list_floor.raw_lists(sim.url, "kubesim-token")
        assert decoded["count"] == 2 * size and wire["pages"] == decoded["pages"], (wire, decoded)
        result.update(floor_wire_seconds=wire["seconds"], floor_wire_mib=wire["count"] / 2**20,
                      floor_list_seconds=decoded["seconds"], floor_list_cpu_seconds=decoded["cpu_seconds"])
        floored = time.monotonic() - floor_began
        port = env.free_port()
        base = f"http://127.0.0.1:{port}"
        log = env.ROOT / "var" / "bench-watcher.log"
        watcher_env = env.environment(LOG_LEVEL="DEBUG", LOG_FORMAT="console")
        profile = os.environ.get("BENCH_WATCH_PROFILE")
        stack = contextlib.ExitStack()
        command = [env.PY, "-m", "bench.profile_watcher", profile] if profile else [env.PY, "manage.py", "cluster_watch"]
        with env.gunicorn(port), stack:
            launched = time.monotonic()  # the watcher's own start: first_pass_seconds counts gunicorn's as well
            watcher = stack.enter_context(env.process(command, env=watcher_env, log="watcher"))
            pass_line = _wait_for_log(log, r"full pass over (\d+) workloads", timeout=1800)
            result["first_pass_seconds"] = time.monotonic() - started - seeding - floored
            result["first_pass_from_start_seconds"] = time.monotonic() - launched
            assert int(pass_line.group(1)) == size, pass_line.group(0)
            result["watcher_rss_after_pass_mib"] = _rss_mib(watcher.pid)
            # The first pass's writes settle and the collector meets what the pass made (it runs with the
            # collector paused): measured apart from the idle figure.
            settled = _idle(sim, watcher.pid, SETTLE_SECONDS)
            result["settle_cpu_share"] = settled["idle_cpu_share"]
            result.update(_idle(sim, watcher.pid, IDLE_SECONDS))
            result.update(_latency(sim, base, token, rows[:CHANGES]))
            derived_before = _derived(log)
            result.update(_burst(sim, watcher.pid, rows[CHANGES:CHANGES + BURST]))
            result["burst_derived"] = _derived(log) - derived_before
            # The moment the burst's last phase is written, its pass may still be finishing (the messages after its
            # commit, the memory it frees given back): that figure, then the process's once it is quiet again.
            result["watcher_rss_at_burst_end_mib"] = _rss_mib(watcher.pid)
            result["watcher_rss_mib"] = _quiet_rss_mib(watcher.pid)
            result["watcher_peak_rss_mib"] = _rss_mib(watcher.pid, "VmHWM")
            stack.close()  # the watcher stopped: its lease freed with its database session
        result.update(_restart(size, command, watcher_env))
        if not os.environ.get("BENCH_WATCH_NO_ROUND"):
            result.update(_round(sim, cluster))
        return result
    finally:
        sim.stop()


def _restart(size: int, command: list, watcher_env: dict) -> dict:
    """A watcher started again on the installation the first one followed (a deploy, a standby taking over): the rows
    and pods it wrote are there, its store is empty. From its start to the end of its first pass."""
    log = env.ROOT / "var" / "bench-watcher-restart.log"
    launched = time.monotonic()
    with env.process(command, env=watcher_env, log="watcher-restart") as watcher:
        pass_line = _wait_for_log(log, r"full pass over (\d+) workloads", timeout=1800)
        seconds = time.monotonic() - launched
        assert int(pass_line.group(1)) == size, pass_line.group(0)
        return {"restart_first_pass_seconds": seconds, "restart_rss_after_pass_mib": _rss_mib(watcher.pid)}


def _idle(sim, pid: int, seconds: float) -> dict:
    requests, cpu, wall = _requests(sim), _cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    seconds = time.monotonic() - wall
    return {"idle_cpu_share": (_cpu_seconds(pid) - cpu) / seconds, "idle_rps": (_requests(sim) - requests) / seconds,
            "idle_seconds": seconds}


def _latency(sim, base: str, token: str, workloads: list) -> dict:
    """Each change alone: the Job's deadline set through the cluster's HTTP API, then the workload's phase polled
    through the product's API every 20 ms until it is no longer Running."""
    from workloads import manifests
    from workloads.cluster.push import workload_ref

    seconds = []
    for workload in workloads:
        path = (f"{sim.url}/apis/batch/v1/namespaces/{workload.project.namespace}/jobs/"
                f"{manifests.object_name(workload_ref(workload))}")
        request = urllib.request.Request(path, method="PATCH", data=DEADLINE_PASSED,
                                         headers={"Authorization": "Bearer kubesim-token",
                                                  "Content-Type": "application/merge-patch+json"})
        began = time.monotonic()
        urllib.request.urlopen(request, timeout=10).close()
        while _phase(base, token, workload.pk) == "Running":
            if time.monotonic() - began > 60:
                raise TimeoutError(f"workload {workload.pk} still Running 60 s after its change")
            time.sleep(0.02)
        seconds.append(time.monotonic() - began)
        time.sleep(0.05)
    return {"latency_p50": _percentile(seconds, 0.5), "latency_p99": _percentile(seconds, 0.99),
            "latency_max": max(seconds)}


def _burst(sim, pid: int, workloads: list) -> dict:
    from django.db import connection

    from workloads.models import Workload

    ids = [w.pk for w in workloads]
    requests, cpu = _requests(sim), _cpu_seconds(pid)
    began = time.monotonic()
    _fail_jobs(sim, workloads)
    applied_on_cluster = time.monotonic() - began
    while True:
        still = sum(Workload.objects.filter(pk__in=ids[i:i + 5000], actual_phase="Running").count()
                    for i in range(0, len(ids), 5000))
        if not still:
            break
        if time.monotonic() - began > 300:
            raise TimeoutError(f"{still} of the burst still Running after 300 s")
        time.sleep(0.25)
    seconds = time.monotonic() - began
    connection.close()
    return {"burst_seconds": seconds, "burst_on_cluster_seconds": applied_on_cluster,
            "burst_rps": (_requests(sim) - requests) / seconds, "burst_cpu_seconds": _cpu_seconds(pid) - cpu}


def _round(sim, cluster) -> dict:
    """One sync round as beat ran it before the watch (the watcher is gone: its lease with it)."""
    from workloads.cluster.sync import cluster_sync

    # thread_time: this thread's CPU alone, not that of the simulated cluster serving the lists in this process.
    requests, cpu, wall = _requests(sim), time.thread_time(), time.monotonic()
    report = cluster_sync(cluster.pk)
    assert report is not None, "the round found the cluster held"
    cpu = time.thread_time() - cpu
    return {"round_cpu_seconds": cpu, "round_seconds": time.monotonic() - wall,
            "round_requests": _requests(sim) - requests, "round_cpu_share": cpu / ROUND_INTERVAL,
            "round_rps": (_requests(sim) - requests) / ROUND_INTERVAL}


def run(sizes=SIZES, *, each=None) -> dict:
    """{size: figures}; `each(figures)` is called as each size is measured."""
    measured = {}
    for size in sizes:
        measured[size] = _measure(size)
        if each is not None:
            each(measured[size])
    return measured


if __name__ == "__main__":
    import sys

    run(tuple(int(s) for s in sys.argv[1:]) or SIZES,
        each=lambda figures: print({k: round(v, 4) if isinstance(v, float) else v for k, v in figures.items()},
                                   flush=True))
