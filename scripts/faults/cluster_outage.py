"""The shape both cluster-API outages share (kubesim's API answering 503, the real kube-apiserver stopped):
500 submissions under way, the cluster's API gone for a while, its history compacted meanwhile (as etcd does),
then back; every workload must end on the cluster exactly once with its phase, some push must have failed and
retried meanwhile, and the watcher's watches must have resumed into a 410 and listed again, else nothing was
tested."""

import time
from collections.abc import Callable

from scripts.faults.load import Census, Load, converge, recover, report
from scripts.faults.stack import Stack, wait_until


def cluster_outage(stack: Stack, name: str, *, prefix: str, count: int, seconds: float, down: Callable[[], None],
                   up: Callable[[], None], recovery_bound: float, converge_bound: float, min_jobs: int = 0) -> bool:
    """Take the cluster's API `down` once 100 submissions (and `min_jobs` Jobs) are in, bring it `up` after
    `seconds`, and report; `up` returns once the API answers again (the fault has ended)."""
    org = stack.bootstrap()
    load = Load(stack, org, count=count, prefix=prefix).start()
    wait_until(lambda: len(load.accepted) >= 100 and len(Census.take(stack, org).jobs) >= min_jobs, timeout=120,
               what=f"100 accepted submissions and {min_jobs} Jobs")
    on_cluster = len(Census.take(stack, org).jobs)
    down()
    print(f"{name}: cluster API down with {len(load.accepted)} accepted, {on_cluster} on the cluster", flush=True)
    time.sleep(seconds)
    stack.compact_cluster()  # the watches' resourceVersions are now too old: each must list again
    up()
    fault_ended = time.monotonic()
    retries = push_retries(stack)
    print(f"{name}: cluster API back after {seconds}s; {len(load.accepted)} accepted, {retries} push retries "
          "meanwhile", flush=True)
    recovery = recover(stack, load, fault_ended=fault_ended, bound=recovery_bound)
    load.wait(timeout=300)
    census, took = converge(stack, load, timeout=converge_bound)
    relists = stack.relists()
    notes = [f"{on_cluster} on the cluster when it went down", f"{retries} push retries while it was down",
             f"{relists} watches listed again after a 410"]
    problems = [] if retries > 0 else ["no push failed while the cluster's API was down: nothing was tested"]
    if not relists:
        problems.append("no watch resumed into a 410 after the compaction: the relist was not tested")
    return report(name, load, census, seconds=took, notes=notes, extra_problems=problems, recovery=recovery,
                  converge_bound=converge_bound)


def push_retries(stack: Stack) -> int:
    """The push tasks the worker retried, from its log."""
    log = (stack.folder / "worker.log").read_text()
    return sum(1 for line in log.splitlines() if "workloads.tasks.workload_push" in line and " retry: " in line)
