"""Field rules of the assets' specs, as data: each rule checks a JSON value and documents itself as an OpenAPI
schema, so that one table (assets/specs.py) is both the validation of a request and what `/api/schema/` says.

Pure: no models, no Kubernetes client. A rule's `check(value, path)` returns [(dotted path, message)], every
problem at once; `None` is accepted wherever Run:ai's schemas say `nullable` (all spec fields do)."""

import re
import uuid
from dataclasses import dataclass, field

from studio.clusters.quantities import parse_quantity_strict

Problems = list[tuple[str, str]]


@dataclass(frozen=True)
class Rule:
    openapi: dict
    kind: str = "any"  # text, boolean, integer, number, choice, quantity, uuid, list, object
    choices: tuple = ()
    minimum: float | None = None
    maximum: float | None = None
    pattern: str | None = None
    max_length: int | None = None
    items: "Rule | None" = None
    fields: dict = field(default_factory=dict)
    required: tuple = ()
    secret: bool = False  # stored encrypted, never answered

    def check(self, value, path: str) -> Problems:
        if value is None:
            return []
        return _CHECKS[self.kind](self, value, path)


def _text(rule, value, path):
    if not isinstance(value, str):
        return [(path, "Must be text.")]
    if not value:
        return [(path, "Must not be empty.")]
    if rule.max_length and len(value) > rule.max_length:
        return [(path, f"Must be at most {rule.max_length} characters.")]
    if rule.pattern and not re.fullmatch(rule.pattern, value):
        return [(path, f"Must match {rule.pattern}.")]
    if "\x00" in value:
        return [(path, "Must not hold a NUL character.")]
    return []


def _number(rule, value, path):
    integral = rule.kind == "integer"
    if isinstance(value, bool) or not isinstance(value, int if integral else (int, float)):
        return [(path, "Must be an integer." if integral else "Must be a number.")]
    if not integral and value != value or value in (float("inf"), float("-inf")):
        return [(path, "Must be a finite number.")]
    if rule.minimum is not None and value < rule.minimum:
        return [(path, f"Must be at least {rule.minimum:g}.")]
    if rule.maximum is not None and value > rule.maximum:
        return [(path, f"Must be at most {rule.maximum:g}.")]
    return []


def _boolean(rule, value, path):
    return [] if isinstance(value, bool) else [(path, "Must be true or false.")]


def _choice(rule, value, path):
    return [] if value in rule.choices else [(path, f"Must be one of {', '.join(rule.choices)}.")]


def _quantity(rule, value, path):
    if not isinstance(value, str):
        return [(path, 'Must be a quantity as text, such as "1Gi" or "500m".')]
    try:
        parse_quantity_strict(value)
    except ValueError as exc:
        return [(path, str(exc))]
    return []


def _uuid(rule, value, path):
    try:
        uuid.UUID(value) if isinstance(value, str) else None.hex
    except (ValueError, AttributeError):
        return [(path, "Must be a UUID.")]
    return []


def _list(rule, value, path):
    if not isinstance(value, list):
        return [(path, "Must be a list.")]
    problems = []
    for index, item in enumerate(value):
        problems += rule.items.check(item, f"{path}[{index}]") if item is not None else [
            (f"{path}[{index}]", "Must not be null.")]
    return problems


def _object(rule, value, path):
    return check_object(rule.fields, rule.required, value, path)


def check_object(fields: dict, required, value, path: str) -> Problems:
    """Every problem of a JSON object against its fields: wrong types, unknown keys, missing required keys."""
    if not isinstance(value, dict):
        return [(path, "Must be an object.")]
    where = f"{path}." if path else ""
    problems = [(f"{where}{key}", "Is not a field of this object.") for key in value if key not in fields]
    problems += [(f"{where}{key}", "This field is required.") for key in required if value.get(key) in (None, "")]
    for key, rule in fields.items():
        if key in value:
            problems += rule.check(value[key], f"{where}{key}")
    return problems


_CHECKS = {"text": _text, "integer": _number, "number": _number, "boolean": _boolean, "choice": _choice,
           "quantity": _quantity, "uuid": _uuid, "list": _list, "object": _object, "any": lambda r, v, p: []}
_NULLABLE = {"nullable": True}


def text(*, pattern=None, max_length=None, secret=False) -> Rule:
    schema = {"type": "string", "minLength": 1, **_NULLABLE}
    if max_length:
        schema["maxLength"] = max_length
    return Rule(schema, "text", pattern=pattern, max_length=max_length, secret=secret)


def boolean() -> Rule:
    return Rule({"type": "boolean", **_NULLABLE}, "boolean")


def integer(minimum=None, maximum=None) -> Rule:
    schema = {"type": "integer", "format": "int64", **_NULLABLE}
    schema.update({k: v for k, v in (("minimum", minimum), ("maximum", maximum)) if v is not None})
    return Rule(schema, "integer", minimum=minimum, maximum=maximum)


def number(minimum=0) -> Rule:
    return Rule({"type": "number", "format": "double", "minimum": minimum, **_NULLABLE}, "number", minimum=minimum)


def choice(*values) -> Rule:
    return Rule({"type": "string", "enum": list(values), **_NULLABLE}, "choice", choices=values)


def quantity() -> Rule:
    return Rule({"type": "string", **_NULLABLE}, "quantity")


def uuid_ref() -> Rule:
    return Rule({"type": "string", "format": "uuid", **_NULLABLE}, "uuid")


def list_of(item: Rule) -> Rule:
    return Rule({"type": "array", "items": {k: v for k, v in item.openapi.items() if k != "nullable"},
                 **_NULLABLE}, "list", items=item)


def obj(fields: dict, required=()) -> Rule:
    schema = {"type": "object", "properties": {k: r.openapi for k, r in fields.items()}, **_NULLABLE}
    if required:
        schema["required"] = list(required)
    return Rule(schema, "object", fields=fields, required=tuple(required))
