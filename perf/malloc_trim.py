"""Give the C allocator's free memory back to the system, and keep its heaps few.

A watcher's pass over thousands of workloads decodes, derives and writes them, then frees all of it; glibc's
malloc keeps the freed pages of its heaps for later, so the process's resident memory stays at the pass's peak
although the memory is free. `malloc_trim(0)` returns every free page of every heap to the system (well under a
millisecond when little is free). glibc also gives each thread that allocates a heap of its own (up to eight per
core): the watcher's reflector threads decode their lists and watch events each in its own, and every heap keeps
its own free pages and fragments. `limit_heaps` caps them (`mallopt(M_ARENA_MAX)`) before the threads start.
Where the C library is not glibc, nothing is done."""

import ctypes
import ctypes.util

M_ARENA_MAX = -8  # glibc's malloc.h

_trim = _mallopt = None
try:
    _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    _trim = _libc.malloc_trim
    _trim.argtypes, _trim.restype = [ctypes.c_size_t], ctypes.c_int
    _mallopt = _libc.mallopt
    _mallopt.argtypes, _mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
except (OSError, AttributeError):
    _trim = _mallopt = None


def release_free_memory() -> bool:
    """Whether any memory went back to the system."""
    return bool(_trim(0)) if _trim is not None else False


def limit_heaps(count: int) -> bool:
    """At most `count` heaps for the threads started from now on; whether the C library took it."""
    return bool(_mallopt(M_ARENA_MAX, count)) if _mallopt is not None else False
