"""The workload list's rows read with `values()`: the attributes WorkloadSerializer reads, without building a
model instance (and its project and department) per row, which was half the list's CPU.

On PostgreSQL a process also keeps the rows it rendered (`RenderedRows`), keyed by the row's version — its
`xmin` and `ctid`, which every UPDATE changes, through the ORM or not, even twice in one transaction — and by
what the row shows of other tables (project, department, the profile's current revision). A page is then read
in two steps: the page's keys (a narrow query), then the full rows of the keys not kept (none, once warm). The
two figures that move with the clock (pending and running seconds) are written into the kept bytes per request."""

import re
import threading
import uuid
from functools import cache
from types import SimpleNamespace

import orjson
import psycopg
import psycopg.adapt
from django.db import connections
from django.db.models import IntegerField, JSONField, TextField
from django.db.models.expressions import RawSQL
from django.utils import timezone

from profiles.models import ServiceProfile
from profiles.selectors import profile_revision_subquery
from studio import keyed_rows, renderers
from workloads.api import runai_fields as derived
from workloads.models import Workload

FIELDS = (
    "id", "name", "requested_name", "kind", "project_id", "project__name", "project__namespace", "department_id",
    "department__name", "cluster_id", "endpoints",
    "actual_phase", "phase_message", "desired_phase", "created_at", "updated_at", "phase_updated_at", "started_at",
    "completed_at", "deleted_at", "created_by_name", "running_pods", "requested_pods", "gpu_request", "source",
    "profile_id", "profile_name", "profile_revision", "pending_reason", "queue_position",
)


class ListedWorkload:
    """One row of `rows_of`; `spec` holds only the keys of SPEC_KEYS (all the list shows of the spec)."""

    Phase = Workload.Phase
    waiting_reason = Workload.waiting_reason
    waiting_position = Workload.waiting_position

    def __init__(self, row: dict):
        self.__dict__.update(row)
        self.project = SimpleNamespace(name=row["project__name"], namespace=row["project__namespace"])
        self.department = SimpleNamespace(name=row["department__name"])
        self.spec = row["shown_spec"]


@cache
def _annotation_sql() -> tuple[str, str, str]:
    """PostgreSQL: the computed columns as SQL written once. As ORM expressions (a JSONObject of eleven key
    transforms, a Subquery) they were rebuilt and compiled on every request, 1.3 ms of a list's 9 ms CPU. Same
    SQL as those expressions compile to, same rows (tests/workloads/test_list_rows.py)."""
    table, profiles = Workload._meta.db_table, ServiceProfile._meta.db_table
    # the row version's identity: a new tuple (new ctid) on every UPDATE, by a new transaction (new xmin) or not
    version = f'"{table}"."xmin"::text || \'/\' || "{table}"."ctid"::text'
    # the spec keys a list shows as one JSON object per row: one decode a row; every key present, null if unset
    shown_spec = "jsonb_build_object({})".format(", ".join(
        f"'{key}', \"{table}\".\"spec\" -> '{key}'" for key in derived.SPEC_KEYS))
    # the profile's current revision (its `outdated`): a correlated primary-key lookup per shown row
    current_revision = (f'(SELECT "{profiles}"."revision" FROM "{profiles}" '
                        f'WHERE "{profiles}"."id" = "{table}"."profile_id")')
    return shown_spec, current_revision, version


def keeps_rows(queryset) -> bool:
    """Whether the list keeps rendered rows for this queryset's database (PostgreSQL: its rows have a version)."""
    return connections[queryset.db].vendor == "postgresql"


def values_of(queryset):
    """The list's queryset (filtered and ordered) as the dicts ListedWorkload reads: the shown columns and a few
    keys of the spec, not its big JSON columns."""
    if not keeps_rows(queryset):  # SQLite (make run): the portable ORM expressions, and no row versions
        return queryset.values(*FIELDS, shown_spec=derived.shown_spec_annotation(),
                               profile_current_revision=profile_revision_subquery())
    shown_spec, current_revision, version = _annotation_sql()
    return queryset.values(*FIELDS, shown_spec=RawSQL(shown_spec, (), output_field=JSONField()),
                           profile_current_revision=RawSQL(current_revision, (), output_field=IntegerField()),
                           row_version=RawSQL(version, (), output_field=TextField()))


_SENTINEL = uuid.UUID(int=0)


@cache
def _rows_by_id_query(using: str) -> tuple:
    """`values_of(Workload.objects.filter(pk__in=ids))` compiled once (PostgreSQL): its SQL with `= ANY(%s)` for
    the ids, and what Django applies to each fetched row (the column names, each column's converters). Compiling
    those 33 columns, two joins and three computed columns was about a millisecond of every cold page."""
    queryset = values_of(Workload.objects.filter(pk__in=[_SENTINEL]).order_by())
    compiler = queryset.query.get_compiler(using=using)
    sql, params = compiler.as_sql()
    column = f'{connections[using].ops.quote_name(Workload._meta.db_table)}."id" IN (%s)'
    if sql.count(column) != 1 or list(params) != [_SENTINEL]:  # the filter is the one parameter
        raise RuntimeError(f"Unexpected SQL for the list's rows: {sql!r} {params!r}")
    query = queryset.query
    names = [*query.extra_select, *query.values_select, *query.annotation_select]
    converters = compiler.get_converters([selected[0] for selected in compiler.select[:compiler.col_count]])
    converters = [(position, ([_json_value(function) if _is_json_decode(function) else function
                               for function in functions], expression))
                  for position, (functions, expression) in converters.items()]
    return sql.replace(column, column.replace("IN (%s)", "= ANY(%s)")), names, converters


def _is_json_decode(function) -> bool:
    """Django's JSONField.from_db_value of a field with the standard decoder."""
    field = getattr(function, "__self__", None)
    return (isinstance(field, JSONField) and getattr(function, "__func__", None) is JSONField.from_db_value
            and field.decoder is None)


# 19 digits in a row: maybe an integer beyond 64 bits, which orjson reads as a float where json reads an int
_LONG_DIGITS = re.compile(r"[0-9]{19}")


def _json_value(django_converter):
    """JSONField.from_db_value with orjson: the same values from PostgreSQL's jsonb text (which holds no NaN or
    duplicate keys), several times faster. Text with a run of 19 digits (an integer orjson would read as a
    float), or that orjson refuses, goes to Django's."""
    def convert(value, expression, connection):
        if value is None:
            return None
        if not _LONG_DIGITS.search(value):
            try:
                return orjson.loads(value)
            except orjson.JSONDecodeError:
                pass
        return django_converter(value, expression, connection)
    return convert


@cache
def _timestamp_loader(tzinfo):
    """Django's loader of `timestamp with time zone` (django.db.backends.postgresql.psycopg_any: the value in the
    session's time zone, which Django sets to its own, with Django's tzinfo object) with psycopg's C parser under
    it instead of its Python one: a cold page's seven timestamps a row were a third of reading its rows. None
    without psycopg's C implementation."""
    c_loader = psycopg.adapters.get_loader(psycopg.postgres.types["timestamptz"].oid, psycopg.pq.Format.TEXT)
    if c_loader is None or c_loader.__module__.startswith("psycopg.types"):  # the Python one: nothing gained
        return None

    class TimestamptzLoader(psycopg.adapt.Loader):
        def __init__(self, oid, context=None):
            super().__init__(oid, context)
            self._parse = c_loader(oid, context).load

        def load(self, data):
            return self._parse(data).replace(tzinfo=tzinfo)

    return TimestamptzLoader


def rows_by_id(ids: list, using: str = "default") -> list[dict]:
    """The full rows (as `values_of`'s dicts) of these workload ids, in no particular order (PostgreSQL)."""
    sql, names, converters = _rows_by_id_query(using)
    connection = connections[using]
    with connection.cursor() as cursor:
        loader = _timestamp_loader(connection.timezone)
        if loader is not None:  # this cursor only
            cursor.cursor.adapters.register_loader("timestamptz", loader)
        cursor.execute(sql, [list(ids)])
        fetched = cursor.fetchall()
    return keyed_rows.converted(fetched, names, converters, connection)


KEY_FIELDS = ("id", "project__name", "project__namespace", "department__name")


def keys_of(queryset):
    """The list's queryset as its rows' cache keys only (PostgreSQL): id, version and what the row shows of other
    tables. Ordered and filtered as the queryset is."""
    _shown_spec, current_revision, version = _annotation_sql()
    return queryset.values(*KEY_FIELDS, profile_current_revision=RawSQL(current_revision, (), output_field=IntegerField()),
                           row_version=RawSQL(version, (), output_field=TextField()))


def _key(row: dict) -> tuple:
    return (row["id"], row["row_version"], row["project__name"], row["project__namespace"], row["department__name"],
            row["profile_current_revision"])


# The two clock-dependent keys, adjacent in the serializer's order; rendered with -1 (never a real value: both are
# at least 0 or null) to find where each request's values go.
_CLOCK_MARK = b',"totalPendingTimeSeconds":-1,"totalRunningTimeSeconds":-1,'


class _Rendered:
    __slots__ = ("head", "tail", "created_at", "started_at", "completed_at")

    def __init__(self, head, tail, row):
        self.head, self.tail = head, tail
        self.created_at, self.started_at, self.completed_at = row["created_at"], row["started_at"], row["completed_at"]

    def encoded(self, now) -> renderers.RawJSON:
        return renderers.RawJSON(b"%s,\"totalPendingTimeSeconds\":%s,\"totalRunningTimeSeconds\":%s,%s" % (
            self.head, _seconds(self.created_at, self.started_at, now),
            _seconds(self.started_at, self.completed_at, now), self.tail))


def _seconds(start, end, now) -> bytes:
    seconds = derived.seconds_between(start, end, now)  # one `now` for the page
    return b"null" if seconds is None else b"%d" % seconds


class RenderedRows:
    """Rendered rows of this process, at most `size`, the oldest stored dropped first. A key names one version of
    one row and what it shows of other tables, so an entry is never stale: a changed row has a new key."""

    def __init__(self, size: int):
        self.size, self.entries, self.lock = size, {}, threading.Lock()

    def page(self, keys: list[dict], fetch, render) -> list:
        """The page's rows in the order of `keys`: kept ones from memory, the rest fetched (`fetch(ids)`: their
        full rows) and rendered (`render(row)`: the serializer's dict), kept for the next request."""
        now = timezone.now()
        entries = [self.entries.get(_key(k)) for k in keys]
        missing = [k["id"] for k, entry in zip(keys, entries, strict=True) if entry is None]
        fresh = {}
        if missing:
            for row in fetch(missing):
                rendered = render(row)
                fresh[row["id"]] = self._keep(row, rendered) or rendered
        out = []
        for k, entry in zip(keys, entries, strict=True):
            if entry is None:
                entry = fresh.get(k["id"])
                if entry is None:  # deleted between the two reads: as if read a moment later
                    continue
            out.append(entry.encoded(now) if isinstance(entry, _Rendered) else entry)
        return out

    def _keep(self, row: dict, rendered: dict) -> _Rendered | None:
        raw = renderers.encode({**rendered, "totalPendingTimeSeconds": -1, "totalRunningTimeSeconds": -1})
        head, mark, tail = raw.partition(_CLOCK_MARK) if raw is not None else (b"", b"", b"")
        if not mark:  # what the renderer leaves to DRF (or no clock keys): rendered on each request instead
            return None
        entry = _Rendered(head, tail, row)
        with self.lock:
            while len(self.entries) >= self.size:
                del self.entries[next(iter(self.entries))]
            self.entries[_key(row)] = entry
        return entry


ROWS = RenderedRows(size=10_000)  # ~2 kB a row (measured): about 20 MB a process at most
