"""The simulated cluster's API down for 60 s (every request a 503) while 500 workloads are submitted.

Pushes fail and retry with backoff and jitter; the sync cannot see the cluster either. Once it answers
again, every workload must be on it exactly once.

    .venv/bin/python -m scripts.faults.kubesim_outage"""

import sys
import time

from scripts.faults.load import CONVERGE_BOUND, RECOVERY_BOUND, Census, Load, converge, recover, report
from scripts.faults.stack import Stack, wait_until

COUNT = 500
OUTAGE_SECONDS = 60


def main() -> int:
    with Stack("kubesim-outage") as stack:
        org = stack.bootstrap()
        load = Load(stack, org, count=COUNT, prefix="ko").start()
        wait_until(lambda: len(load.accepted) >= 100, timeout=120, what="100 accepted submissions")
        on_cluster = len(Census.take(stack, org).jobs)
        stack.set_sim_faults(outage=True)
        print(f"kubesim-outage: cluster API down with {len(load.accepted)} accepted, {on_cluster} on the cluster",
              flush=True)
        time.sleep(OUTAGE_SECONDS)
        stack.set_sim_faults(outage=False)
        fault_ended = time.monotonic()
        retries = _push_retries(stack)
        print(f"kubesim-outage: cluster API back after {OUTAGE_SECONDS}s; {len(load.accepted)} accepted, "
              f"{retries} push retries meanwhile", flush=True)
        recovery = recover(stack, load, fault_ended=fault_ended, bound=RECOVERY_BOUND)
        load.wait(timeout=300)
        census, seconds = converge(stack, load, timeout=CONVERGE_BOUND)
        notes = [f"{on_cluster} on the cluster when it went down", f"{retries} push retries during the outage"]
        problems = [] if retries > 0 else ["no push failed during the outage: nothing was tested"]
        return 0 if report("kubesim-outage", load, census, seconds=seconds, notes=notes, extra_problems=problems,
                                  recovery=recovery, converge_bound=CONVERGE_BOUND) else 1


def _push_retries(stack: Stack) -> int:
    log = (stack.folder / "worker.log").read_text()
    return sum(1 for line in log.splitlines() if "workloads.tasks.workload_push" in line and " retry: " in line)


if __name__ == "__main__":
    sys.exit(main())
