"""The list conventions of every endpoint, as one reusable piece:

* `OffsetPagination` — `offset`, `limit` (1–500, default 50) → `{"<results_key>": [...], "next": offset|null}`;
  the view names its key with `results_key` (e.g. "workloads"), and with `omit_last_next = True` leaves `next`
  out on the last page (Run:ai's views: the spec types it as a non-null integer). One extra row is read
  instead of a COUNT.
* `StudioFilterSet` — a django-filter FilterSet that also understands `filterBy` (`field<op>value`), `sortBy`/
  `sortOrder` and `search`, over the API field names the subclass maps to ORM paths in `Meta.api_fields` (or to
  expressions in `Meta.api_expressions`, computed only when a query names them). The same FilterSet serves the
  API list and the page list.

`filterBy` and `sortBy` come as Run:ai's spec declares them (`explode: false`): one parameter holding a comma
list, `filterBy=name!=x,allocatedGPU>=2`, and also repeated (`filterBy=a==1&filterBy=b==2`); the filters all
apply (AND). The spec gives no escape for a comma inside a value, so a comma belongs to the value when the text
after it does not start with `<field><operator>`: `name=@a,b` filters on "a,b", while `name=@a,projectId==1` is
two filters (and `name=@a,secret==1` a 400 on the unknown field `secret`)."""

import math
import re
import threading
from collections import OrderedDict
from datetime import timedelta

import django_filters
from django.core.exceptions import FieldError
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import BooleanField, DurationField, Q
from django.http import QueryDict
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework import serializers
from rest_framework.pagination import BasePagination
from rest_framework.response import Response

from studio.ids import parse_int64

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


def split_list_param(values, *, expressions=False) -> list[str]:
    """The items of an `explode: false` parameter given once or more (`a,b` and `a&b` alike), blanks dropped.
    With `expressions`, the items are filters: a comma followed by no `<field><op>` stays in the value before it."""
    items = []
    for value in values:
        for index, piece in enumerate(value.split(",")):
            # Only a comma inside one value can belong to a filter's value; a separate (blank) value cannot.
            if index and expressions and not FILTER_PATTERN.match(piece.strip()):
                items[-1] += "," + piece
            else:
                items.append(piece)
    return [item for item in (i.strip() for i in items) if item]


class CommaListField(serializers.ListField):
    """A query parameter of `explode: false` (Run:ai's `metricType=A,B`), also taken repeated (`A&B`)."""

    def get_value(self, dictionary):
        value = super().get_value(dictionary)
        if isinstance(value, list):
            return split_list_param(value)
        return value


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
        # Run:ai's spec types `next` as an integer: its views leave it out on the last page instead of null.
        self.omit_last_next = getattr(view, "omit_last_next", False)
        rows = list(queryset[self.offset : self.offset + self.limit + 1])
        self.has_next = len(rows) > self.limit
        return rows[: self.limit]

    def get_paginated_response(self, data):
        next_offset = self.offset + self.limit if self.has_next else None
        if next_offset is None and self.omit_last_next:
            return Response({self.results_key: data})
        return Response(OrderedDict([(self.results_key, data), ("next", next_offset)]))

    def get_paginated_response_schema(self, schema):
        return {
            "type": "object",
            "properties": {self.results_key: schema, "next": {"type": "integer", "nullable": True,
                                                              "description": "Offset of the next page."}},
            "required": [self.results_key],
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


_FORM_CLASSES: dict[type, type] = {}

PAGING_PARAMS = frozenset({"offset", "limit"})


class FilterBackend(DjangoFilterBackend):
    """django-filter's backend; a request that names nothing but `offset`, `limit` and the view's own parameters
    (`own_query_params`, e.g. the catalog's `projectId`; none a filter of the filter set) — a plain list, the most
    common one — is filtered by one filter set of no data per class, made once: building a filter set and its
    form (a deep copy of every filter and form field, then the form's validation) was a tenth of a list's CPU.
    Its `filter_queryset` reads nothing of the request, so one instance serves every such request."""

    _unbound: dict[type, object] = {}
    _lock = threading.Lock()

    def filter_queryset(self, request, queryset, view):
        filterset_class = self.get_filterset_class(view, queryset)
        params = request.query_params
        if (filterset_class is None or not issubclass(filterset_class, StudioFilterSet)
                or not (PAGING_PARAMS | getattr(view, "own_query_params", frozenset())).issuperset(params)
                or any(name in filterset_class.base_filters for name in params)):
            return super().filter_queryset(request, queryset, view)
        return self._filterset_of_no_data(filterset_class).filter_queryset(queryset.all())

    def _filterset_of_no_data(self, filterset_class):
        filterset = self._unbound.get(filterset_class)
        if filterset is None:
            filterset = filterset_class(data=QueryDict(), queryset=filterset_class._meta.model._default_manager.none())
            if not filterset.is_valid():  # validated once, here: its cleaned data is what every request reads
                raise RuntimeError(f"{filterset_class.__name__} refuses no data: {filterset.errors}")
            with self._lock:
                filterset = self._unbound.setdefault(filterset_class, filterset)
        return filterset


class StudioFilterSet(django_filters.FilterSet):
    """Subclasses set Meta.api_fields = {"apiName": "orm__path"}, Meta.search_fields and Meta.default_sort."""

    filterBy = django_filters.CharFilter(method="_noop", help_text="Repeatable `field<op>value`; ops == != <= >= =@ !@ =^ =$")
    sortBy = django_filters.CharFilter(method="_noop", help_text="An API field name.")
    sortOrder = django_filters.ChoiceFilter(method="_noop", choices=[("asc", "asc"), ("desc", "desc")])
    search = django_filters.CharFilter(method="_noop", help_text="Case-insensitive text search.")

    def _noop(self, queryset, name, value):
        return queryset  # applied together in filter_queryset, where they can see each other

    def get_form_class(self):
        """The form of the filters, built once per filter set class: django-filter builds a new form class, and a
        form field per filter, on every request (a tenth of a cached list's CPU). The filters here are static
        (none takes a queryset or anything else of the request)."""
        form_class = _FORM_CLASSES.get(type(self))
        if form_class is None:
            form_class = _FORM_CLASSES[type(self)] = super().get_form_class()
        return form_class

    def filter_queryset(self, queryset):
        queryset = super().filter_queryset(queryset)
        meta = self._meta
        api_fields = self._api_fields()
        errors = []
        raw = self.data.getlist("filterBy") if hasattr(self.data, "getlist") else []
        # A blank item is "no filter" (e.g. "Any type" in a form).
        for expression in split_list_param(raw, expressions=True):
            match = FILTER_PATTERN.match(expression)
            if not match or match["field"] not in api_fields:
                field = match["field"] if match else re.split(r"[=!<>]", expression, maxsplit=1)[0]
                known = ", ".join(sorted(api_fields))
                errors.append(f"{expression!r}: {field!r} is not a field to filter by; use `field<op>value` over one of: {known}.")
                continue
            lookup, negate = OPERATORS[match["op"]]
            queryset, path, field = self._path_of(queryset, match["field"])
            if lookup in TEXT_LOOKUPS and not _is_text(field):
                errors.append(f"{expression!r}: {match['op']} compares text, and {match['field']} is not text; "
                              "use == != <= >=.")
                continue
            try:
                condition = Q(**{f"{path}__{lookup}": _coerce(field, match["value"])})
                queryset = queryset.exclude(condition) if negate else queryset.filter(condition)
            except (ValueError, TypeError, DjangoValidationError, FieldError):
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

        sort_by = split_list_param(self.data.getlist("sortBy") if hasattr(self.data, "getlist") else [])
        descending = self.form.cleaned_data.get("sortOrder") == "desc"
        if sort_by:
            unknown = [name for name in sort_by if name not in api_fields]
            if unknown:
                raise serializers.ValidationError(
                    {"sortBy": [f"{name!r} is not one of: {', '.join(sorted(api_fields))}." for name in unknown]}
                )
            order = []
            for name in sort_by:
                queryset, path, _ = self._path_of(queryset, name)
                order.append(f"-{path}" if descending else path)
            queryset = queryset.order_by(*order, "-pk" if descending else "pk")
        else:
            default = list(getattr(self.Meta, "default_sort", ())) or list(meta.model._meta.ordering or ["pk"])
            queryset = queryset.order_by(*default, "pk")
        return queryset

    def _api_fields(self) -> dict:
        return {**getattr(self.Meta, "api_fields", {}), **getattr(self.Meta, "api_expressions", {})}

    def _path_of(self, queryset, name: str):
        """(queryset, ORM path, model field or expression output field) of an API field name; an expression is
        added to the queryset as an alias, so it is computed only by the queries that name it."""
        expressions = getattr(self.Meta, "api_expressions", {})
        if name in expressions:
            alias = f"api_{name}"
            expression = expressions[name]()
            if alias not in queryset.query.annotations:
                queryset = queryset.alias(**{alias: expression})
            return queryset, alias, expression.output_field
        path = self.Meta.api_fields[name]
        return queryset, path, _model_field(queryset.model, path)


def _model_field(model, path: str):
    field = None
    for part in path.split("__"):
        field = model._meta.get_field(part)
        model = field.related_model or model
    return field


# Operators that compare text (=@ !@ =^ =$): on an integer, uuid or relation they are a 400, not a FieldError.
TEXT_LOOKUPS = {"icontains", "istartswith", "iendswith"}


def _is_text(field) -> bool:
    return field is not None and field.get_internal_type() in ("CharField", "TextField", "SlugField", "EmailField",
                                                                "URLField")


INTEGER_TYPES = {"AutoField", "BigAutoField", "SmallAutoField", "IntegerField", "BigIntegerField", "SmallIntegerField",
                 "PositiveIntegerField", "PositiveBigIntegerField", "PositiveSmallIntegerField"}
NUMBER_TYPES = {"DecimalField", "FloatField"}
MAX_SECONDS = 86_399_999_999_999  # timedelta.max, in whole seconds


def _coerce(field, value: str):
    """The filter's text as the field's value; a ValueError (a 400 naming it) when it is not one. "true"/"false"
    become booleans where the field is a boolean; durations are given in seconds; integers and keys are ASCII
    digits within 64 bits (`²`, `٣` or 2^64 would reach the database as a 500 or as another number); numbers
    are finite (`inf`, `nan`)."""
    if isinstance(field, BooleanField):
        return {"true": True, "false": False}.get(value.lower(), value)
    kind = field.target_field.get_internal_type() if field is not None and field.is_relation else (
        field.get_internal_type() if field is not None else "")
    if isinstance(field, DurationField):
        seconds = _finite(value)
        if abs(seconds) > MAX_SECONDS:
            raise ValueError(value)
        return timedelta(seconds=seconds)
    if kind in INTEGER_TYPES:
        number = parse_int64(value.strip(), signed=True)
        if number is None:
            raise ValueError(value)
        return number
    if kind in NUMBER_TYPES:
        return str(_finite(value))
    return value


def _finite(value: str) -> float:
    """A finite number written in ASCII (float() also takes "inf", "nan", "1_000" and Unicode digits)."""
    if not re.fullmatch(r"\s*[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\s*", value):
        raise ValueError(value)
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(value)
    return number
