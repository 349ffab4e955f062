"""perf/malloc_trim: freed memory goes back to the system, and threads share the heaps they are limited to.
Each case runs in a fresh interpreter: a heap's count and a process's resident memory are the process's own."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

THREADS = """
import ctypes, json, sys, threading
from perf import malloc_trim
limited = malloc_trim.limit_heaps(int(sys.argv[1])) if sys.argv[1] != "-" else None
barrier = threading.Barrier(4)

def allocate():
    barrier.wait()  # all four at once: each would take a heap of its own
    kept = [bytearray(1500) for _ in range(2000)]
    barrier.wait()

threads = [threading.Thread(target=allocate) for _ in range(4)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
ctypes.CDLL("libc.so.6").malloc_stats()  # one "Arena N:" block a heap, on stderr
print(json.dumps(limited))
"""

TRIM = """
import json, re
from perf.malloc_trim import release_free_memory

def rss():
    return int(re.search(r"VmRSS:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) // 1024

keep, junk = [], []
for i in range(120_000):  # 1.5 KiB blocks: glibc's heap, not its own mapping; every 40th kept pins nothing much
    (keep if i % 40 == 0 else junk).append(bytearray(1500))
peak = rss()
del junk
before = rss()
released = release_free_memory()
print(json.dumps({"peak": peak, "before": before, "after": rss(), "released": released}))
"""


def _run(code: str, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    return done


def _heaps(limit: str) -> tuple[int, object]:
    done = _run(THREADS, limit)
    return done.stderr.count("Arena "), json.loads(done.stdout)


def test_threads_share_the_heaps_they_are_limited_to():
    assert _heaps("-")[0] >= 3  # the main thread's and one a thread, as glibc does unasked
    heaps, limited = _heaps("1")
    assert limited is True and heaps == 1


def test_freed_memory_goes_back_to_the_system():
    found = json.loads(_run(TRIM).stdout)
    assert found["released"] is True
    assert found["before"] - found["after"] >= 50, found  # ~170 MiB freed, held by the heap until the trim
