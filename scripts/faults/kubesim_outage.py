"""The simulated cluster's API down for 60 s (every request a 503) while 500 workloads are submitted.

The first pushes find it silent and mark it so; every later push waits for it without trying; the sync cannot
see the cluster either. Once it answers again the watcher's probe sees it, the waiting pushes go at once, and
every workload must be on it exactly once, Running, within 15 s.

    .venv/bin/python -m scripts.faults.kubesim_outage"""

import sys

from scripts.faults.cluster_outage import cluster_outage
from scripts.faults.stack import Stack

COUNT = 500
OUTAGE_SECONDS = 60


def main() -> int:
    with Stack("kubesim-outage") as stack:
        passed = cluster_outage(stack, "kubesim-outage", prefix="ko", count=COUNT, seconds=OUTAGE_SECONDS,
                                down=lambda: stack.set_sim_faults(outage=True),
                                up=lambda: stack.set_sim_faults(outage=False))
        return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
