"""The real kube-apiserver (v1.20.2, scripts/realkube.py: etcd and the controller manager stay up) stopped for
10 s and started again on the same port while 500 workloads are submitted.

The API keeps accepting (the rows commit; pushes fail and retry with backoff and jitter, the sync cannot list).
Its nodes are kubesim's node side over HTTP, which rides out the restart as kubelets do. Once the server answers
again every workload must be on it exactly once and Running.

    .venv/bin/python -m scripts.faults.apiserver_restart"""

import sys
import time

from scripts.faults.load import Census, Load, converge, recover, report
from scripts.faults.stack import Stack, wait_until

COUNT = 500
DOWN_SECONDS = 10
# Pushes to the real server are slower than to kubesim (TLS, etcd, admission; ~0.3 s each with 2 worker
# processes on this shared 2-core machine, about 3-4 a second), so the workloads still to push when it comes
# back take this long by throughput alone; the bound is that, not the recovery's mechanics.
RECOVERY_BOUND = CONVERGE_BOUND = 180.0


def main() -> int:
    with Stack("apiserver-restart", real_apiserver=True) as stack:
        org = stack.bootstrap()
        load = Load(stack, org, count=COUNT, prefix="ar").start()
        wait_until(lambda: len(load.accepted) >= 100 and len(Census.take(stack, org).jobs) >= 20, timeout=120,
                   what="100 accepted submissions and the first Jobs")
        on_cluster = len(Census.take(stack, org).jobs)
        stack.real.stop_apiserver()
        print(f"apiserver-restart: kube-apiserver stopped with {len(load.accepted)} accepted, {on_cluster} on the "
              "cluster", flush=True)
        time.sleep(DOWN_SECONDS)
        stack.real.start_apiserver()  # returns once it is ready again: the fault has ended
        fault_ended = time.monotonic()
        retries = _push_retries(stack)
        print(f"apiserver-restart: kube-apiserver back after {DOWN_SECONDS}s; {len(load.accepted)} accepted, "
              f"{retries} push retries meanwhile", flush=True)
        recovery = recover(stack, load, fault_ended=fault_ended, bound=RECOVERY_BOUND)
        load.wait(timeout=300)
        census, seconds = converge(stack, load, timeout=CONVERGE_BOUND)
        notes = [f"{on_cluster} on the cluster when it went down", f"{retries} push retries while it was down"]
        problems = [] if retries > 0 else ["no push failed while the API server was down: nothing was tested"]
        return 0 if report("apiserver-restart", load, census, seconds=seconds, notes=notes, extra_problems=problems,
                           recovery=recovery, converge_bound=CONVERGE_BOUND) else 1


def _push_retries(stack: Stack) -> int:
    log = (stack.folder / "worker.log").read_text()
    return sum(1 for line in log.splitlines() if "workloads.tasks.workload_push" in line and " retry: " in line)


if __name__ == "__main__":
    sys.exit(main())
