"""The API's JSON renderer (studio/renderers.py, orjson) writes what DRF's JSONRenderer writes."""

import datetime
import decimal
import json
import uuid

import pytest
from django.utils.functional import lazy
from hypothesis import given
from hypothesis import strategies as st
from rest_framework.renderers import JSONRenderer as DRFRenderer

from studio.renderers import JSONRenderer, RawJSON, encode

# Floats without an exponent: the one place the two differ in bytes is a negative exponent (1e-07 / 1e-7).
plain_floats = st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: f == 0 or 1e-4 <= abs(f) < 1e16)
scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**64 - 1) | plain_floats
           | st.text() | st.sampled_from(["line\u2028sep", "para\u2029sep", "é日本", "</script>"])
           | st.datetimes(timezones=st.sampled_from([datetime.UTC, None])) | st.dates() | st.uuids()
           | st.decimals(allow_nan=False, allow_infinity=False, places=3, max_value=10**9, min_value=-(10**9)))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=8) | st.integers(0, 9), inner, max_size=4), max_leaves=30)


@given(values)
def test_the_bytes_are_drfs(value):
    assert JSONRenderer().render(value) == DRFRenderer().render(value)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_any_float_is_the_same_number(value):
    assert json.loads(JSONRenderer().render([value])) == json.loads(DRFRenderer().render([value]))


def test_what_orjson_cannot_write_goes_to_drf():
    big = {"n": 2**70, "lazy": lazy(lambda: "text", str)(), "when": datetime.datetime(2026, 1, 2, 3, 4, 5, 678901,
                                                                                       tzinfo=datetime.UTC)}
    assert JSONRenderer().render(big) == DRFRenderer().render(big)
    assert JSONRenderer().render(big) == b'{"n":1180591620717411303424,"lazy":"text","when":"2026-01-02T03:04:05.678901Z"}'
    assert JSONRenderer().render(None) == b""
    with pytest.raises(TypeError):
        JSONRenderer().render({"x": object()})
    assert JSONRenderer().render([decimal.Decimal("1.5"), uuid.UUID(int=7)]) == b'[1.5,"00000000-0000-0000-0000-000000000007"]'


def test_the_api_answers_compact_and_indents_when_asked(org, client_for):
    api = client_for(org.users.member)
    compact = api.get("/api/v1/me")
    assert compact.status_code == 200 and compact["Content-Type"] == "application/json"
    assert compact.content == json.dumps(compact.json(), separators=(",", ":"), ensure_ascii=False).encode()
    indented = api.get("/api/v1/me", HTTP_ACCEPT="application/json; indent=2")
    assert indented.content == json.dumps(compact.json(), indent=2, ensure_ascii=False).encode()


def test_a_row_encoded_before_is_written_as_it_is_by_orjson_and_by_drf():
    raw = RawJSON(encode({"a": 1, "b": "é"}))
    data = {"rows": [raw, {"c": 2}], "next": None}
    assert JSONRenderer().render(data) == '{"rows":[{"a":1,"b":"é"},{"c":2}],"next":null}'.encode()
    indented = JSONRenderer().render(data, "application/json; indent=2")  # DRF's path
    assert indented.startswith(b'{\n  "rows"') and json.loads(indented) == {"rows": [{"a": 1, "b": "é"}, {"c": 2}],
                                                                               "next": None}
