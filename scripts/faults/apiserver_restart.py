"""The real kube-apiserver (scripts/realkube.py: etcd and the controller manager stay up) stopped for
10 s and started again on the same port while 500 workloads are submitted.

The API keeps accepting (the rows commit; pushes fail and retry with backoff and jitter, the sync cannot list).
Its nodes are kubesim's node side over HTTP, which rides out the restart as kubelets do. Once the server answers
again every workload must be on it exactly once and Running.

    .venv/bin/python -m scripts.faults.apiserver_restart"""

import sys

from scripts.faults.cluster_outage import cluster_outage
from scripts.faults.stack import Stack

COUNT = 500
DOWN_SECONDS = 10
# Pushes to the real server are slower than to kubesim (TLS, etcd, admission; ~0.3 s each with 2 worker
# processes on this shared 2-core machine, about 3-4 a second), so the workloads still to push when it comes
# back take this long by throughput alone; the bound is that, not the recovery's mechanics.
RECOVERY_BOUND = CONVERGE_BOUND = 180.0


def main() -> int:
    with Stack("apiserver-restart", real_apiserver=True) as stack:
        # start_apiserver returns once the server is ready again on the same port.
        passed = cluster_outage(stack, "apiserver-restart", prefix="ar", count=COUNT, seconds=DOWN_SECONDS,
                                down=stack.real.stop_apiserver, up=stack.real.start_apiserver, min_jobs=20,
                                recovery_bound=RECOVERY_BOUND, converge_bound=CONVERGE_BOUND)
        return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
