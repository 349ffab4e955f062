"""JSON text decoded by orjson (several times faster than the standard library's json) with json's values: the one
difference, an integer beyond 64 bits (which orjson reads as a float where json reads an int), sends the text to
json, as does anything orjson refuses (NaN, which json writes for a float nan on SQLite)."""

import json

import orjson

BEYOND_64_BITS = 2.0**63


def loads(text: str):
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)
    return json.loads(text) if has_huge_float(value) else value


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
