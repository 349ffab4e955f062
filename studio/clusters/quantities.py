"""Strict Kubernetes resource quantities ("10M", "1Gi", "500m", "0.5", "1e3").

`kubernetes.utils.parse_quantity` is lenient: it feeds whatever precedes the suffix to `Decimal`, so
"NaN", " 1", "1_000", "-1" and "1Ki"'s cousin "1K" all pass. The Kubernetes grammar is checked here first,
and the value must be finite, non-negative and fit the int64 that Kubernetes stores quantities in.
"""

import math
import re
from decimal import Decimal, DecimalException

from kubernetes.utils import parse_quantity

# <number> = digits | digits.digits | digits. | .digits, then one suffix: binary SI (Ki … Ei),
# decimal SI (n u m "" k M G T P E) or a decimal exponent (e3, E-2). ASCII digits only: `\d` would take
# Arabic-Indic digits that Decimal accepts and Kubernetes does not.
QUANTITY_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+|[KMGTPE]i|[numkMGTPE])?")
MAX_QUANTITY = Decimal(2**63 - 1)
EXAMPLES = '"1Gi", "500m" or "0.5"'
TOO_LARGE = "Is too large: a quantity must not exceed 2^63-1."


def parse_quantity_strict(value) -> Decimal:
    """The value of a quantity string or JSON number; ValueError with a sentence when it is not one."""
    if isinstance(value, bool):
        raise ValueError(f"Must be a quantity such as {EXAMPLES}, not a boolean.")
    if isinstance(value, int):
        number = Decimal(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("Must be a finite number.")
        number = Decimal(repr(value))  # 0.1 means 0.1, not its binary expansion
    elif isinstance(value, str):
        number = _parse_text(value)
    else:
        raise ValueError(f"Must be a quantity such as {EXAMPLES}.")
    if number < 0:
        raise ValueError("Must not be negative.")
    if number > MAX_QUANTITY:
        raise ValueError(TOO_LARGE)
    return number


def _parse_text(text: str) -> Decimal:
    if not QUANTITY_RE.fullmatch(text):
        raise ValueError(
            f"Must be a quantity such as {EXAMPLES}: a number with an optional suffix, no spaces."
        )
    try:
        return parse_quantity(text)
    except (ValueError, DecimalException):
        # Only exponents beyond Decimal's context get here: the grammar was checked above.
        raise ValueError("Must not be negative." if text.startswith("-") else TOO_LARGE) from None
