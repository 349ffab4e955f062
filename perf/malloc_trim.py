"""Give the C allocator's free memory back to the system after a bulk pass.

A watcher's pass over thousands of workloads decodes, derives and writes them, then frees all of it; glibc's
malloc keeps the freed pages of its heaps (one per thread that allocated) for later, so the process's resident
memory stays at the pass's peak although the memory is free. `malloc_trim(0)` returns every free page of every
heap to the system (a few milliseconds); where the C library is not glibc, nothing is done."""

import ctypes
import ctypes.util

_trim = None
try:
    _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    _trim = _libc.malloc_trim
    _trim.argtypes, _trim.restype = [ctypes.c_size_t], ctypes.c_int
except (OSError, AttributeError):
    _trim = None


def release_free_memory() -> bool:
    """Whether any memory went back to the system."""
    return bool(_trim(0)) if _trim is not None else False
