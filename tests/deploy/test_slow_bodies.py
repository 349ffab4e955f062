"""Slow bodies against the production web start (security round 3, S21): `scripts/slow_bodies.py` starts the web
tier as the image does (gunicorn, 3 workers, gunicorn.conf.py) on loopback and opens clients that send a POST's
headers and one byte of its 100 kB body, then nothing. With the shipped gevent workers /healthz keeps answering
and each slow client gets a 408 at the body deadline; with sync workers (how the tier ran before, forced on the
command line) /healthz stops answering — the check can fail."""

import pytest

from scripts.slow_bodies import measure

pytestmark = pytest.mark.timeout(600)


def test_fifty_slow_bodies_leave_healthz_answering_and_are_cut_at_the_deadline():
    result = measure(clients=50, seconds=6, body_timeout=4, patience=10)
    during = result["healthz_during"]
    assert during["answered"] > 0 and during["failed"] == 0, result
    assert result["slow_clients_answered"] == {"408": 50}, result
    assert result["whole_post_during"] == 403, result  # read whole and answered (no CSRF cookie: refused)


def test_with_sync_workers_five_slow_bodies_stall_healthz():
    result = measure(clients=5, seconds=3, body_timeout=4, worker_class="sync", patience=3)
    assert result["healthz_during"]["answered"] == 0 and result["healthz_during"]["failed"] > 0, result
