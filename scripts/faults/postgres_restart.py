"""PostgreSQL (a private cluster of this script's own, not the shared server) stopped for 10 s and started
again while 500 workloads are submitted.

It is stopped while a sync round holds the cluster, so that the round dies with its database session. While it
is down every API request must answer 503 with the error body (never a 500): a prober asks for the
workload list twice a second, and the load retries its 503s as a client would. Tasks that met the outage
fail and are repaired by the sync. Afterwards: each submission once in the database and once on the cluster.

    .venv/bin/python -m scripts.faults.postgres_restart"""

import collections
import sys
import threading
import time

import psycopg
import requests

from scripts.faults.load import CONVERGE_BOUND, RECOVERY_BOUND, Load, converge, is_error_body, recover, report
from scripts.faults.stack import Stack, wait_until
from workloads.cluster.round_locks import advisory_key, lock_name

COUNT = 500
DOWN_SECONDS = 10


class Prober(threading.Thread):
    """GET /api/v1/workloads every half second; counts the answers and keeps the unexpected ones."""

    def __init__(self, stack: Stack, headers: dict):
        super().__init__(daemon=True)
        self.stack, self.headers = stack, headers
        self.answers: collections.Counter = collections.Counter()
        self.unexpected: list[str] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            try:
                response = requests.get(self.stack.url + "/api/v1/workloads?limit=1", headers=self.headers, timeout=30)
            except requests.RequestException as exc:
                self.unexpected.append(f"no answer: {exc}")
            else:
                ok_503 = response.status_code == 503 and is_error_body(response, 503)
                self.answers["503 with the error body" if ok_503 else response.status_code] += 1
                if response.status_code != 200 and not ok_503:
                    self.unexpected.append(f"{response.status_code} {response.text[:200]}")
            time.sleep(0.5)


def sync_round_running(conn, database: str, cluster_id: str) -> bool:
    """The cluster's sync round holds its lock (an advisory lock on PostgreSQL; pg_locks shows the 64-bit key as
    two 32-bit halves)."""
    key = advisory_key(lock_name(cluster_id, "sync", database=database)) & 0xFFFFFFFFFFFFFFFF
    return bool(conn.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted "
                             "AND classid::bigint = %s AND objid::bigint = %s",
                             [key >> 32, key & 0xFFFFFFFF]).fetchone()[0])


def main() -> int:
    with Stack("postgres-restart", private_postgres=True) as stack:
        org = stack.bootstrap()
        load = Load(stack, org, count=COUNT, prefix="pg").start()
        wait_until(lambda: len(load.accepted) >= 100, timeout=120, what="100 accepted submissions")
        prober = Prober(stack, org["headers"])
        with psycopg.connect(stack.env["DATABASE_URL"], autocommit=True) as watcher:
            # The stop lands while a sync round holds the cluster (its advisory lock is granted): the case where
            # an expiring lease row kept every later round out for two minutes.
            wait_until(lambda: sync_round_running(watcher, stack.database, org["clusterId"]), timeout=60,
                       interval=0.02, what="a sync round")
            stack.postgres.stop()
        prober.start()
        print(f"postgres-restart: PostgreSQL stopped during a sync round, with {len(load.accepted)} accepted",
              flush=True)
        time.sleep(DOWN_SECONDS)
        prober.done.set()
        prober.join(timeout=60)
        stack.postgres.start()
        fault_ended = time.monotonic()
        print(f"postgres-restart: PostgreSQL started again after {DOWN_SECONDS}s; prober saw {dict(prober.answers)}",
              flush=True)
        recovery = recover(stack, load, fault_ended=fault_ended, bound=RECOVERY_BOUND)
        load.wait(timeout=300)
        census, seconds = converge(stack, load, timeout=CONVERGE_BOUND)
        problems = [f"while down: {text}" for text in prober.unexpected]
        if not prober.answers["503 with the error body"]:
            problems.append("no 503 was seen while PostgreSQL was down: nothing was tested")
        notes = [f"while down the prober got {dict(prober.answers)}", f"the load got {load.statuses[503]} 503s"]
        return 0 if report("postgres-restart", load, census, seconds=seconds, notes=notes,
                           extra_problems=problems, recovery=recovery, converge_bound=CONVERGE_BOUND) else 1


if __name__ == "__main__":
    sys.exit(main())
