"""perf.json_values.has_huge_float: orjson's answer is json's unless it says otherwise (the workload list's cold
rows are decoded by orjson and sent to json when it does)."""

import json

import orjson
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
