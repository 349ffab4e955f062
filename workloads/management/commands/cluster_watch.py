"""`manage.py cluster_watch`: the process that follows every cluster by watch (workloads/cluster/watcher.py).

Run one or more (a second is a standby: each cluster is followed by the holder of its lease, and a standby takes
over within SYNC_INTERVAL_SECONDS of the holder's end). SIGTERM or Ctrl-C stops it; the leases go with it."""

import signal
import threading
from pathlib import Path

from django.core.management.base import BaseCommand

from workloads.cluster.watcher import run_watchers


class Command(BaseCommand):
    help = "Follow every cluster by watch: phases, pods, events, repairs (one follower per cluster)."

    def add_arguments(self, parser):
        parser.add_argument("--alive-file", default="", help="a file touched every SYNC_INTERVAL_SECONDS while "
                                                             "the process runs (for a liveness probe)")

    def handle(self, *args, **options):
        stopping = threading.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stopping.set())
        run_watchers(stopping, alive_file=Path(options["alive_file"]) if options["alive_file"] else None)
