import gc

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
