"""Kubernetes resource quantities ("500m", "1Gi", "2", "1e3") as floats, and back."""

import re

_SCALE = {
    "n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
    "Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50, "Ei": 2.0**60,
}
_RE = re.compile(r"^([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?[0-9]+))?$")
# The message the real API server gives when a quantity does not decode.
PATTERN_MESSAGE = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def parse(value) -> float:
    """Return the quantity's value in base units (cores, bytes, devices); ValueError if malformed."""
    if isinstance(value, bool):
        raise ValueError(PATTERN_MESSAGE)
    if isinstance(value, (int, float)):
        return float(value)
    match = _RE.match(str(value))
    if not match:
        raise ValueError(PATTERN_MESSAGE)
    number, suffix, exponent = match.groups()
    if exponent is not None:
        return float(number) * 10.0 ** int(exponent)
    return float(number) * _SCALE[suffix or ""]


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
