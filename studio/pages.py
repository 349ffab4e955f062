"""List pages read like the API lists: the same FilterSet (filterBy, search, sortBy/sortOrder) and offset paging,
one extra row read instead of a COUNT. A filter the page cannot apply (a hand-edited query string) shows no rows and
says why, as the API's 400 would."""

from dataclasses import dataclass

from rest_framework.exceptions import ValidationError

from studio.errors import flatten_errors
from studio.ids import parse_id
from studio.listing import MAX_OFFSET

PAGE_SIZE = 25


@dataclass(frozen=True)
class Page:
    offset: int
    size: int
    count: int
    has_next: bool

    @property
    def has_previous(self) -> bool:
        return self.offset > 0

    @property
    def first(self) -> int:
        return self.offset + 1 if self.count else 0

    @property
    def last(self) -> int:
        return self.offset + self.count

    @property
    def next_offset(self) -> int:
        return self.offset + self.size

    @property
    def previous_offset(self):
        return max(self.offset - self.size, 0) or None  # None drops `offset` from the link: the first page


def page_offset(request) -> int:
    """The list's offset: 0 unless it is ASCII digits within the API's bound (a number beyond 64 bits was a 500)."""
    offset = parse_id(request.GET.get("offset", "0"))
    return offset if offset is not None and offset <= MAX_OFFSET else 0


def paged(request, filterset_class, queryset, *, size: int = PAGE_SIZE) -> tuple[list, list[str], Page]:
    """(rows of this page, problems with the filters, the page) for a list page."""
    offset = page_offset(request)
    filterset = filterset_class(request.GET, queryset=queryset, request=request)
    try:
        if not filterset.is_valid():
            errors = [f"{field}: {' '.join(messages)}" for field, messages in filterset.errors.items()]
            return [], errors, Page(offset, size, 0, False)
        rows = list(filterset.qs[offset : offset + size + 1])
    except ValidationError as exc:
        return [], [f"{e['field']}: {e['message']}" for e in flatten_errors(exc.detail)], Page(offset, size, 0, False)
    return rows[:size], [], Page(offset, size, min(len(rows), size), len(rows) > size)


def offset_paged(request, queryset, *, size: int = PAGE_SIZE) -> tuple[list, Page]:
    """(rows of this page, the page) for a list page without filters, in the queryset's own order."""
    offset = page_offset(request)
    rows = list(queryset[offset : offset + size + 1])
    return rows[:size], Page(offset, size, min(len(rows), size), len(rows) > size)


def selected_filters(request, field: str) -> set[str]:
    """Values of `filterBy=<field>==value` in the query, so a filter form keeps what the user chose."""
    prefix = f"{field}=="
    return {f[len(prefix):] for f in request.GET.getlist("filterBy") if f.startswith(prefix)}
