"""Pause Python's cyclic garbage collector around a bulk round.

A sync round over 10,000 workloads allocates a few hundred thousand objects that hold no cycles (the JSON of
every listed object, the rows): reference counting frees each of them. The cyclic collector, triggered every 700
allocations, would walk the growing young generations and, now and then, the whole heap, again and again; at
10,000 workloads that was about 45% of a round's CPU. Re-enabled after the round, the collector finds what
little is cyclic at its next pass; by then the round's objects are freed and no longer on its lists.

The collector is one per process: threads that pause it at once (a watcher's reflectors LIST together) share
one pause, which ends when the last of them leaves."""

import contextlib
import gc
import threading

_lock = threading.Lock()
_holders = 0
_resume = False  # whether the collector was enabled when the first holder paused it


@contextlib.contextmanager
def gc_paused():
    global _holders, _resume
    with _lock:
        if _holders == 0:
            _resume = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _resume:
                gc.enable()
