"""The broker (a Redis of this script's own, not the shared one) stopped for 30 s while 500 workloads are
submitted, with every message it held lost (`SHUTDOWN NOSAVE`).

The API must keep answering (a submission's row commits; its push cannot be enqueued, which is logged), and
once Redis is back the sync's drift repair pushes every workload the cluster never saw. So: no 5xx, and
each workload once on the cluster.

    .venv/bin/python -m scripts.faults.redis_stop"""

import sys
import time

from scripts.faults.load import CONVERGE_BOUND, RECOVERY_BOUND, Load, converge, recover, report
from scripts.faults.stack import Stack, wait_until

COUNT = 500
OUTAGE_SECONDS = 30


def main() -> int:
    with Stack("redis-stop") as stack:
        org = stack.bootstrap()
        stack.supervise_worker()
        load = Load(stack, org, count=COUNT, prefix="rs").start()
        wait_until(lambda: len(load.accepted) >= 100, timeout=120, what="100 accepted submissions")
        stack.stop_redis()
        before, answers_before = len(load.accepted), sum(load.statuses.values())
        print(f"redis-stop: stopped Redis with {before} accepted", flush=True)
        time.sleep(OUTAGE_SECONDS)
        during, answered = len(load.accepted) - before, sum(load.statuses.values()) - answers_before
        stack.start_redis()
        fault_ended = time.monotonic()
        print(f"redis-stop: Redis back after {OUTAGE_SECONDS}s; {during} submissions accepted meanwhile", flush=True)
        recovery = recover(stack, load, fault_ended=fault_ended, bound=RECOVERY_BOUND)
        load.wait(timeout=300)
        census, seconds = converge(stack, load, timeout=CONVERGE_BOUND)
        notes = [f"{during} of {answered} answers while Redis was down were acceptances",
                 f"the worker was started again by its supervisor {stack.worker_restarts} time(s)"]
        problems = [] if during > 0 else ["no submission was answered while Redis was down: nothing was tested"]
        return 0 if report("redis-stop", load, census, seconds=seconds, notes=notes, extra_problems=problems,
                                  recovery=recovery, converge_bound=CONVERGE_BOUND) else 1


if __name__ == "__main__":
    sys.exit(main())
