"""Strict Kubernetes quantities: the grammar agrees with kubernetes' parse_quantity, everything else is refused."""

from decimal import Decimal

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st
from kubernetes.utils import parse_quantity

from studio.clusters.quantities import MAX_QUANTITY
from workloads.specs import parse_quantity_strict

digits = st.text("0123456789", min_size=1, max_size=12)
numbers = st.one_of(
    digits,
    st.builds(lambda a, b: f"{a}.{b}", digits, digits),
    st.builds(lambda a: f"{a}.", digits),
    st.builds(lambda b: f".{b}", digits),
)
suffixes = st.one_of(
    st.sampled_from(["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E"]),
    st.builds(
        lambda e, sign, n: f"{e}{sign}{n}",
        st.sampled_from("eE"),
        st.sampled_from(["", "+", "-"]),
        st.integers(0, 40),
    ),
)
quantities = st.builds(
    lambda sign, number, suffix: sign + number + suffix, st.sampled_from(["", "+"]), numbers, suffixes
)


@given(quantities)
@example("10M")
@example("1Gi")
@example("500m")
@example("0.5")
@example("1E")
@example("1e3")
def test_every_quantity_of_the_grammar_parses_as_kubernetes_does(text):
    expected = parse_quantity(text)
    if expected > MAX_QUANTITY:
        with pytest.raises(ValueError, match="too large"):
            parse_quantity_strict(text)
    else:
        assert parse_quantity_strict(text) == expected


@given(quantities, st.data())
def test_whitespace_anywhere_is_refused(text, data):
    at = data.draw(st.integers(0, len(text)))
    space = data.draw(st.sampled_from([" ", "\t", "\n", "\u00a0"]))
    with pytest.raises(ValueError):
        parse_quantity_strict(text[:at] + space + text[at:])


@given(quantities)
def test_negatives_are_refused(text):
    assume(parse_quantity(text) != 0)
    with pytest.raises(ValueError, match="negative"):
        parse_quantity_strict("-" + text.lstrip("+"))


@given(st.integers(max_value=-1) | st.floats(max_value=-1e-9, allow_nan=False, allow_infinity=False))
def test_negative_numbers_are_refused(number):
    with pytest.raises(ValueError, match="negative"):
        parse_quantity_strict(number)


@pytest.mark.parametrize(
    "value",
    [
        "NaN", "nan", "inf", "-inf", "Infinity", "sNaN", float("nan"), float("inf"), float("-inf"),
        "", " ", "1 Gi", " 1", "1\n", "1_000", "0x10", "1K", "1ki", "1mi", "1MB", "1e", "1e3M", "1.5.2", "--1",
        "\u0661", "１", True, False, None, [1], {"value": 1}, "1e99999999999",
    ],
)  # fmt: skip
def test_malformed_quantities_are_refused_with_a_sentence(value):
    with pytest.raises(ValueError) as info:
        parse_quantity_strict(value)
    message = str(info.value)
    assert message[0].isupper() and message.endswith(".")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("10M", Decimal(10**7)),
        ("1Gi", Decimal(2**30)),
        ("500m", Decimal("0.5")),
        ("0.5", Decimal("0.5")),
        ("+.5k", Decimal(500)),
        ("1e3", Decimal(1000)),
        ("2E-1", Decimal("0.2")),
        ("1E", Decimal(10**18)),
        ("7Ei", Decimal(7 * 2**60)),
        (2, Decimal(2)),
        (0.1, Decimal("0.1")),
        ("0", Decimal(0)),
        (str(2**63 - 1), MAX_QUANTITY),
    ],
)
def test_quantity_values(value, expected):
    assert parse_quantity_strict(value) == expected


def test_the_largest_int64_is_the_limit():
    with pytest.raises(ValueError, match="too large"):
        parse_quantity_strict(str(2**63))
    with pytest.raises(ValueError, match="too large"):
        parse_quantity_strict("8Ei")
