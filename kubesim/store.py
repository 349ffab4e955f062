"""The object store: every object by kind, namespace and name; one global resourceVersion counter; the watch
history window; and indexes the controller needs (by uid, owner -> dependents).

Stored dicts are never mutated in place: writers put a new dict, so a reader (a list response, a watch event in
the history) can hold on to the one it got without copying. Everything runs under `lock`.
"""

from __future__ import annotations

import bisect
import calendar
import threading
import time
import uuid
from collections import defaultdict, deque

_last_stamp = (0, "")


def now_rfc3339(t: float | None = None) -> str:
    """RFC 3339 with second precision, as Kubernetes timestamps are; memoized per second (it is called a lot)."""
    global _last_stamp
    second = int(time.time() if t is None else t)
    cached = _last_stamp
    if cached[0] != second:
        cached = _last_stamp = (second, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second)))
    return cached[1]


def parse_rfc3339(value: str) -> float:
    return float(calendar.timegm(time.strptime(value, "%Y-%m-%dT%H:%M:%SZ")))


def jcopy(value):
    """Deep copy for JSON-shaped data; several times faster than copy.deepcopy."""
    if isinstance(value, dict):
        return {k: jcopy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [jcopy(v) for v in value]
    return value


class Event:
    __slots__ = ("rv", "key", "type", "obj", "old", "lines")

    def __init__(self, rv, key, type_, obj, old):
        self.rv, self.key, self.type, self.obj, self.old = rv, key, type_, obj, old
        self.lines = {}  # serialized watch line per event type, shared by all watchers


class Store:
    def __init__(self, history: int = 1000):
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.rv = 0
        self._objects = defaultdict(lambda: defaultdict(dict))  # key -> namespace -> name -> obj
        self._sorted = {}                                       # (key, namespace) -> sorted names (cache)
        self.by_uid = {}                                        # uid -> (key, namespace, name)
        self.dependents = defaultdict(set)                      # owner uid -> dependent uids
        self.history = deque(maxlen=max(1, history))
        self.compacted = 0                                      # compact(): nothing at or before it is readable
        self.last_rv = {}                                       # key -> resourceVersion of its latest write
        self.listeners = []                                     # fn(key, type, obj, old), called under lock

    # --- reads -----------------------------------------------------------------------------------------------

    def get(self, key: str, namespace: str | None, name: str) -> dict | None:
        return self._objects[key][namespace or ""].get(name)

    def get_uid(self, uid: str) -> tuple[str, dict] | None:
        where = self.by_uid.get(uid)
        if where is None:
            return None
        key, namespace, name = where
        return key, self._objects[key][namespace][name]

    def namespaces(self, key: str) -> list[str]:
        return sorted(ns for ns, objs in self._objects[key].items() if objs)

    def names(self, key: str, namespace: str) -> list[str]:
        cached = self._sorted.get((key, namespace))
        if cached is None:
            cached = self._sorted[(key, namespace)] = sorted(self._objects[key][namespace])
        return cached

    def iter(self, key: str, namespace: str | None = None, after: tuple[str, str] = ("", "")):
        """Objects in (namespace, name) order, strictly after `after` — the order chunked lists page through."""
        spaces = [namespace or ""] if namespace is not None else self.namespaces(key)
        for ns in spaces:
            if ns < after[0]:
                continue
            names = self.names(key, ns)
            start = bisect.bisect_right(names, after[1]) if ns == after[0] else 0
            objs = self._objects[key][ns]
            for name in names[start:]:
                yield objs[name]

    def list(self, key: str, namespace: str | None = None) -> list[dict]:
        if namespace is not None:
            return list(self._objects[key][namespace].values())
        return [o for objs in self._objects[key].values() for o in objs.values()]

    def count(self, key: str, namespace: str | None = None) -> int:
        if namespace is not None:
            return len(self._objects[key][namespace])
        return sum(len(objs) for objs in self._objects[key].values())

    def in_namespace(self, namespace: str) -> int:
        return sum(len(spaces.get(namespace, ())) for key, spaces in self._objects.items())

    # --- writes ----------------------------------------------------------------------------------------------

    def create(self, key: str, obj: dict) -> dict:
        meta = obj["metadata"]
        meta.setdefault("uid", str(uuid.uuid4()))
        meta.setdefault("creationTimestamp", now_rfc3339())
        ns = meta.get("namespace", "")
        self._objects[key][ns][meta["name"]] = obj
        self._sorted.pop((key, ns), None)
        self.by_uid[meta["uid"]] = (key, ns, meta["name"])
        self._index_owners(meta["uid"], None, meta)
        return self._record(key, "ADDED", obj, None)

    def update(self, key: str, obj: dict) -> dict:
        meta = obj["metadata"]
        ns = meta.get("namespace", "")
        old = self._objects[key][ns][meta["name"]]
        self._objects[key][ns][meta["name"]] = obj
        self._index_owners(meta["uid"], old["metadata"], meta)
        return self._record(key, "MODIFIED", obj, old)

    def remove(self, key: str, namespace: str | None, name: str) -> dict:
        ns = namespace or ""
        old = self._objects[key][ns].pop(name)
        self._sorted.pop((key, ns), None)
        uid = old["metadata"]["uid"]
        self.by_uid.pop(uid, None)
        self._index_owners(uid, old["metadata"], None)
        gone = {**old, "metadata": {**old["metadata"]}}
        return self._record(key, "DELETED", gone, old)

    def _record(self, key, type_, obj, old) -> dict:
        self.rv += 1
        self.last_rv[key] = self.rv
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self.history.append(Event(self.rv, key, type_, obj, old))
        for listener in self.listeners:
            listener(key, type_, obj, old)
        self.changed.notify_all()
        return obj

    def _index_owners(self, uid, old_meta, new_meta):
        old_refs = (old_meta or {}).get("ownerReferences")
        new_refs = (new_meta or {}).get("ownerReferences")
        if old_refs is new_refs or old_refs == new_refs and old_meta is not None and new_meta is not None:
            return  # most writes are status updates that leave the owners alone
        old = {r.get("uid") for r in old_refs or []}
        new = {r.get("uid") for r in new_refs or []}
        for owner in old - new:
            self.dependents[owner].discard(uid)
            if not self.dependents[owner]:
                del self.dependents[owner]
        for owner in new - old:
            self.dependents[owner].add(uid)

    def dependents_of(self, owner_uid: str) -> list[tuple[str, dict]]:
        return [found for uid in list(self.dependents.get(owner_uid, ())) if (found := self.get_uid(uid))]

    # --- watch history ---------------------------------------------------------------------------------------

    def oldest_available(self) -> int:
        """The oldest resourceVersion a watch or a snapshot can start from (events after it are all still in the
        window): the history's horizon, as etcd's compaction is the real server's."""
        oldest = self.history[0].rv - 1 if self.history else self.rv
        return max(oldest, self.compacted)

    def compact(self) -> int:
        """Forget the history up to now, as etcd's compaction does: older watches and continue tokens expire."""
        self.history.clear()
        self.compacted = self.rv
        return self.rv

    def snapshot(self, key: str, namespace: str | None, rv: int) -> list[dict] | None:
        """The objects of a kind as they were at resourceVersion `rv`, in (namespace, name) order; None when the
        history no longer reaches back that far."""
        if rv >= self.rv:
            return list(self.iter(key, namespace))
        if rv < self.oldest_available():
            return None
        later = [e for e in self.history if e.rv > rv and e.key == key
                 and (namespace is None or e.obj["metadata"].get("namespace", "") == namespace)]
        if not later:
            return list(self.iter(key, namespace))
        objects = {(o["metadata"].get("namespace", ""), o["metadata"]["name"]): o for o in self.iter(key, namespace)}
        for event in reversed(later):  # undo the newer writes, newest first
            meta = event.obj["metadata"]
            where = (meta.get("namespace", ""), meta["name"])
            if event.type == "ADDED":
                objects.pop(where, None)
            else:
                objects[where] = event.old
        return [objects[k] for k in sorted(objects)]

    def events_since(self, rv: int) -> list[Event] | None:
        """Events with resourceVersion > rv, or None when some of them have left the window."""
        if rv >= self.rv:
            return []
        if rv < self.oldest_available():
            return None
        newer = []
        for event in reversed(self.history):  # new events sit at the right end: O(number returned)
            if event.rv <= rv:
                break
            newer.append(event)
        newer.reverse()
        return newer
