"""Where a run's CPU went, by process: read from /proc before and after, grouped by what each process runs.

A process alive at both readings counts what it used between them; one started between them counts all it used.
One that ended between them counts in its parent's children's time (cutime/cstime) once the parent reaped it:
PostgreSQL's backends land in the postmaster that way. Linux only; elsewhere the readings are empty.
"""

import os

TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

# first match wins: (group, what the program's name (or, for Python, its command line) holds)
GROUPS = (
    ("gunicorn (API)", "gunicorn"),
    ("celery worker (pushes)", "celery"),
    ("cluster_watch (watcher)", "cluster_watch"),
    ("cluster_watch (watcher)", "bench.profile_watcher"),
    ("bench (clients)", "bench"),
    ("bench (clients)", "multiprocessing.spawn"),
    ("postgres", "postgres"),
    ("redis", "redis-server"),
    ("kube-apiserver", "kube-apiserver"),
    ("etcd", "etcd"),
    ("kube-controller-manager", "kube-controller-manager"),
    ("kwok", "kwok"),
    ("KAI scheduler", "kai-scheduler"),
    ("KAI binder", "kai-binder"),
    ("KAI pod grouper", "kai-podgrouper"),
    ("KAI other", "kai-"),
)


def _group(argv: list[str]) -> str:
    program = os.path.basename(argv[0]) if argv else ""
    text = " ".join(argv) if program.startswith("python") else program
    for group, marker in GROUPS:
        if marker in text:
            return group
    return "other"


def _argv(pid: int) -> list[str]:
    with open(f"/proc/{pid}/cmdline", "rb") as cmd:
        return cmd.read().decode(errors="replace").split("\0")


def snapshot() -> dict[int, tuple[str, float]]:
    """{pid: (group, CPU seconds used by it and its reaped children)} for every process readable now."""
    readings = {}
    for entry in os.scandir("/proc") if os.path.isdir("/proc") else ():
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            argv = _argv(int(entry.name))
        except OSError:
            continue
        # after the name: state is fields[0]; utime, stime, cutime, cstime are the 14th–17th of stat (11–14 here)
        ticks = sum(int(value) for value in fields[11:15])
        readings[int(entry.name)] = (_group(argv), ticks / TICKS)
    return readings


def spent(before: dict, after: dict, apart: dict[str, float] | None = None) -> dict[str, float]:
    """CPU seconds each group used between the two readings, the largest first. `apart`: {group: seconds} measured
    by a child of this process that ended (and was reaped) between them, taken out of this process's group."""
    groups: dict[str, float] = {}
    for pid, (group, seconds) in after.items():
        used = seconds - before[pid][1] if pid in before and before[pid][0] == group else seconds
        groups[group] = groups.get(group, 0.0) + max(used, 0.0)
    own = _group(_argv(os.getpid()))
    for group, seconds in (apart or {}).items():
        groups[group] = groups.get(group, 0.0) + seconds
        groups[own] = max(groups.get(own, 0.0) - seconds, 0.0)
    return dict(sorted(groups.items(), key=lambda item: -item[1]))
