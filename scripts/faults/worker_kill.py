"""kill -9 of the Celery worker (its whole process group) in the middle of 500 submissions, then a restart.

Pushes the killed worker held come back to the queue after the visibility timeout, and pushes it had taken
off the queue are found by the sync (a workload never seen on the cluster after the repair grace is pushed
again); a push that runs twice adopts what the first created. So: each workload once on the cluster.

    .venv/bin/python -m scripts.faults.worker_kill"""

import sys
import time

from scripts.faults.load import CONVERGE_BOUND, RECOVERY_BOUND, Census, Load, converge, recover, report
from scripts.faults.stack import Stack, wait_until

COUNT = 500


def main() -> int:
    with Stack("worker-kill") as stack:
        org = stack.bootstrap()
        stack.set_sim_faults(latencyMs=40)  # a slower cluster, so that the worker has a backlog to lose
        load = Load(stack, org, count=COUNT, prefix="wk").start()
        wait_until(lambda: len(load.accepted) >= COUNT // 3 and sum(Census.take(stack, org).jobs.values()) >= 20,
                   timeout=120, what="a third of the submissions and the first pushes")
        stack.kill("worker")
        census = Census.take(stack, org)
        backlog = len(census.rows) - len(census.jobs)
        print(f"worker-kill: killed the worker with {len(load.accepted)} accepted, {backlog} not yet on the cluster",
              flush=True)
        time.sleep(5)
        stack.start_worker()  # returns once the worker is ready: the fault has ended
        fault_ended = time.monotonic()
        stack.set_sim_faults(latencyMs=0)
        recovery = recover(stack, load, fault_ended=fault_ended, bound=RECOVERY_BOUND)
        load.wait(timeout=300)
        census, seconds = converge(stack, load, timeout=CONVERGE_BOUND)
        notes = [f"killed with {backlog} workloads not yet on the cluster"]
        problems = [] if backlog > 0 else ["the worker had no backlog when killed: nothing was tested"]
        return 0 if report("worker-kill", load, census, seconds=seconds, notes=notes, extra_problems=problems,
                                  recovery=recovery, converge_bound=CONVERGE_BOUND) else 1


if __name__ == "__main__":
    sys.exit(main())
