"""`manage.py cluster_watch`: the process that follows every cluster by watch (workloads/cluster/watcher.py).

Run one or more (a second is a standby: each cluster is followed by the holder of its lease, and a standby takes
over within SYNC_INTERVAL_SECONDS of the holder's end). SIGTERM or Ctrl-C stops it; the leases go with it."""

import signal
import threading
from pathlib import Path

from django.core.management.base import BaseCommand

from studio.keys import require_keys
from workloads.cluster.watcher import run_watchers


class Command(BaseCommand):
    help = "Follow every cluster by watch: phases, pods, events, repairs (one follower per cluster)."
    # Django's system checks import the URLconf (every view and serializer): 0.9 s of the watcher's start and
    # 14 MiB it kept, for pages it never serves. `manage.py check` and the web processes run them.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--alive-file", default="", help="a file touched every SYNC_INTERVAL_SECONDS while "
                                                             "the process runs (for a liveness probe)")

    def handle(self, *args, **options):
        require_keys()  # it reads the clusters' sealed tokens: refuse to start without the keys, as the servers do
        stopping = threading.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stopping.set())
        run_watchers(stopping, alive_file=Path(options["alive_file"]) if options["alive_file"] else None)
