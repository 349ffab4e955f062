"""`python -m bench.profile_watcher OUT`: `manage.py cluster_watch` with each cluster's watcher thread under
cProfile; the profile is written to OUT.<cluster id>.<pid> when the process stops (SIGTERM): a watcher started again
(bench.watch's restart) writes its own. For reading where the
loop's time goes (`python -m pstats`); bench/watch.py runs it when BENCH_WATCH_PROFILE names OUT."""

import cProfile
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from workloads.cluster import watcher

    out = sys.argv[1]
    plain = watcher.ClusterWatcher.run

    def profiled(self):
        profile = cProfile.Profile()
        profile.enable()
        try:
            plain(self)
        finally:
            profile.disable()
            profile.dump_stats(f"{out}.{self.cluster_id}.{os.getpid()}")

    watcher.ClusterWatcher.run = profiled
    from django.core.management import call_command

    call_command("cluster_watch")


if __name__ == "__main__":
    main()
