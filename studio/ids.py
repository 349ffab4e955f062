"""Ids as the API and the pages take them: the one parser of a database id from text (a path segment, a query
parameter, a form value, a filter's value).

`str.isdigit()` then `int()` is not it: `"²".isdigit()` is true and `int("²")` raises (a 500), while `int("٣")` is 3
(another object than the text names), and a number beyond 64 bits overflows the database driver. An id here is
ASCII digits (an optional minus sign where a filter compares), within a signed 64-bit integer — every integer key
PaaS Studio has fits it, on SQLite and PostgreSQL. In a JSON body, `IntegerId` takes an id as any of our answers hand
it out: `1` or `"1"`."""

import re
import uuid

from django import forms
from django_filters import Filter
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_DIGITS = re.compile(r"[0-9]{1,19}")
_SIGNED = re.compile(r"-?[0-9]{1,19}")


def parse_int64(value, *, signed: bool = False) -> int | None:
    """The integer `value` spells in ASCII digits within 64 bits (a bool or float is not one); else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and (_SIGNED if signed else _DIGITS).fullmatch(value):
        number = int(value)
    else:
        return None
    return number if (INT64_MIN if signed else 0) <= number <= INT64_MAX else None


def parse_id(value) -> int | None:
    """A database id (0 or more) from text or a JSON integer; None when it is not one."""
    return parse_int64(value)


def is_id(value) -> bool:
    return parse_id(value) is not None


def is_uuid(value) -> bool:
    """Whether `value` is text that names a UUID (the rows selected on a portal list, a workload's id)."""
    if not isinstance(value, str):
        return False
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


class IdField(forms.Field):
    """A form field of one id: ASCII digits within 64 bits, else "Must be an id" (a 400 in a filter set)."""

    default_error_messages = {"invalid": "Must be an id: digits 0-9, at most 2^63 - 1."}

    def to_python(self, value):
        if value in self.empty_values:
            return None
        number = parse_id(value.strip() if isinstance(value, str) else value)
        if number is None:
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        return number


class IdFilter(Filter):
    """A django-filter filter on an integer key (`?projectId=1`, `?roleId=3`) that takes only ids."""

    field_class = IdField


# --- in JSON bodies ---------------------------------------------------------------------------------------
# Run:ai-shaped answers give an org unit's id as its specification types it, a string (`"id": "1"` from
# /api/v1/org-unit/projects); PaaS Studio's own answers give it as a JSON integer (`"projectId": 1`). A client
# that takes an id from one answer and sends it in the next request must never be refused for its form: a body
# field of an integer id takes both, `1` and `"1"`.

@extend_schema_field({"oneOf": [{"type": "integer", "minimum": 0}, {"type": "string", "pattern": "^[0-9]+$"}],
                      "description": "An id, as an integer or as its digits in a string."})
class IntegerId(serializers.Field):
    """A request body's integer id, given as `1` or `"1"`; validated to an int."""

    default_error_messages = {"invalid": 'Must be an id: an integer such as 1, or the same digits as a string ("1").'}

    def to_internal_value(self, data):
        number = parse_id(data)
        if number is None:
            self.fail("invalid")
        return number

    def to_representation(self, value):
        return int(value)


def integer_ids(**kwargs) -> serializers.ListField:
    return serializers.ListField(child=IntegerId(), **kwargs)
