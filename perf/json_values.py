"""When orjson's reading of JSON text differs from json's: orjson reads an integer beyond 64 bits as a float, json
as an int. The workload list's cold rows (`workloads/api/list_rows.py` `full_row`) are decoded by orjson, several
times faster than json, and sent to json where `has_huge_float` finds such a value in their JSON columns. The
Kubernetes API's answers are decoded by orjson with no such check (`api_answer`)."""

import json

import orjson

from perf import kept_json

BEYOND_64_BITS = 2.0**63


def api_answer(data, kept=None):
    """A Kubernetes API server's JSON answer (a LIST page, an object), decoded by orjson: a page of 500 pods in 5.7 µs
    a pod against json's 14.5 (the watcher's LISTs at 100,000 workloads, docs/performance.md). Not a watch's events,
    which json reads: decoded by orjson, the watcher held 225 MiB after `bench.watch`'s burst at 10,000 workloads,
    against 146 MiB with json.
    No integer beyond 64 bits can be in it, so orjson reads it as json does: the API server decodes every number
    into a 64-bit integer or a float before it keeps it (typed fields are int32 or int64; a custom resource's
    numbers int64 or float64). Text orjson refuses (NaN, a lone surrogate) goes to json, which reads it as before.
    `kept` (`perf.kept_json`): a decoder that keeps only the fields its reader uses; text it does not fit is read
    whole, as without it."""
    if kept is not None:
        found = kept_json.answer(data, kept)
        if found is not None:
            return found
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


def has_huge_float(value) -> bool:
    """Whether a decoded JSON value holds a float of an integer's size beyond 64 bits (a float as big sends its
    text to json too, which reads the same float). Scalars are checked inline: this runs on every value read."""
    kind = type(value)
    if kind is dict:
        value = value.values()
    elif kind is not list:
        return kind is float and abs(value) >= BEYOND_64_BITS
    for item in value:
        kind = type(item)
        if kind is float:
            if abs(item) >= BEYOND_64_BITS:
                return True
        elif (kind is dict or kind is list) and has_huge_float(item):
            return True
    return False
