"""The simulated cluster's API down for 60 s (every request a 503) while 500 workloads are submitted.

Pushes fail and retry with backoff and jitter; the sync cannot see the cluster either. Once it answers
again, every workload must be on it exactly once.

    .venv/bin/python -m scripts.faults.kubesim_outage"""

import sys

from scripts.faults.cluster_outage import cluster_outage
from scripts.faults.load import CONVERGE_BOUND, RECOVERY_BOUND
from scripts.faults.stack import Stack

COUNT = 500
OUTAGE_SECONDS = 60


def main() -> int:
    with Stack("kubesim-outage") as stack:
        passed = cluster_outage(stack, "kubesim-outage", prefix="ko", count=COUNT, seconds=OUTAGE_SECONDS,
                                down=lambda: stack.set_sim_faults(outage=True),
                                up=lambda: stack.set_sim_faults(outage=False),
                                recovery_bound=RECOVERY_BOUND, converge_bound=CONVERGE_BOUND)
        return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
