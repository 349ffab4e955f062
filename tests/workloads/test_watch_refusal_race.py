"""The watcher's first lists, when the account may not read across namespaces (deploy/rbac.yaml): a reflector that is
refused (403) marks itself forbidden and then synced. If that refusal lands between the watcher's two looks — as
happened on a loaded CI machine — the watcher must still switch to one watch per managed namespace, not go on
across namespaces with nothing to read (the workload was then never seen Running: tests/real/test_watch_real.py)."""

import threading

import pytest

from tests.factories import ClusterFactory
from workloads.cluster import informer, watcher

pytestmark = pytest.mark.django_db


class RefusedBetweenLooks:
    """A reflector across namespaces whose 403 arrives right after the watcher first looks at `forbidden` (before
    its look at `synced`, if it looks in that order); one inside a namespace, and the one of namespaces themselves,
    lists at once."""

    def __init__(self, conn, kind, store, *, namespace=None, **_):
        self.kind, self.namespace = kind, namespace
        self.failing_since = None
        self._forbidden, self.synced = False, threading.Event()
        self._refused = namespace is not None or kind == informer.NAMESPACE
        if self._refused:
            self.synced.set()

    @property
    def forbidden(self) -> bool:
        before = self._forbidden
        if not self._refused:  # the reflector's thread, now: forbidden, then synced
            self._refused = self._forbidden = True
            self.synced.set()
        return before

    def start(self):
        pass

    def stop(self):
        pass


class HeldLease:
    def held(self) -> bool:
        return True


def test_a_refusal_between_the_two_looks_still_switches_to_each_managed_namespace(monkeypatch):
    monkeypatch.setattr(informer, "Reflector", RefusedBetweenLooks)
    following = watcher.Following(ClusterFactory(), HeldLease(), threading.Event())
    following.groups = set()
    threading.Timer(20, following.stopping.set).start()  # a watcher that never settles fails, not hangs
    assert following._wait_for_lists() is True
    assert following.everywhere is False  # one watch per kind in each managed namespace
    assert any(r.namespace is None and r.kind == informer.NAMESPACE for r in following.reflectors.values())
