"""Strict JSON fields and the base serializer of the spec: validate, then hand back the caller's own value."""

import math
from collections.abc import Mapping

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ErrorDetail, ValidationError
from rest_framework.fields import SkipField
from rest_framework.settings import api_settings

from studio.clusters.quantities import parse_quantity_strict
from studio.fields import Text
from workloads.specs.rules import INT32_MAX


class Integer(serializers.IntegerField):
    """A JSON integer: no strings, floats or booleans (DRF's IntegerField takes "5", 5.0 and true)."""

    default_error_messages = {
        "invalid": "Must be an integer.",
        "min_value": "Must be at least {min_value}.",
        "max_value": "Must be at most {max_value}.",
    }

    def __init__(self, **kwargs):
        kwargs.setdefault("max_value", INT32_MAX)  # Kubernetes stores these as int32
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return data


class Port(Integer):
    def __init__(self, **kwargs):
        super().__init__(min_value=1, max_value=65535, **kwargs)


class Number(serializers.FloatField):
    """A finite JSON number, int or float, returned unchanged."""

    default_error_messages = {
        "invalid": "Must be a number.",
        "min_value": "Must be at least {min_value}.",
        "max_value": "Must be at most {max_value}.",
    }

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            self.fail("invalid")
        if isinstance(data, float) and not math.isfinite(data):
            self.fail("invalid")
        return data


class Boolean(serializers.BooleanField):
    default_error_messages = {"invalid": "Must be true or false."}

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class Choice(serializers.ChoiceField):
    def to_internal_value(self, data):
        if not isinstance(data, str) or data not in self.choices:
            raise ValidationError(f"Must be one of: {', '.join(self.choices)}.", code="invalid_choice")
        return data


@extend_schema_field({"oneOf": [{"type": "string", "example": "1Gi"}, {"type": "number"}],
                      "description": "A Kubernetes quantity such as \"1Gi\", \"500M\" or \"0.5\"."})
class Quantity(serializers.Field):
    """A Kubernetes quantity checked by parse_quantity_strict; a string unless `numbers` (extended resources)."""

    def __init__(self, *, numbers=False, **kwargs):
        self.numbers = numbers
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not self.numbers and not isinstance(data, str):
            raise ValidationError('Must be a quantity string such as "1Gi", "500M" or "0.5".')
        try:
            parse_quantity_strict(data)
        except ValueError as exc:
            raise ValidationError(str(exc)) from None
        return data

    def to_representation(self, value):
        return value


def texts(*validators, **kwargs):
    return serializers.ListField(child=Text(validators=list(validators)), **kwargs)


def _detail(problem):
    if isinstance(problem, dict):
        return {key: _detail(value) for key, value in problem.items()}
    return [ErrorDetail(problem, code="invalid")]


class StrictSerializer(serializers.Serializer):
    # An object of known keys only. Field errors, unknown keys and cross-field rules are reported together.
    #
    # Subclasses state multi-field rules in `cross_field_errors(values)`, which sees only the fields that passed
    # and answers {field: sentence} (or a nested dict); a field that already failed keeps its own error. Computed
    # defaults go in `validate()`, which runs once everything passed.
    # (A comment, not a docstring: the OpenAPI document would show it on every object of the spec.)

    def to_internal_value(self, data):
        if not isinstance(data, Mapping):
            raise ValidationError({api_settings.NON_FIELD_ERRORS_KEY: ["Must be a JSON object."]})
        fields = self.fields
        # null is "not given" (Run:ai's clients send it for unset fields), except where a field takes null itself
        data = {k: v for k, v in data.items()
                if not (v is None and k in fields and not fields[k].required and not fields[k].allow_null)}
        errors = {key: [ErrorDetail("Unknown field.", code="unknown")] for key in data if key not in fields}
        values = {}
        for name, field in fields.items():
            try:
                value = field.run_validation(field.get_value(data))
                check = getattr(self, f"validate_{name}", None)
                values[name] = check(value) if check else value
            except ValidationError as exc:
                errors[name] = exc.detail
            except SkipField:
                pass
        for name, problem in self.cross_field_errors(values).items():
            errors.setdefault(name, _detail(problem))
        if errors:
            raise ValidationError(errors)
        ordered = {key: values[key] for key in data if key in values}  # the caller's order, then defaults
        return ordered | {key: value for key, value in values.items() if key not in ordered}

    def cross_field_errors(self, values) -> dict:
        return {}
