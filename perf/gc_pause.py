"""Pause Python's cyclic garbage collector around a bulk round.

A sync round over 10,000 workloads allocates a few hundred thousand objects that hold no cycles (the JSON of
every listed object, the rows): reference counting frees each of them. The cyclic collector, triggered every 700
allocations, would walk the growing young generations and, now and then, the whole heap, again and again; at
10,000 workloads that was about 45% of a round's CPU. Re-enabled after the round, the collector finds what
little is cyclic at its next pass; by then the round's objects are freed and no longer on its lists."""

import contextlib
import gc


@contextlib.contextmanager
def gc_paused():
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
