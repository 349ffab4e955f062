"""The JSON parser of every API view: DRF's, with a bound on nesting and on numbers. A small body of 1,000 nested
arrays otherwise reaches the recursion limit in parsing, validation or error flattening (a 500); no request of this
API nests deeper than a few levels. A number beyond a double's range (`1e999`, valid JSON) reads as infinity, which
integer fields and lookups turn into an OverflowError (a 500): it is refused here, naming where it is."""

import math

from rest_framework import parsers
from rest_framework.exceptions import ParseError, ValidationError

MAX_DEPTH = 32


def nesting_depth(value) -> int:
    """How deep lists and objects nest in a parsed JSON value (iterative: it must not recurse itself)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, depth + 1) for child in children)
    return deepest


def out_of_range_numbers(value) -> list[str]:
    """Where a parsed JSON value holds an infinite number (`projectId`, `resources[0].gpu.deserved`)."""
    found, stack = [], [(value, "")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            found.append(where or "body")
        elif isinstance(item, dict):
            stack.extend((child, f"{where}.{key}" if where else str(key)) for key, child in item.items())
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{index}]") for index, child in enumerate(item))
    return sorted(found)


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(f"JSON parse error - nested deeper than {MAX_DEPTH} levels.") from None
        if nesting_depth(data) > MAX_DEPTH:
            raise ParseError(f"JSON parse error - nested deeper than {MAX_DEPTH} levels.")
        if out_of_range := out_of_range_numbers(data):
            raise ValidationError({where: ["A number within a double's range is required."] for where in out_of_range})
        return data
