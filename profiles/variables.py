"""Typed template variables: coercion of a given value to its type, and its constraints. Pure.

Values come from JSON (the API) or from form fields (strings), so numbers and booleans are also taken as
their usual text ("2", "0.5", "true"); anything else of the wrong type is an InputError whose message the
caller files under the input's name."""

import math
import re
from decimal import Decimal

from studio.clusters.quantities import parse_quantity_strict

TYPES = ("string", "integer", "number", "boolean", "enum", "quantity", "secret")
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
_INTEGER_RE = re.compile(r"\s*[-+]?[0-9]+\s*")
_NUMBER_RE = re.compile(r"\s*[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\s*")
BOUNDED = ("integer", "number", "quantity")
PATTERNED = ("string", "secret")


class InputError(ValueError):
    """A value that does not fit its variable; str() is the sentence to show."""


def coerce(kind: str, value, *, options=None):
    """The typed value of `value` for a variable of type `kind`, or InputError."""
    if kind in ("string", "secret"):
        if not isinstance(value, str):
            raise InputError("Must be a string.")
        return value
    if kind == "integer":
        if isinstance(value, bool):
            raise InputError("Must be an integer.")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            return int(value)
        if isinstance(value, str) and _INTEGER_RE.fullmatch(value):
            return int(value)
        raise InputError("Must be an integer.")
    if kind == "number":
        if isinstance(value, bool):
            raise InputError("Must be a number.")
        if isinstance(value, int) or (isinstance(value, float) and math.isfinite(value)):
            return value
        if isinstance(value, str) and _NUMBER_RE.fullmatch(value):
            return int(value) if _INTEGER_RE.fullmatch(value) else float(value)
        raise InputError("Must be a number.")
    if kind == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise InputError("Must be true or false.")
    if kind == "enum":
        if not isinstance(value, str) or value not in (options or ()):
            raise InputError(f"Must be one of: {', '.join(map(str, options or ()))}.")
        return value
    if kind == "quantity":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = _number_text(value)
        if not isinstance(value, str):
            raise InputError('Must be a quantity such as "1Gi", "500m" or "2".')
        try:
            parse_quantity_strict(value)
        except ValueError as exc:
            raise InputError(str(exc)) from None
        return value
    raise InputError(f"Unknown type {kind!r}.")


def check(variable: dict, value) -> None:
    """Constraints of the variable (min, max, pattern) on a typed value; InputError when one fails."""
    kind = variable.get("type")
    low, high = variable.get("min"), variable.get("max")
    if kind in BOUNDED and (low is not None or high is not None):
        size = measure(kind, value)
        if low is not None and size < measure(kind, low):
            raise InputError(f"Must be at least {low}.")
        if high is not None and size > measure(kind, high):
            raise InputError(f"Must be at most {high}.")
    pattern = variable.get("pattern")
    if kind in PATTERNED and pattern and re.fullmatch(pattern, value) is None:
        raise InputError(f"Must match the pattern {pattern}." if kind == "string" else "Does not match the pattern.")


def sample(variable: dict):
    """A value of the variable's type to render a template with when it has no default (save-time check)."""
    kind, low = variable.get("type"), variable.get("min")
    if kind in ("integer", "number"):
        if low is not None:
            return low
        high = variable.get("max")
        return high if high is not None and high < 1 else 1
    if kind == "quantity":
        return low if low is not None else "1"
    if kind == "boolean":
        return False
    if kind == "enum":
        return (variable.get("options") or [""])[0]
    return "sample"


def measure(kind: str, value) -> Decimal:
    if kind == "quantity":
        return parse_quantity_strict(value if isinstance(value, str) else _number_text(value))
    return Decimal(str(value))


def _number_text(value) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
