"""Kubernetes resource quantities ("500m", "1Gi", "2", "1e3"): checked against the API server's grammar, valued by
the Kubernetes client's `parse_quantity` (exact decimals), and handed on as floats; and back."""

import re

from kubernetes.utils import parse_quantity

# The forms the real API server takes: a number, then a binary or decimal suffix or an exponent.
_RE = re.compile(r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$")
# The message the real API server gives when a quantity does not decode.
PATTERN_MESSAGE = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def parse(value) -> float:
    """Return the quantity's value in base units (cores, bytes, devices); ValueError if malformed."""
    if isinstance(value, bool):
        raise ValueError(PATTERN_MESSAGE)
    if isinstance(value, (int, float)):
        return float(value)
    if not _RE.match(str(value)):
        raise ValueError(PATTERN_MESSAGE)
    return float(parse_quantity(str(value)))


def parse_or_zero(value) -> float:
    try:
        return parse(value)
    except ValueError:
        return 0.0


def cpu_nanocores(cores: float) -> str:
    """metrics-server reports CPU usage in nanocores, e.g. "123456789n"."""
    return f"{max(0, int(cores * 1e9))}n"


def memory_kibibytes(num_bytes: float) -> str:
    """metrics-server reports memory usage in Ki, e.g. "523264Ki"."""
    return f"{max(0, int(num_bytes // 1024))}Ki"
