"""The shape both cluster-API outages share (kubesim's API answering 503, the real kube-apiserver stopped):
500 submissions under way, the cluster's API gone for a while, its history compacted meanwhile (as etcd does),
then back; every workload must end on the cluster exactly once with its phase within RECOVERY_BOUND of the API
answering again, some push must have found the cluster silent and waited for it while only a few tried it, and
the watcher's watches must have resumed into a 410 and listed again, else nothing was tested.

After the API answers, three clocks are read for the workloads accepted by then (`Timeline`): every Job on the
cluster (PaaS Studio's waiting pushes), every pod Running on the cluster (the cluster's own controllers), every
phase in PaaS Studio (the watcher). PaaS Studio answers for the first and for the lag of the third behind the
second, each within 15 s; the second is the cluster's own, reported as the floor."""

import collections
import time
from collections.abc import Callable
from dataclasses import dataclass

import psycopg
import requests

from scripts.faults.load import MANAGED, WORKLOAD_ID, Census, Load, Recovery, converge, report
from scripts.faults.stack import Stack, wait_until

# Pushes parked while the cluster does not answer are sent again at once when the watcher's probe sees it answer
# (workloads/cluster/reach.py): every Job is on the cluster within PUSH_BOUND of the API answering again, and
# every phase follows its pod within FOLLOW_BOUND. On kubesim, whose pods follow their Jobs at once, the whole
# backlog converges within RECOVERY_BOUND of the API answering.
PUSH_BOUND = FOLLOW_BOUND = 15.0
RECOVERY_BOUND = CONVERGE_BOUND = 15.0
# Pushes that may reach for the silent cluster: those in flight when it went silent (the worker's two processes),
# and a few that raced the first one's mark; every other push waits without trying, and none is retried.
MAX_ATTEMPTS = 10


def cluster_outage(stack: Stack, name: str, *, prefix: str, count: int, seconds: float, down: Callable[[], None],
                   up: Callable[[], None], recovery_bound: float = RECOVERY_BOUND,
                   converge_bound: float = CONVERGE_BOUND, min_jobs: int = 0) -> bool:
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
    pushes = Pushes.read(stack)
    print(f"{name}: cluster API back after {seconds}s; {len(load.accepted)} accepted; meanwhile {pushes}", flush=True)
    timeline = Timeline.follow(stack, load, fault_ended=fault_ended, bound=recovery_bound)
    load.wait(timeout=300)
    census, took = converge(stack, load, timeout=converge_bound)
    relists = stack.relists()
    notes = [f"{on_cluster} on the cluster when it went down", f"while it was down {pushes}", str(timeline),
             f"{relists} watches listed again after a 410"]
    problems = pushes.problems() + timeline.problems()
    recovery = timeline.recovery
    if not relists:
        problems.append("no watch resumed into a 410 after the compaction: the relist was not tested")
    return report(name, load, census, seconds=took, notes=notes, extra_problems=problems, recovery=recovery,
                  converge_bound=converge_bound)


@dataclass
class Pushes:
    """What the pushes did while the cluster was down, from the worker's log: tried it and found it silent, waited
    without trying, retried by Celery's backoff."""

    attempts: int
    waited: int
    retries: int

    @classmethod
    def read(cls, stack: Stack) -> "Pushes":
        lines = [line for line in (stack.folder / "worker.log").read_text(errors="replace").splitlines()
                 if "workloads.tasks.workload_push" in line]
        return cls(attempts=sum(1 for line in lines if "did not answer" in line),
                   waited=sum(1 for line in lines if "waits for cluster" in line),
                   retries=sum(1 for line in lines if " retry: " in line))

    def __str__(self) -> str:
        return (f"{self.attempts} push attempts (bound {MAX_ATTEMPTS}), {self.waited} pushes waited without trying, "
                f"{self.retries} push retries")

    def problems(self) -> list[str]:
        if not self.attempts:
            return ["no push found the cluster's API silent: nothing was tested"]
        if self.attempts + self.retries > MAX_ATTEMPTS:
            return [f"{self.attempts} push attempts and {self.retries} retries while the cluster was down "
                    f"(bound {MAX_ATTEMPTS}): the pushes hammered it instead of waiting"]
        return []


@dataclass
class Timeline:
    """Seconds after the API answered again until every workload accepted by then had its Job on the cluster
    (`jobs`), a Running pod on the cluster (`pods`) and its phase in PaaS Studio (`phases`); None: not within
    the bound."""

    recovery: Recovery
    jobs: float | None
    pods: float | None
    phases: float | None

    @classmethod
    def follow(cls, stack: Stack, load: Load, *, fault_ended: float, bound: float) -> "Timeline":
        names = list(load.accepted)
        seen: dict[str, float] = {}
        unsettled = names
        while True:
            seconds = time.monotonic() - fault_ended
            try:
                census = Census.take(stack, load.org)
                by_name = {name: wid for wid, name in census.rows.items()}
                pods = stack.cluster_get(f"/api/v1/namespaces/{load.org['namespace']}/pods", labelSelector=MANAGED)
                pods.raise_for_status()
                running = collections.Counter(
                    pod["metadata"]["labels"].get(WORKLOAD_ID) for pod in pods.json().get("items", [])
                    if pod.get("status", {}).get("phase") == "Running")
            except (psycopg.Error, requests.RequestException):
                census = None  # the database or the cluster still coming back
            if census is not None:
                ids = [by_name.get(name) for name in names]
                if "jobs" not in seen and all(wid in census.jobs for wid in ids):
                    seen["jobs"] = seconds
                if "pods" not in seen and all(running.get(wid) for wid in ids):
                    seen["pods"] = seconds
                unsettled = census.unsettled(names)
                if not unsettled:
                    seen["phases"] = seconds
            if "phases" in seen or seconds > bound:
                recovery = Recovery(bound=bound, seconds=seconds, workloads=len(names), unsettled=unsettled)
                return cls(recovery=recovery, jobs=seen.get("jobs"), pods=seen.get("pods"),
                           phases=seen.get("phases"))
            time.sleep(0.5)

    def __str__(self) -> str:
        said = lambda s: "not within the bound" if s is None else f"{s:.1f}s"  # noqa: E731
        return (f"after the API answered: every Job on the cluster {said(self.jobs)} (bound {PUSH_BOUND:.0f}s), "
                f"every pod Running on the cluster {said(self.pods)} (the cluster's own), every phase in PaaS "
                f"Studio {said(self.phases)} (bound: the pods' + {FOLLOW_BOUND:.0f}s)")

    def problems(self) -> list[str]:
        problems = []
        if self.jobs is None or self.jobs > PUSH_BOUND:
            problems.append(f"the waiting pushes: not every Job was on the cluster within {PUSH_BOUND:.0f}s of "
                            "the API answering again")
        if self.pods is not None and (self.phases is None or self.phases - self.pods > FOLLOW_BOUND):
            problems.append(f"the watcher: the phases lagged the cluster's Running pods by more than "
                            f"{FOLLOW_BOUND:.0f}s")
        return problems
