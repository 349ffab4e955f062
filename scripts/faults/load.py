"""Submissions under a fault, and the census that says whether a workload was lost or duplicated.

The load behaves as a careful API client: a 503 (the database down) or no answer at all is retried after a
second; a 409 on a retry means an earlier attempt was committed (names are unique in a project), so the
submission counts as accepted. Any other 5xx, a 503 without the error body, or a 4xx is a problem."""

import collections
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import psycopg
import requests

from scripts.faults.stack import Stack

RETRY_FOR = 240.0  # seconds a submission keeps retrying 503s and unanswered requests
MANAGED = "app.kubernetes.io/managed-by=paas-studio"
WORKLOAD_ID = "paas-studio/workload-id"


@dataclass
class Load:
    stack: Stack
    org: dict
    count: int
    prefix: str
    threads: int = 4
    accepted: dict = field(default_factory=dict)  # name -> workload id (None when known only by a 409)
    statuses: collections.Counter = field(default_factory=collections.Counter)
    problems: list = field(default_factory=list)
    slowest: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> "Load":
        self._pool = ThreadPoolExecutor(self.threads)
        self._futures = [self._pool.submit(self._submit, f"{self.prefix}-{i:04d}") for i in range(self.count)]
        return self

    def wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for future in self._futures:
            future.result(timeout=max(0.0, deadline - time.monotonic()))
        self._pool.shutdown()

    def _submit(self, name: str) -> None:
        body = {"name": name, "projectId": self.org["projectId"], "clusterId": self.org["clusterId"],
                "spec": {"image": "python:3.11", "command": "python", "args": "-c 'print(1)'"}}
        deadline, attempt = time.monotonic() + RETRY_FOR, 0
        while time.monotonic() < deadline:
            attempt += 1
            started = time.monotonic()
            try:
                response = requests.post(self.stack.url + "/api/v1/workloads/trainings", json=body,
                                         headers=self.org["headers"], timeout=60)
            except requests.RequestException:
                self._count(0, time.monotonic() - started)
                time.sleep(1)
                continue
            self._count(response.status_code, time.monotonic() - started)
            if response.status_code == 200:
                return self._accept(name, response.json()["workloadId"])
            if response.status_code == 409 and attempt > 1:
                return self._accept(name, None)
            if response.status_code == 503 and is_error_body(response, 503):
                time.sleep(1)
                continue
            return self._problem(f"{name}: {response.status_code} {response.text[:300]}")
        self._problem(f"{name}: not accepted within {RETRY_FOR:.0f}s")

    def _count(self, status: int, seconds: float) -> None:
        with self._lock:
            self.statuses[status] += 1
            self.slowest = max(self.slowest, seconds)

    def _accept(self, name: str, workload_id: str | None) -> None:
        with self._lock:
            self.accepted[name] = workload_id

    def _problem(self, text: str) -> None:
        with self._lock:
            self.problems.append(text)


def is_error_body(response, code: int) -> bool:
    try:
        body = response.json()
    except ValueError:
        return False
    return isinstance(body, dict) and body.get("code") == code and bool(body.get("message"))


@dataclass
class Census:
    settled_phases: set  # the phases a load workload may end in on this cluster
    rows: dict  # workload id -> name, live workloads of the project
    phases: dict  # workload id -> actual phase
    jobs: collections.Counter  # workload id -> Jobs labelled with it
    names: collections.Counter  # name -> live rows

    @classmethod
    def take(cls, stack: Stack, org: dict) -> "Census":
        with psycopg.connect(stack.env["DATABASE_URL"]) as conn:
            found = conn.execute("SELECT id::text, name, actual_phase FROM workloads_workload WHERE project_id = %s "
                                 "AND deleted_at IS NULL", [org["projectId"]]).fetchall()
        answer = stack.cluster_get(f"/apis/batch/v1/namespaces/{org['namespace']}/jobs", labelSelector=MANAGED)
        answer.raise_for_status()
        items = answer.json().get("items", [])
        jobs = collections.Counter(job["metadata"]["labels"][WORKLOAD_ID] for job in items)
        rows = {wid: name for wid, name, _ in found}
        return cls(settled_phases=stack.settled_phases, rows=rows, phases={wid: phase for wid, _, phase in found}, jobs=jobs,
                   names=collections.Counter(rows.values()))

    def duplicates(self) -> int:
        """Rows beyond one per name, Jobs beyond one per workload, and Jobs of no workload."""
        return (sum(n - 1 for n in self.names.values()) + sum(n - 1 for n in self.jobs.values())
                + sum(n for wid, n in self.jobs.items() if wid not in self.rows))

    def lost(self, load: Load) -> int:
        """Accepted submissions with no row, and rows with no Job on the cluster."""
        return (sum(1 for name in load.accepted if name not in self.names)
                + sum(1 for wid in self.rows if wid not in self.jobs))

    def unsettled(self, names) -> list[str]:
        """Of these names, those without a row, a Job on the cluster and the phase the cluster gives them."""
        by_name = {name: wid for wid, name in self.rows.items()}
        return [name for name in names if name not in by_name or by_name[name] not in self.jobs
                or self.phases[by_name[name]] not in self.settled_phases]


# The bounds every scenario asserts, in seconds (the cluster outages hold to tighter ones, cluster_outage.py).
# With the stack's settings (a sync round every 2 s, repairs after 5 s) a workload whose push died with the fault
# is pushed again by the first round after the repair grace and seen Running by the round after: about 10 s. The backlog
# the fault left (up to ~250 pushes, with the load still submitting) then drains at the push rate, 5-10 a second
# on this shared 2-core machine: up to ~50 s. An expiring lease (two minutes, before) cannot pass it.
RECOVERY_BOUND = 60.0  # from the fault's end until the workloads accepted by then have their Job and phase
CONVERGE_BOUND = 60.0  # from the last answer until every accepted workload has its Job and phase


def converge(stack: Stack, load: Load, *, timeout: float) -> tuple[Census, float]:
    """Census until nothing is lost or duplicated and every workload has its phase, or the timeout; with the
    seconds it took."""
    started = time.monotonic()
    while True:
        census = Census.take(stack, load.org)
        if ((census.lost(load) == 0 and census.duplicates() == 0 and not census.unsettled(load.accepted))
                or time.monotonic() - started > timeout):
            return census, time.monotonic() - started
        time.sleep(1)


@dataclass
class Recovery:
    """How long after the fault ended the workloads accepted by then had their Job and their phase."""

    bound: float
    seconds: float
    workloads: int
    unsettled: list

    def note(self) -> str:
        return (f"recovered {self.seconds:.1f}s after the fault ended (bound {self.bound:.0f}s, "
                f"{self.workloads} workloads accepted by then)")

    def problems(self) -> list[str]:
        if self.unsettled:
            return [f"{len(self.unsettled)} workloads accepted before the fault ended had no Job or phase "
                    f"{self.seconds:.0f}s after it (bound {self.bound:.0f}s), e.g. {self.unsettled[:5]}"]
        return []


def recover(stack: Stack, load: Load, *, fault_ended: float, bound: float) -> Recovery:
    """Poll (while the load goes on) until every workload accepted when the fault ended (`fault_ended`, a
    time.monotonic()) has its Job on the cluster and its phase; past the bound the poll stops, as a failure."""
    names = list(load.accepted)
    while True:
        try:
            unsettled = Census.take(stack, load.org).unsettled(names)
        except (psycopg.Error, requests.RequestException):
            unsettled = names  # the database or the cluster still coming back: not recovered yet
        seconds = time.monotonic() - fault_ended
        if not unsettled or seconds > bound:
            return Recovery(bound=bound, seconds=seconds, workloads=len(names), unsettled=unsettled)
        time.sleep(0.5)


def report(label: str, load: Load, census: Census, *, seconds: float, notes: list[str],
           extra_problems: list[str] = (), recovery: Recovery, converge_bound: float) -> bool:
    """Print the summary line (and why it failed); True on PASS."""
    problems = [*load.problems, *extra_problems, *recovery.problems()]
    unsettled = census.unsettled(load.accepted)
    if unsettled:
        by_name = {name: wid for wid, name in census.rows.items()}
        phases = collections.Counter(census.phases.get(by_name.get(name)) for name in unsettled)
        problems.append(f"{len(unsettled)} accepted workloads without a Job or phase {seconds:.0f}s after the last "
                        f"answer (bound {converge_bound:.0f}s; their phases {dict(phases)}), e.g. {unsettled[:5]}")
    duplicates, lost = census.duplicates(), census.lost(load)
    ok = not problems and duplicates == 0 and lost == 0 and len(load.accepted) == load.count
    verdict = "PASS" if ok else "FAIL"
    load.stack.keep_logs = load.stack.keep_logs or not ok
    print(f"{label}: submitted {load.count}, created {len(census.names)}, duplicates {duplicates}, "
          f"lost {lost} — {verdict}")
    statuses = ", ".join(f"{code or 'no answer'}: {n}" for code, n in sorted(load.statuses.items()))
    print(f"  {recovery.note()}; converged {seconds:.1f}s after the last answer (bound {converge_bound:.0f}s)")
    print(f"  answers {{{statuses}}}; slowest {load.slowest:.1f}s; " + "; ".join(notes))
    for problem in problems[:20]:
        print(f"  problem: {problem}")
    return ok
