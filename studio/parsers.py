"""The JSON parser of every API view: DRF's, with a bound on nesting. A small body of 1,000 nested arrays
otherwise reaches the recursion limit in parsing, validation or error flattening (a 500); no request of this
API nests deeper than a few levels."""

from rest_framework import parsers
from rest_framework.exceptions import ParseError

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


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(f"JSON parse error - nested deeper than {MAX_DEPTH} levels.") from None
        if nesting_depth(data) > MAX_DEPTH:
            raise ParseError(f"JSON parse error - nested deeper than {MAX_DEPTH} levels.")
        return data
