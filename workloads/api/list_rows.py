"""The workload list's rows read with `values()`: the attributes WorkloadSerializer reads, without building a
model instance (and its project and department) per row, which was half the list's CPU.

On PostgreSQL a process also keeps the rows it rendered (`RenderedRows`), keyed by the row's version — its
`xmin` and `ctid`, which every UPDATE changes, through the ORM or not, even twice in one transaction — and by
what the row shows of other tables (project, department, the profile's current revision). A page is read in one
query: the rows' keys, with the rest of each row as one JSON text, decoded only for the rows not kept (none, once
warm). The two figures that move with the clock (pending and running seconds) are written into the kept bytes per
request."""

import json
import threading
from datetime import datetime
from decimal import Decimal
from functools import cache
from types import SimpleNamespace

import orjson
from django.db import connections
from django.db.models import DateTimeField, DecimalField, IntegerField, JSONField, TextField
from django.db.models.expressions import RawSQL
from django.utils import timezone

from perf import json_values
from profiles.models import ServiceProfile
from profiles.selectors import profile_revision_subquery
from studio import renderers
from workloads import runai_fields as derived
from workloads.api import serializers
from workloads.models import Workload

FIELDS = (
    "id", "name", "requested_name", "kind", "project_id", "project__name", "project__namespace", "department_id",
    "department__name", "cluster_id", "endpoints",
    "actual_phase", "phase_message", "desired_phase", "created_at", "updated_at", "phase_updated_at", "started_at",
    "completed_at", "deleted_at", "created_by_name", "running_pods", "requested_pods", "gpu_request", "source",
    "profile_id", "profile_name", "profile_revision", "pending_reason", "queue_position", "node_pool",
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
    # the row version's identity: its id, and a new tuple (new ctid) on every UPDATE, by a new transaction (new
    # xmin) or not; as one text (a uuid read as Python's UUID cost more than the rest of the key)
    version = f'"{table}"."id"::text || \'/\' || "{table}"."xmin"::text || \'/\' || "{table}"."ctid"::text'
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


# The row's own columns (the joined ones are in the keys), and how each arrives in the row's JSON array: as JSON
# reads it, except for these as text: timestamps (ISO 8601), the decimal, and the uuids, which stay text (the
# answer's strings; a kept row's key holds the id as a UUID).
ROW_COLUMNS = tuple(name for name in FIELDS if "__" not in name)
_AS_TEXT = {"id", "cluster_id", "gpu_request"}


# A timestamp as the answer writes it where the time zone is UTC (serializers.iso_time: Python's isoformat, `Z`
# for +00:00, no fraction where it is 0); formatting it in Python cost more than the rest of the row's reading.
_ANSWER_TIME = ("CASE WHEN date_trunc('second', {c}) = {c} "
                "THEN to_char({c} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"') "
                "ELSE to_char({c} AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') END")


def _times_as_answered() -> bool:
    return serializers.ANSWERS_UTC


@cache
def _row_sql(times_as_answered: bool) -> str:
    """PostgreSQL: the row's own columns and its shown spec as one JSON array, read as text with the page's keys.
    A page read again uses none of it; a row not kept is read from it with one JSON decode, instead of a second
    query for the missing rows and Django's conversion of each of their 33 columns (most of a cold page's read).
    Timestamps come as the answer's text where `times_as_answered`, else as ISO 8601 (`_row_readers`)."""
    table = Workload._meta.db_table
    shown_spec, _revision, _version = _annotation_sql()
    columns = []
    for name in ROW_COLUMNS:
        field = _field(name)
        column = f'"{table}"."{field.column}"'
        if name in _AS_TEXT:
            column = f"{column}::text"
        elif times_as_answered and isinstance(field, DateTimeField):
            column = _ANSWER_TIME.format(c=column)
        columns.append(column)
    return f"json_build_array({', '.join([*columns, shown_spec])})::text"


_FOREIGN = {"project_id", "department_id", "cluster_id"}


def _field(name: str):
    return Workload._meta.get_field(name.removesuffix("_id") if name in _FOREIGN else name)


@cache
def _row_readers(tzinfo, times_as_answered: bool) -> tuple:
    """(name, reader) of the array's values that JSON does not read as the ORM does: the decimal (text), and
    timestamps (ISO 8601 text) unless they come as the answer writes them (the serializer writes such text as it
    is; `instant` reads the ones the clock figures need)."""
    def timestamp(value):
        parsed = datetime.fromisoformat(value)
        return parsed if parsed.tzinfo is tzinfo else parsed.astimezone(tzinfo)

    readers = []
    for name in ROW_COLUMNS:
        field = _field(name)
        if isinstance(field, DateTimeField) and not times_as_answered:
            readers.append((name, timestamp))
        elif isinstance(field, DecimalField):
            readers.append((name, Decimal))
    return tuple(readers)


def instant(value):
    """A row's timestamp as a datetime (`full_row` leaves them as the answer's text where the zone is UTC)."""
    return datetime.fromisoformat(value) if type(value) is str else value


# The array's JSON columns (the others are typed: their numbers fit 64 bits), by position.
_JSON_POSITIONS = tuple(i for i, name in enumerate(ROW_COLUMNS) if name in ("endpoints", "pending_reason")) + (-1,)


def full_row(keys: dict, tzinfo) -> dict:
    """The whole row (as `values_of`'s dicts, but for the uuids: text) from a `keys_of` row: its keys and its JSON
    array, each other value as the ORM reads its column (tests/workloads/test_list_rows.py compares the answers)."""
    text = keys["row_json"]
    values = orjson.loads(text)  # several times faster than json, and the same values but for huge integers:
    for position in _JSON_POSITIONS:
        if json_values.has_huge_float(values[position]):  # json's then (for a float as big, the same value)
            values = json.loads(text)
            break
    row = dict(zip(ROW_COLUMNS, values, strict=False))  # the last value is the shown spec
    for name, reader in _row_readers(tzinfo, _times_as_answered()):
        value = row[name]
        if value is not None:
            row[name] = reader(value)
    row["shown_spec"] = values[-1]
    for name in _KEYS_SHOWN:
        row[name] = keys[name]
    return row


KEY_FIELDS = ("project__name", "project__namespace", "department__name")
_KEYS_SHOWN = (*KEY_FIELDS, "profile_current_revision")


def keys_of(queryset):
    """The list's queryset as its rows' cache keys (PostgreSQL): the row's version (id and tuple) and what the row
    shows of other tables, with the rest of the row as JSON text (`full_row`). Ordered and filtered as the queryset
    is."""
    _shown_spec, current_revision, version = _annotation_sql()
    return queryset.values(*KEY_FIELDS, profile_current_revision=RawSQL(current_revision, (), output_field=IntegerField()),
                           row_version=RawSQL(version, (), output_field=TextField()),
                           row_json=RawSQL(_row_sql(_times_as_answered()), (), output_field=TextField()))


def _key(row: dict) -> tuple:
    return (row["row_version"], row["project__name"], row["project__namespace"], row["department__name"],
            row["profile_current_revision"])


# The two clock-dependent keys, adjacent in the serializer's order; rendered with -1 (never a real value: both are
# at least 0 or null) to find where each request's values go.
_CLOCK_MARK = b',"totalPendingTimeSeconds":-1,"totalRunningTimeSeconds":-1,'


class _Rendered:
    __slots__ = ("head", "tail", "created_at", "started_at", "completed_at")

    def __init__(self, head, tail, row):
        self.head, self.tail = head, tail
        self.created_at, self.started_at = instant(row["created_at"]), instant(row["started_at"])
        self.completed_at = derived.running_end(instant(row["completed_at"]), row["actual_phase"],
                                                instant(row["phase_updated_at"]))  # where the running time ends

    def encoded(self, now) -> bytes:
        return b"%s,\"totalPendingTimeSeconds\":%s,\"totalRunningTimeSeconds\":%s,%s" % (
            self.head, _seconds(self.created_at, self.started_at, now),
            _seconds(self.started_at, self.completed_at, now), self.tail)


def _seconds(start, end, now) -> bytes:
    seconds = derived.seconds_between(start, end, now)  # one `now` for the page
    return b"null" if seconds is None else b"%d" % seconds


class RenderedRows:
    """Rendered rows of this process, at most `size`, the oldest stored dropped first. A key names one version of
    one row and what it shows of other tables, so an entry is never stale: a changed row has a new key."""

    def __init__(self, size: int):
        self.size, self.entries, self.lock = size, {}, threading.Lock()

    def page(self, keys: list[dict], render, using: str = "default") -> renderers.RawJSON | list:
        """The page's rows in the order of `keys` (`keys_of`'s rows): kept ones from memory, the rest read from
        their JSON (`full_row`) and rendered (`render(row)`: the serializer's dict with -1 for the two clock
        figures), kept for the next request. The page's JSON array as one encoded value (the renderer writes it as
        it is), or, where a row could not be kept, the rows as a list of encoded rows and that row's dict."""
        now, tzinfo = timezone.now(), connections[using].timezone
        out, whole = [], True
        for k in keys:
            key = _key(k)
            entry = self.entries.get(key)
            if entry is None:
                row = full_row(k, tzinfo)
                rendered = render(row)  # its clock figures left to -1 (the serializer's context `clock`)
                entry = self._keep(key, row, rendered)
                if entry is None:  # rendered on each request instead: this request's figures
                    started = instant(row["started_at"])
                    rendered["totalPendingTimeSeconds"] = derived.seconds_between(
                        instant(row["created_at"]), started, now)
                    rendered["totalRunningTimeSeconds"] = derived.seconds_between(started, derived.running_end(
                        instant(row["completed_at"]), row["actual_phase"], instant(row["phase_updated_at"])), now)
                    entry, whole = rendered, False
            out.append(entry.encoded(now) if type(entry) is _Rendered else entry)
        if whole:
            return renderers.RawJSON(b"[%s]" % b",".join(out))
        return [renderers.RawJSON(item) if type(item) is bytes else item for item in out]

    def _keep(self, key: tuple, row: dict, rendered: dict) -> _Rendered | None:
        raw = renderers.encode(rendered)
        head, mark, tail = raw.partition(_CLOCK_MARK) if raw is not None else (b"", b"", b"")
        if not mark:  # what the renderer leaves to DRF (or no clock keys): rendered on each request instead
            return None
        entry = _Rendered(head, tail, row)
        with self.lock:
            while len(self.entries) >= self.size:
                del self.entries[next(iter(self.entries))]
            self.entries[key] = entry
        return entry


ROWS = RenderedRows(size=10_000)  # ~2 kB a row (measured): about 20 MB a process at most
