"""kill -9 of the cluster watcher that follows the cluster, in the middle of 500 submissions, with a second
watcher standing by; the killed one is started again (as its supervisor would) and stands by in turn.

The lease dies with its holder (its database session, or the process's file lock): the standby takes it within
a tick, lists once and follows on; the workloads pushed meanwhile get their phase from it. So: each workload
once on the cluster, Running, and the cluster followed again within seconds.

    .venv/bin/python -m scripts.faults.watcher_kill"""

import sys
import time

from scripts.faults.load import CONVERGE_BOUND, RECOVERY_BOUND, Census, Load, converge, recover, report
from scripts.faults.stack import Stack, wait_until

COUNT = 500
FOLLOWING = "watching cluster"


def main() -> int:
    with Stack("watcher-kill") as stack:
        org = stack.bootstrap()
        stack.start_watcher("watcher-standby")
        wait_until(lambda: FOLLOWING in stack.watcher_log() or FOLLOWING in stack.watcher_log("watcher-standby"),
                   timeout=60, what="a watcher to follow the cluster")
        holder, standby = ("watcher", "watcher-standby") if FOLLOWING in stack.watcher_log() else \
            ("watcher-standby", "watcher")
        load = Load(stack, org, count=COUNT, prefix="wa").start()
        wait_until(lambda: len(load.accepted) >= COUNT // 3 and sum(Census.take(stack, org).jobs.values()) >= 20,
                   timeout=120, what="a third of the submissions and the first pushes")
        stack.kill(holder)
        killed = time.monotonic()
        census = Census.take(stack, org)
        print(f"watcher-kill: killed the {holder} with {len(load.accepted)} accepted, {len(census.jobs)} on the "
              "cluster", flush=True)
        wait_until(lambda: FOLLOWING in stack.watcher_log(standby), timeout=60, what="the standby to take over")
        takeover = time.monotonic() - killed
        print(f"watcher-kill: the {standby} follows the cluster {takeover:.1f}s after the kill", flush=True)
        stack.start_watcher(holder + "-again")  # its supervisor starts it again: it stands by now
        fault_ended = time.monotonic()
        recovery = recover(stack, load, fault_ended=fault_ended, bound=RECOVERY_BOUND)
        load.wait(timeout=300)
        census, seconds = converge(stack, load, timeout=CONVERGE_BOUND)
        notes = [f"the standby took over {takeover:.1f}s after the kill"]
        problems = [] if takeover <= 15 else [f"the standby took {takeover:.0f}s to take over (bound 15s)"]
        if FOLLOWING in stack.watcher_log(holder + "-again"):
            problems.append("the restarted watcher follows the cluster too: two followers")
        return 0 if report("watcher-kill", load, census, seconds=seconds, notes=notes, extra_problems=problems,
                           recovery=recovery, converge_bound=CONVERGE_BOUND) else 1


if __name__ == "__main__":
    sys.exit(main())
