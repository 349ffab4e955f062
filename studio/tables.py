"""One table component for every list page (as NetBox's tables): a `Table` subclass names its columns once, and
`templates/studio/_table.html` with `static/studio/table.js` give each list the same column chooser (kept per
browser), totals over the whole filtered list, natural sort of names, row selection with bulk actions, and a CSV
export of the filtered list.

Rows come from the list's own FilterSet over the queryset the user may see (the authorization queryset), so the
page, its totals and its export always agree with the API list."""

import csv
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.http import StreamingHttpResponse
from django.urls import reverse
from django.utils.html import conditional_escape
from rest_framework.exceptions import ValidationError

from studio.errors import flatten_errors
from studio.listing import FILTER_PATTERN, split_list_param
from studio.pages import PAGE_SIZE, Page, page_offset
from studio.saved_views import saved_views_of, view_query

_DIGITS = re.compile(r"(\d+)")
# A cell starting with one of these is a formula to a spreadsheet: the export writes it as text.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def natural_key(text: str) -> list:
    """`train-2` before `train-10`: digit runs compare as numbers, the rest without case. re.split with a group
    alternates text and digits from a text piece on, so two keys compare piece by piece of the same type."""
    return [int(piece) if index % 2 else piece.casefold() for index, piece in enumerate(_DIGITS.split(text or ""))]


@dataclass(frozen=True)
class Column:
    key: str  # its name in the chooser, the export and the page (data-col)
    label: str
    value: Callable[[Any], Any]  # a row -> the plain value (the export, and the cell unless `html` is given)
    html: Callable[[Any], str] | None = None  # a row -> safe HTML of the cell
    sort: str = ""  # the FilterSet's sortBy field, if the column sorts
    natural: bool = False  # sorted by natural_key of `value` instead of the database's order
    default: bool = True  # shown until the user chooses otherwise
    numeric: bool = False
    export: bool = True  # False for a column of buttons (a row's actions): not in the CSV


@dataclass(frozen=True)
class Chip:
    label: str
    remove_url: str


# Query parameters of a list that are not filters: its order, page and columns (and the project scope of a list,
# which says so on its own line).
NOT_FILTERS = {"sortBy", "sortOrder", "offset", "columns", "scope", "part", "csrfmiddlewaretoken"}
OPERATOR_WORDS = {"==": "is", "!=": "is not", "<=": "≤", ">=": "≥", "=@": "contains", "!@": "does not contain",
                  "=^": "starts with", "=$": "ends with"}


def filter_chips(request, columns=()) -> list[Chip]:
    labels = {c.sort: c.label for c in columns if c.sort} | {c.key: c.label for c in columns}
    pairs = [(k, v) for k, values in request.GET.lists() for v in values]
    chips = []
    for index, (key, value) in enumerate(pairs):
        if key in NOT_FILTERS or not value.strip():
            continue
        rest = [pair for i, pair in enumerate(pairs) if i != index and pair[0] != "offset"]
        remove = "?" + urlencode(rest) if rest else "?"
        if key == "filterBy":
            for item in split_list_param([value], expressions=True):
                match = FILTER_PATTERN.match(item)
                label = (f"{labels.get(match['field'], match['field'])} {OPERATOR_WORDS[match['op']]} {match['value']}"
                         if match else item)
                others = [i for i in split_list_param([value], expressions=True) if i != item]
                drop = rest + ([("filterBy", ",".join(others))] if others else [])
                chips.append(Chip(label, "?" + urlencode(drop) if drop else "?"))
        elif key == "search":
            chips.append(Chip(f"Search: {value}", remove))
        else:
            chips.append(Chip(f"{labels.get(key, key)}: {value}", remove))
    return chips


@dataclass(frozen=True)
class BulkAction:
    value: str
    label: str
    icon: str
    danger: bool = False


class Table:
    """Subclasses set name, noun (plural), filterset_class, columns; optionally bulk_actions, bulk_url_name,
    export_url_name and totals(queryset) -> {column key: value}."""

    name = ""
    noun = "rows"
    noun_one = "row"
    empty_template = "studio/_empty.html"
    filterset_class = None
    columns: tuple[Column, ...] = ()
    bulk_actions: tuple[BulkAction, ...] = ()
    bulk_url_name = ""
    export_url_name = ""

    def __init__(self, request, queryset, *, size: int = PAGE_SIZE):
        self.request = request
        self.size = size
        self.errors: list[str] = []
        self.filterset = self.filterset_class(request.GET, queryset=queryset, request=request)
        self._qs = None

    # --- reading -------------------------------------------------------------------------------------------

    def queryset(self):
        """The filtered, sorted rows (None when a filter is wrong: self.errors says why)."""
        if self._qs is None and not self.errors:
            try:
                if not self.filterset.is_valid():
                    self.errors = [f"{f}: {' '.join(m)}" for f, m in self.filterset.errors.items()]
                    return None
                self._qs = self.filterset.qs  # a bad sortBy/filterBy raises here
            except ValidationError as exc:
                self.errors = [f"{e['field']}: {e['message']}" for e in flatten_errors(exc.detail)]
        return self._qs

    def natural_column(self) -> Column | None:
        sort = self.request.GET.get("sortBy")
        return next((c for c in self.columns if c.natural and sort and c.sort == sort), None)

    def ordered(self, qs):
        """The rows in the asked order; a natural sort reads (pk, value) of every row and sorts them here, which a
        database does not do portably."""
        column = self.natural_column()
        if column is None:
            return qs
        pairs = list(qs.values_list("pk", self.filterset.Meta.api_fields[column.sort]))
        pairs.sort(key=lambda pair: natural_key(pair[1]), reverse=self.request.GET.get("sortOrder") == "desc")
        return [pk for pk, _ in pairs]

    def _rows_for(self, ordered, qs, start, stop):
        if isinstance(ordered, list):
            pks = ordered[start:stop]
            by_pk = {row.pk: row for row in qs.filter(pk__in=pks)}
            return [by_pk[pk] for pk in pks if pk in by_pk]
        return list(ordered[start:stop])

    def page(self) -> tuple[list, Page]:
        offset = page_offset(self.request)
        qs = self.queryset()
        if qs is None:
            return [], Page(offset, self.size, 0, False)
        rows = self._rows_for(self.ordered(qs), qs, offset, offset + self.size + 1)
        return rows[: self.size], Page(offset, self.size, min(len(rows), self.size), len(rows) > self.size)

    def totals(self, qs) -> dict:
        return {}

    def footer(self) -> dict:
        qs = self.queryset()
        if qs is None:
            return {"count": 0, "cells": {}}
        return {"count": qs.count(), "cells": self.totals(qs)}

    # --- the page --------------------------------------------------------------------------------------------

    def cell(self, column: Column, row) -> str:
        if column.html is not None:
            return column.html(row)
        value = column.value(row)
        return conditional_escape("" if value is None else value)

    def context(self) -> dict:
        rows, page = self.page()
        footer = self.footer()
        return {
            "table": self,
            "rows": [{"id": self.row_id(row), "label": self.row_label(row), "selectable": self.selectable(row),
                      "cells": [(c, self.cell(c, row)) for c in self.columns]} for row in rows],
            "page": page,
            "errors": self.errors,
            "total_count": footer["count"],
            "totals": [(c, footer["cells"].get(c.key, "")) for c in self.columns],
            "empty_template": self.empty_template,
        }

    def row_label(self, row) -> str:
        return str(row)

    # --- filters as chips, saved views --------------------------------------------------------------------

    @property
    def chips(self) -> list[Chip]:
        """The filters of the URL as removable chips: each `filterBy` item, the search and any other parameter of
        the list (not its order, page or columns), with the URL that drops it alone."""
        return filter_chips(self.request, self.columns)

    @property
    def clear_url(self) -> str:
        """The list without its filters (its order kept)."""
        kept = [(k, v) for k, v in self.request.GET.lists() if k in NOT_FILTERS and k != "offset"]
        return "?" + urlencode([(k, v) for k, values in kept for v in values]) if kept else "?"

    @property
    def view_query(self) -> str:
        return view_query(self.request.GET.urlencode())

    @property
    def saved_views(self) -> list:
        """The user's views of this list (one query a page, on the full page only: the live refresh of its rows
        reads none)."""
        kept = self.request.__dict__.setdefault("_studio_saved_views", {})  # the tables of one page: one read
        if self.request.path not in kept:
            kept[self.request.path] = saved_views_of(self.request.user, self.request.path)
        return kept[self.request.path]

    def selectable(self, row) -> bool:
        """Whether the row offers its checkbox: the user may apply the bulk actions to it (a table sets
        bulk_actions to () where the user may apply them to none)."""
        return True

    def row_id(self, row) -> str:
        return str(row.pk)

    @property
    def bulk_url(self) -> str:
        """Where the bulk form posts (a table of one project's rows overrides it with the project's URL)."""
        return reverse(self.bulk_url_name) if self.bulk_url_name else ""

    @property
    def export_url(self) -> str:
        return reverse(self.export_url_name) if self.export_url_name else ""

    # --- the export ------------------------------------------------------------------------------------------

    def export_columns(self) -> list[Column]:
        """The columns chosen on the page (?columns=a,b), in the table's order; all of them when none is named."""
        asked = {key for key in self.request.GET.get("columns", "").split(",") if key}
        chosen = [c for c in self.columns if c.key in asked and c.export]
        return chosen or [c for c in self.columns if c.export]

    def export(self) -> StreamingHttpResponse:
        """Every row of the filtered list (no paging) as CSV; a wrong filter is a 400 naming it."""
        qs = self.queryset()
        if qs is None:
            raise ValidationError({"filters": self.errors})
        columns = self.export_columns()
        ordered = self.ordered(qs)

        class Echo:
            def write(self, value):
                return value

        writer = csv.writer(Echo())

        def lines():
            yield writer.writerow([c.label for c in columns])
            if isinstance(ordered, list):
                for start in range(0, len(ordered), 500):
                    for row in self._rows_for(ordered, qs, start, start + 500):
                        yield writer.writerow([_csv_cell(c.value(row)) for c in columns])
            else:
                for row in ordered.iterator(chunk_size=500):
                    yield writer.writerow([_csv_cell(c.value(row)) for c in columns])

        response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{self.name}.csv"'
        return response


def _csv_cell(value):
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(_FORMULA_START):
        return "'" + value
    return value


def bulk_target(request, fallback: str) -> str:
    """Where a bulk form goes back to: its `next` (a path of this site), else `fallback`."""
    target = request.POST.get("next", "")
    return target if target.startswith("/") and not target.startswith("//") else fallback


def bulk_run(request, *, rows: dict, ids: list[str], act, done_text: str, nouns: tuple[str, str], problem,
             label=str) -> None:
    """Run `act(row)` on each chosen row (the same service as its own button); what is refused is one error
    message each, naming the row and why (`problem(exc)`, or None to let the exception through)."""
    from django.contrib import messages

    done = []
    for key in dict.fromkeys(ids):
        row = rows.get(key)
        if row is None:
            messages.error(request, f"Refused — {key}: not found (deleted, or not yours to see).")
            continue
        try:
            act(row)
            done.append(label(row))
        except Exception as exc:
            reason = problem(exc)
            if reason is None:
                raise
            messages.error(request, f"Refused — {label(row)}: {reason}")
    if done:
        messages.success(request, f"{done_text} {len(done)} {nouns[0] if len(done) == 1 else nouns[1]}: "
                                  f"{', '.join(done)}.")


class ListTable(Table):
    """The component over rows already in memory (what a cluster's API answered now, not a queryset): the same
    columns, chooser, natural sort (`?sortBy=<column's sort>&sortOrder=desc`), totals and CSV export, every row
    on one page. Subclasses set totals(rows)."""

    def __init__(self, request, rows):
        # Not Table.__init__: it builds a FilterSet over a queryset, which these rows are not.
        self.request = request
        self.errors: list[str] = []
        self.size = max(len(rows), 1)
        self._qs = list(rows)

    def queryset(self):
        return self._qs

    def ordered(self, rows):
        sort = self.request.GET.get("sortBy")
        column = next((c for c in self.columns if sort and c.sort == sort), None)
        if column is None:
            return list(rows)

        def key(row):
            value = column.value(row)
            if column.natural or isinstance(value, str):
                return (0, natural_key(str(value or "")))
            return (value is None, value if value is not None else 0)

        return sorted(rows, key=key, reverse=self.request.GET.get("sortOrder") == "desc")

    def page(self):
        return self.ordered(self._qs), Page(0, self.size, len(self._qs), False)

    def footer(self) -> dict:
        return {"count": len(self._qs), "cells": self.totals(self._qs)}

    def row_id(self, row) -> str:
        return self.row_label(row)

    def export(self) -> StreamingHttpResponse:
        columns = self.export_columns()

        class Echo:
            def write(self, value):
                return value

        writer = csv.writer(Echo())
        rows = self.ordered(self._qs)

        def lines():
            yield writer.writerow([c.label for c in columns])
            for row in rows:
                yield writer.writerow([_csv_cell(c.value(row)) for c in columns])

        response = StreamingHttpResponse(lines(), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{self.name}.csv"'
        return response
