"""The list conventions of every endpoint (CONTRACT §1), as one reusable piece:

* `OffsetPagination` — `offset`, `limit` (1–500, default 50) → `{"<results_key>": [...], "next": offset|null}`;
  the view names its key with `results_key` (e.g. "workloads"). One extra row is read instead of a COUNT.
* `StudioFilterSet` — a django-filter FilterSet that also understands `filterBy` (repeatable `field<op>value`),
  `sortBy`/`sortOrder` and `search`, over the API field names the subclass maps to ORM paths in
  `Meta.api_fields`. The same FilterSet serves the API list and the page list."""

import re
from collections import OrderedDict

import django_filters
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import BooleanField, Q
from rest_framework import serializers
from rest_framework.pagination import BasePagination
from rest_framework.response import Response

MAX_LIMIT = 500
DEFAULT_LIMIT = 50
MAX_OFFSET = 2**62  # offset + limit must stay a 64-bit integer, or the database refuses the query (a 500)

# Longest operators first so that "==" is not read as "=" + "=value".
FILTER_PATTERN = re.compile(r"^(?P<field>[A-Za-z][A-Za-z0-9_.]*)(?P<op>==|!=|<=|>=|=@|!@|=\^|=\$)(?P<value>.*)$")
OPERATORS = {
    "==": ("exact", False),
    "!=": ("exact", True),
    "<=": ("lte", False),
    ">=": ("gte", False),
    "=@": ("icontains", False),
    "!@": ("icontains", True),
    "=^": ("istartswith", False),
    "=$": ("iendswith", False),
}


def int_query_param(request, name: str, default: int, low: int, high: int | None) -> int:
    """An integer query parameter within [low, high]; anything else is a 400 naming the parameter."""
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise serializers.ValidationError({name: [f"Must be an integer, not {raw!r}."]}) from None
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise serializers.ValidationError({name: [f"Must be {bound}."]})
    return value


class OffsetPagination(BasePagination):
    results_key = "items"

    def paginate_queryset(self, queryset, request, view=None):
        self.offset = int_query_param(request, "offset", 0, 0, MAX_OFFSET)
        self.limit = int_query_param(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
        self.results_key = getattr(view, "results_key", self.results_key)
        rows = list(queryset[self.offset : self.offset + self.limit + 1])
        self.has_next = len(rows) > self.limit
        return rows[: self.limit]

    def get_paginated_response(self, data):
        next_offset = self.offset + self.limit if self.has_next else None
        return Response(OrderedDict([(self.results_key, data), ("next", next_offset)]))

    def get_paginated_response_schema(self, schema):
        return {
            "type": "object",
            "properties": {self.results_key: schema, "next": {"type": "integer", "nullable": True}},
            "required": [self.results_key, "next"],
        }

    def get_schema_operation_parameters(self, view):
        return [
            {
                "name": "offset",
                "in": "query",
                "required": False,
                "schema": {"type": "integer", "minimum": 0, "maximum": MAX_OFFSET},
            },
            {
                "name": "limit",
                "in": "query",
                "required": False,
                "schema": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT},
            },
        ]


class StudioFilterSet(django_filters.FilterSet):
    """Subclasses set Meta.api_fields = {"apiName": "orm__path"}, Meta.search_fields and Meta.default_sort."""

    filterBy = django_filters.CharFilter(method="_noop", help_text="Repeatable `field<op>value`; ops == != <= >= =@ !@ =^ =$")
    sortBy = django_filters.CharFilter(method="_noop", help_text="An API field name.")
    sortOrder = django_filters.ChoiceFilter(method="_noop", choices=[("asc", "asc"), ("desc", "desc")])
    search = django_filters.CharFilter(method="_noop", help_text="Case-insensitive text search.")

    def _noop(self, queryset, name, value):
        return queryset  # applied together in filter_queryset, where they can see each other

    def filter_queryset(self, queryset):
        queryset = super().filter_queryset(queryset)
        meta = self._meta
        api_fields = getattr(self.Meta, "api_fields", {})
        errors = []
        expressions = self.data.getlist("filterBy") if hasattr(self.data, "getlist") else []
        for expression in filter(None, expressions):  # a blank one is "no filter" (e.g. "Any type" in a form)
            match = FILTER_PATTERN.match(expression)
            if not match or match["field"] not in api_fields:
                known = ", ".join(sorted(api_fields))
                errors.append(f"{expression!r} is not `field<op>value` over one of: {known}.")
                continue
            lookup, negate = OPERATORS[match["op"]]
            path = api_fields[match["field"]]
            condition = Q(**{f"{path}__{lookup}": _coerce(queryset.model, path, match["value"])})
            try:
                queryset = queryset.exclude(condition) if negate else queryset.filter(condition)
            except (ValueError, TypeError, DjangoValidationError):
                errors.append(f"{match['value']!r} is not a valid value for {match['field']}.")
        if errors:
            raise serializers.ValidationError({"filterBy": errors})

        term = self.form.cleaned_data.get("search")
        search_fields = getattr(self.Meta, "search_fields", ())
        if term and search_fields:
            condition = Q()
            for path in search_fields:
                condition |= Q(**{f"{path}__icontains": term})
            queryset = queryset.filter(condition)

        sort_by = self.form.cleaned_data.get("sortBy")
        descending = self.form.cleaned_data.get("sortOrder") == "desc"
        if sort_by:
            if sort_by not in api_fields:
                raise serializers.ValidationError(
                    {"sortBy": [f"{sort_by!r} is not one of: {', '.join(sorted(api_fields))}."]}
                )
            path = api_fields[sort_by]
            queryset = queryset.order_by(f"-{path}" if descending else path, "-pk" if descending else "pk")
        else:
            default = list(getattr(self.Meta, "default_sort", ())) or list(meta.model._meta.ordering or ["pk"])
            queryset = queryset.order_by(*default, "pk")
        return queryset


def _coerce(model, path: str, value: str):
    """"true"/"false" become booleans only where the field is a boolean."""
    field = None
    for part in path.split("__"):
        field = model._meta.get_field(part)
        model = field.related_model or model
    if isinstance(field, BooleanField):
        return {"true": True, "false": False}.get(value.lower(), value)
    return value
