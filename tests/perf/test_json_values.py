"""perf.json_values.loads: orjson's speed, json's values (the catalog's and the workload list's JSON columns)."""

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from perf import json_values

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**80), max_value=2**80),
                     st.floats(allow_nan=False, allow_infinity=False), st.text())
_JSON = st.recursive(_SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=5), inner, max_size=4)),
                     max_leaves=20)


@given(_JSON)
def test_loads_reads_what_json_reads_integers_beyond_64_bits_too(value):
    text = json.dumps(value)
    loaded = json_values.loads(text)
    assert loaded == json.loads(text)
    assert json.dumps(loaded) == json.dumps(json.loads(text))  # same types: an int stays an int


def test_text_orjson_refuses_is_read_by_json():
    assert math.isnan(json_values.loads('{"x": NaN}')["x"])
    assert json_values.loads('[18446744073709551616, {"a": [-9223372036854775809]}]') == [2**64, {"a": [-(2**63) - 1]}]
