"""core/v1 Events as the kubelet, scheduler and controllers record them: deduplicated by (object, reason,
message) with a count, named `<object>.<hex nanos>`, expiring after a TTL like the real server's."""

import time

from ..store import now_rfc3339, parse_rfc3339

EVENT_TTL_SECONDS = 3600.0


class Recorder:
    def __init__(self, controller):
        self.ctl, self.store = controller, controller.store
        self._seen = {}  # (involved uid, reason, message) -> event name

    def emit(self, obj: dict, type_: str, reason: str, message: str, component: str, host: str = "",
             field_path: str = "", at: str | None = None) -> None:
        """`at`: when the component recorded it, where it reaches the server later (a recorder's queue)."""
        meta = obj["metadata"]
        namespace = meta.get("namespace") or "default"
        ns = self.store.get("namespaces", None, namespace)
        if ns is None or ns["metadata"].get("deletionTimestamp"):
            return  # the real server refuses new content in a terminating namespace
        now = at or now_rfc3339()
        key = (meta["uid"], reason, message)
        existing = self._seen.get(key)
        current = self.store.get("events", namespace, existing) if existing else None
        if current is not None:
            self.store.update("events", {**current, "metadata": dict(current["metadata"]), "lastTimestamp": now,
                                         "count": current.get("count", 1) + 1})
            return
        name = f"{meta['name']}.{time.time_ns():x}"
        involved = {"kind": obj.get("kind"), "namespace": meta.get("namespace"), "name": meta["name"],
                    "uid": meta["uid"], "apiVersion": obj.get("apiVersion"),
                    "resourceVersion": meta.get("resourceVersion")}
        if field_path:
            involved["fieldPath"] = field_path
        event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": namespace},
                 "involvedObject": {k: v for k, v in involved.items() if v is not None}, "reason": reason,
                 "message": message, "source": {"component": component, **({"host": host} if host else {})},
                 "firstTimestamp": now, "lastTimestamp": now, "count": 1, "type": type_, "eventTime": None,
                 "reportingComponent": component, "reportingInstance": host}
        self.store.create("events", event)
        self._seen[key] = name
        self.ctl.after(EVENT_TTL_SECONDS, "events", namespace, name)

    def expire(self, event: dict) -> None:
        last = parse_rfc3339(event["lastTimestamp"])
        if time.time() - last < EVENT_TTL_SECONDS:
            self.ctl.after(EVENT_TTL_SECONDS - (time.time() - last), "events", event["metadata"]["namespace"],
                           event["metadata"]["name"])
            return
        involved = event["involvedObject"]
        self._seen.pop((involved.get("uid"), event["reason"], event["message"]), None)
        self.store.remove("events", event["metadata"]["namespace"], event["metadata"]["name"])
