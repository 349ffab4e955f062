"""When orjson's reading of JSON text differs from json's: orjson reads an integer beyond 64 bits as a float, json
as an int. The workload list's cold rows (`workloads/api/list_rows.py` `full_row`) are decoded by orjson, several
times faster than json, and sent to json where `has_huge_float` finds such a value in their JSON columns."""

BEYOND_64_BITS = 2.0**63


def has_huge_float(value) -> bool:
    """Whether a decoded JSON value holds a float of an integer's size beyond 64 bits (a float as big sends its
    text to json too, which reads the same float). Scalars are checked inline: this runs on every value read."""
    kind = type(value)
    if kind is dict:
        value = value.values()
    elif kind is not list:
        return kind is float and abs(value) >= BEYOND_64_BITS
    for item in value:
        kind = type(item)
        if kind is float:
            if abs(item) >= BEYOND_64_BITS:
                return True
        elif (kind is dict or kind is list) and has_huge_float(item):
            return True
    return False
