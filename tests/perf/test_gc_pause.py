import gc
import threading

import pytest

from perf.gc_pause import gc_paused


def test_the_collector_is_paused_inside_and_enabled_again_after():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_the_collector_is_enabled_again_when_the_round_fails():
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("the cluster did not answer")
    assert gc.isenabled()


def test_a_collector_paused_by_the_caller_stays_paused():
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_threads_that_pause_together_share_one_pause_until_the_last_leaves():
    """A watcher's reflectors LIST at once: the first one done must not start the collector under the other."""
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    seen = {}

    def first():
        with gc_paused():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second():
        first_in.wait(5)
        with gc_paused():
            second_in.set()
            first_out.wait(5)
            seen["after the first left"] = gc.isenabled()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == {"after the first left": False}
    assert gc.isenabled()
