"""The API's JSON renderer: the bytes DRF's JSONRenderer writes (compact, UTF-8, U+2028/U+2029 escaped, DRF's own
rendering of dates, decimals and lazy strings), encoded by orjson. Encoding was a tenth of a 100-row list's CPU with
the standard library's encoder. Whatever orjson will not encode as DRF would (an indent asked for in the Accept
header, an integer beyond 64 bits) goes to DRF's renderer unchanged."""

import json

import orjson
from rest_framework.renderers import JSONRenderer as DRFJSONRenderer
from rest_framework.utils import encoders

# Dates and times pass through to DRF's encoder (orjson writes `+00:00` where DRF writes `Z`, and naive times
# differently); keys that are not strings are written as the standard library writes them.
_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME
_drf_default = encoders.JSONEncoder().default


class RawJSON:
    """A value already encoded by `encode` (a list's kept row, workloads.api.list_rows): written as it is."""

    __slots__ = ("fragment", "raw")

    def __init__(self, raw: bytes):
        self.raw, self.fragment = raw, orjson.Fragment(raw)


def _default(value):
    if type(value) is RawJSON:
        return value.fragment
    return _drf_default(value)


def encode(data) -> bytes | None:
    """orjson's bytes for what it writes as DRF does (the renderer's common case); None for the rest."""
    try:
        return orjson.dumps(data, default=_default, option=_OPTIONS)
    except orjson.JSONEncodeError:
        return None


class _DRFEncoder(encoders.JSONEncoder):
    def default(self, obj):
        if type(obj) is RawJSON:
            return json.loads(obj.raw)
        return super().default(obj)


class JSONRenderer(DRFJSONRenderer):
    encoder_class = _DRFEncoder  # where DRF renders (an indent asked for, numbers beyond 64 bits)

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        if self.ensure_ascii or not self.compact or self.get_indent(accepted_media_type, renderer_context or {}):
            return super().render(data, accepted_media_type, renderer_context)
        body = encode(data)
        if body is None:
            return super().render(data, accepted_media_type, renderer_context)
        if b"\xe2\x80\xa8" in body or b"\xe2\x80\xa9" in body:  # as DRF: safe inside a <script> too
            body = body.replace(b"\xe2\x80\xa8", b"\\u2028").replace(b"\xe2\x80\xa9", b"\\u2029")
        return body
