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
    rows: dict  # workload id -> name, live workloads of the project
    jobs: collections.Counter  # workload id -> Jobs labelled with it
    names: collections.Counter  # name -> live rows

    @classmethod
    def take(cls, stack: Stack, org: dict) -> "Census":
        with psycopg.connect(stack.env["DATABASE_URL"]) as conn:
            rows = dict(conn.execute("SELECT id::text, name FROM workloads_workload WHERE project_id = %s "
                                     "AND deleted_at IS NULL", [org["projectId"]]).fetchall())
        url = f"{stack.sim_url}/apis/batch/v1/namespaces/{org['namespace']}/jobs"
        items = requests.get(url, params={"labelSelector": MANAGED}, headers=stack.sim_headers,
                             timeout=30).json().get("items", [])
        jobs = collections.Counter(job["metadata"]["labels"][WORKLOAD_ID] for job in items)
        return cls(rows=rows, jobs=jobs, names=collections.Counter(rows.values()))

    def duplicates(self) -> int:
        """Rows beyond one per name, Jobs beyond one per workload, and Jobs of no workload."""
        return (sum(n - 1 for n in self.names.values()) + sum(n - 1 for n in self.jobs.values())
                + sum(n for wid, n in self.jobs.items() if wid not in self.rows))

    def lost(self, load: Load) -> int:
        """Accepted submissions with no row, and rows with no Job on the cluster."""
        return (sum(1 for name in load.accepted if name not in self.names)
                + sum(1 for wid in self.rows if wid not in self.jobs))


def converge(stack: Stack, load: Load, *, timeout: float) -> tuple[Census, float]:
    """Census until nothing is lost or duplicated, or the timeout; with the seconds it took."""
    started = time.monotonic()
    while True:
        census = Census.take(stack, load.org)
        if (census.lost(load) == 0 and census.duplicates() == 0) or time.monotonic() - started > timeout:
            return census, time.monotonic() - started
        time.sleep(2)


def report(label: str, load: Load, census: Census, *, seconds: float, notes: list[str],
           extra_problems: list[str] = ()) -> bool:
    """Print the summary line (and why it failed); True on PASS."""
    problems = [*load.problems, *extra_problems]
    duplicates, lost = census.duplicates(), census.lost(load)
    ok = not problems and duplicates == 0 and lost == 0 and len(load.accepted) == load.count
    verdict = "PASS" if ok else "FAIL"
    print(f"{label}: submitted {load.count}, created {len(census.names)}, duplicates {duplicates}, "
          f"lost {lost} — {verdict}")
    statuses = ", ".join(f"{code or 'no answer'}: {n}" for code, n in sorted(load.statuses.items()))
    print(f"  answers {{{statuses}}}; slowest {load.slowest:.1f}s; converged {seconds:.1f}s after the last answer; "
          + "; ".join(notes))
    for problem in problems[:20]:
        print(f"  problem: {problem}")
    return ok
