"""JSON read keeping only the fields its reader uses: msgspec decodes the text against a shape (nested TypedDicts)
and skips every other field in C, without building it. Plain dicts and lists come out, as json would give them, so
the reader cannot tell, except that the fields it does not read are absent.

The cluster watcher reads a LIST page of 500 pods this way and trims each pod as before
(`workloads/cluster/informer.py` `KEPT`): on the simulated cluster's pods 23.6 → 14.8 µs a pod, on its Jobs 24.8 →
8.9 µs (orjson's whole decoding was 11.0 and 17.9 µs of that); figures in docs/performance.md.

A shape is a dict of field name to a shape, `[shape]` for a list of them, or `ANY` for a value kept whole. Every
field is optional, and each object or list may be null. A value of another type than its shape's (a string where
an object is expected) fails the whole text, which is then read whole (`answer`, `watch_event`): what the reader
gets is then exactly what it got before."""

import json
from typing import Any, TypedDict

import msgspec

ANY = Any


def _type(shape, name: str):
    if shape is ANY:
        return Any
    if isinstance(shape, list):
        (item,) = shape
        return list[_type(item, name + "Item")] | None
    fields = {key: _type(value, name + "_" + "".join(c for c in key if c.isalnum())) for key, value in shape.items()}
    return TypedDict(name, fields, total=False) | None


def list_decoder(item: dict) -> msgspec.json.Decoder:
    """A decoder of a LIST page (its metadata's resourceVersion and continue token, its items) of objects kept as
    `item` says."""
    return msgspec.json.Decoder(_type({"metadata": {"resourceVersion": ANY, "continue": ANY}, "items": [item]},
                                      "Page"))


def event_decoder(item: dict) -> msgspec.json.Decoder:
    """A decoder of one watch event (its type, its object kept as `item` says)."""
    return msgspec.json.Decoder(_type({"type": ANY, "object": item}, "Event"))


class Kept(dict):
    """An answer (a LIST page, a watch event) that `answer` decoded keeping only its shape's fields: a reader may
    rely on that (the watcher trims such an answer's objects reusing their parts, `informer.trim_kept`); a text read
    whole is a plain dict."""


def answer(data: bytes, decoder: msgspec.json.Decoder):
    """`data` decoded as the shape of `decoder` keeps it (a `Kept`), or None when it holds a value of another type
    (then it is read whole by the caller's own reader)."""
    try:
        found = decoder.decode(data)
    except msgspec.DecodeError:  # also a ValidationError: a value of another type than its shape's
        return None
    return Kept(found) if isinstance(found, dict) else found


def watch_event(data: bytes, decoder: msgspec.json.Decoder | None) -> dict:
    """One watch event's JSON line, kept as `decoder`'s shape says; an ERROR event (a Status, not an object of the
    kind) and one the shape does not fit are read whole."""
    if decoder is not None:
        event = answer(data, decoder)
        if event is not None and event.get("type") != "ERROR":
            return event
    return json.loads(data)

