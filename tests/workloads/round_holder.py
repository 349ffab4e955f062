"""A process that holds a cluster's round lock, for the tests that kill a holder or cut its connection.

    python -m tests.workloads.round_holder CLUSTER_ID PURPOSE

Uses the database of DATABASE_URL. Prints `held <backend pid or 0>` (or `busy`) and, while holding, waits for
a line on stdin: `release` leaves the round as a finished round would and prints `released`."""

import os
import sys

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


def main() -> int:
    import django

    django.setup()
    from django.db import connection

    from workloads.cluster.round_locks import cluster_round

    cluster_id, purpose = sys.argv[1], sys.argv[2]
    with cluster_round(cluster_id, purpose) as held:
        if not held:
            print("busy", flush=True)
            return 0
        backend = 0
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                backend = cursor.fetchone()[0]
        print(f"held {backend}", flush=True)
        sys.stdin.readline()  # until told to go (or killed)
    print("released", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
