"""perf.json_values.has_huge_float: orjson's answer is json's unless it says otherwise (the workload list's cold
rows are decoded by orjson and sent to json when it does); api_answer: a Kubernetes API answer read as json reads it."""

import json

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from perf import json_values

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**80), max_value=2**80),
                     st.floats(allow_nan=False, allow_infinity=False), st.text())
_JSON = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=5), inner, max_size=4)),
                     max_leaves=20)


@given(_JSON)
def test_orjson_reads_what_json_reads_unless_a_huge_float_is_found(value):
    text = json.dumps(value)
    fast = orjson.loads(text)
    if not json_values.has_huge_float(fast):
        assert json.dumps(fast) == json.dumps(json.loads(text))  # same values, same types: an int stays an int


def test_integers_beyond_64_bits_are_found_at_any_depth():
    assert json_values.has_huge_float(orjson.loads("[18446744073709551616]"))
    assert json_values.has_huge_float(orjson.loads('{"a": [{"b": -9223372036854775809}]}'))
    assert not json_values.has_huge_float(orjson.loads('{"a": [9223372036854775807, 1.5, "x"]}'))


# The numbers a Kubernetes API server sends: 64-bit integers and floats; and, from a server that is not one, NaN and
# the infinities (json writes them; orjson refuses them).
_API_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**63), max_value=2**64 - 1),
                         st.floats(), st.text())
_API_JSON = st.recursive(_API_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=4)), max_leaves=20)


@given(_API_JSON)
def test_an_api_answer_is_read_as_json_reads_it(value):
    text = json.dumps(value)
    for data in (text, text.encode()):
        assert repr(json_values.api_answer(data)) == repr(json.loads(text))  # NaN != NaN; its repr is the same


def test_text_that_is_not_json_is_refused_as_json_refuses_it():
    for text in ('{"a": ', "<html>", '{"a": 1} x'):
        with pytest.raises(ValueError):
            json_values.api_answer(text)
