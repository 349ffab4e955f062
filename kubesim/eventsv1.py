"""events.k8s.io/v1 Events: the same objects as core/v1 Events, seen through the newer API's field names, as the
real server stores one kind and converts (pkg/apis/events/v1 conversion): regarding <-> involvedObject,
note <-> message, reportingController <-> reportingComponent, deprecated* <-> source, first/lastTimestamp, count.
"""

from __future__ import annotations

import contextvars

# Set while a request through events.k8s.io/v1 is served: that API's update rules differ from core/v1's.
THROUGH_V1 = contextvars.ContextVar("events_v1_request", default=False)
# What an update through events.k8s.io/v1 may not change (core/v1 names, in the real server's order): all but the
# metadata and `series` (ValidateEventUpdate); core/v1, the legacy API, may change any of them.
IMMUTABLE_THROUGH_V1 = ("involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp", "count",
                        "type", "eventTime", "action", "related", "reportingComponent", "reportingInstance")
GROUP_KEY = "events.events.k8s.io"
API_VERSION = "events.k8s.io/v1"
# events.k8s.io/v1 field -> core/v1 field, for the fields that differ
_RENAMED = {"regarding": "involvedObject", "note": "message", "reportingController": "reportingComponent",
            "deprecatedSource": "source", "deprecatedFirstTimestamp": "firstTimestamp",
            "deprecatedLastTimestamp": "lastTimestamp", "deprecatedCount": "count"}
_SHARED = ("metadata", "eventTime", "series", "action", "reason", "related", "reportingInstance", "type")


def to_core(event: dict) -> dict:
    if not isinstance(event, dict):
        return event
    out = {"apiVersion": "v1", "kind": "Event"}
    out.update({k: event[k] for k in _SHARED if k in event})
    out.update({core: event[v1] for v1, core in _RENAMED.items() if v1 in event})
    return out


def from_core(event: dict) -> dict:
    out = {"kind": "Event", "apiVersion": API_VERSION}
    out.update({k: event[k] for k in _SHARED if event.get(k) not in (None, "", {}, [])})
    out.update({v1: event[core] for v1, core in _RENAMED.items() if event.get(core) not in (None, "", {}, [], 0)})
    return out


def from_core_list(listed: dict) -> dict:
    # Items of a typed list carry no kind or apiVersion.
    items = [{k: v for k, v in from_core(item).items() if k not in ("kind", "apiVersion")} for item in listed["items"]]
    return {**listed, "kind": "EventList", "apiVersion": API_VERSION, "items": items}


def request_body(raw: bytes, content_type: str, verb: str) -> bytes:
    """A create, update or patch body in events.k8s.io/v1 terms, rewritten in core/v1 terms."""
    import json

    import yaml

    if not raw:
        return raw
    ctype = content_type.split(";")[0].strip().lower()
    try:
        body = yaml.safe_load(raw) if ctype == "application/apply-patch+yaml" else json.loads(raw)
    except (ValueError, yaml.YAMLError):
        return raw  # the API answers the decoding error
    if verb in ("create", "update") or ctype == "application/apply-patch+yaml":
        body = to_core(body)
    elif ctype == "application/json-patch+json" and isinstance(body, list):
        for op in body:
            for key in ("path", "from"):
                if isinstance(op, dict) and isinstance(op.get(key), str):
                    head, _, rest = op[key].lstrip("/").partition("/")
                    op[key] = "/" + "/".join(p for p in (_RENAMED.get(head, head), rest) if p)
    elif isinstance(body, dict):
        body = {_RENAMED.get(k, k): v for k, v in body.items()}
    return json.dumps(body).encode()


def response_body(body):
    if isinstance(body, dict) and body.get("kind") == "EventList":
        return from_core_list(body)
    if isinstance(body, dict) and body.get("kind") == "Event":
        return from_core(body)
    return body
