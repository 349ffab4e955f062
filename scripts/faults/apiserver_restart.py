"""The real kube-apiserver (scripts/realkube.py: etcd and the controller manager stay up) stopped for
10 s and started again on the same port while 500 workloads are submitted.

The API keeps accepting (the rows commit; the first pushes find the server gone and every later one waits for
it without trying; the sync cannot list). Its nodes are kubesim's node side over HTTP, which rides out the
restart as kubelets do. Once the server answers again the waiting pushes go at once, and every workload must be
on it exactly once and Running.

    .venv/bin/python -m scripts.faults.apiserver_restart"""

import sys

from scripts.faults.cluster_outage import cluster_outage
from scripts.faults.stack import Stack

COUNT = 500
DOWN_SECONDS = 10
# Not yet the 15 s of the kubesim outage (docs/faults.md): on this shared 2-core machine the ~425 pushes that waited
# are all sent within 15-25 s of the server answering again, but their Pods then stay Pending on the cluster's side
# for more than 30 s after the restart; the bound stays the one before the waiting writes until that is understood.
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
