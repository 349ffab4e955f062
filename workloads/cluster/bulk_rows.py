"""Writing and selecting thousands of rows per statement, for the sync's passes (`sync_writes`).

Django's bulk_update builds a CASE per field and row, and bulk_create and `pk__in` bind one parameter per value;
in a watcher's pass over 10,000 changed workloads that was most of its time (building the expressions, and the
driver splitting queries of 4,000 placeholders). On PostgreSQL the rows a statement writes are one parameter, a JSON
document (`json_to_recordset`), and a selection binds one array (`= ANY`); on SQLite (development, tests) a statement
binds a parameter per value, as SQLite wants. Rows are plain dicts of column values: no model instances (whose
defaults are computed per row) are made.

The JSON document is orjson's, made in C: bound as one array per column, psycopg quoted each value in Python (with
Django's per-value preparation before it), about 10 µs of the watcher's CPU a row of nine columns; the watcher's
first pass at 100,000 workloads, which inserts a row per pod, spent 1.6 s of its ~11 s there. 100,000 such rows: 1.0
s of the writer's CPU as arrays, 0.09 s as one document (PostgreSQL parses it, docs/performance.md).
"""

from decimal import Decimal

import orjson
from django.db import connection
from django.db.models import Q
from django.db.models.expressions import RawSQL

BATCH = 500  # rows per statement on SQLite (its parameters per statement are bounded)


def _chunks(items: list, size: int):
    for start in range(0, len(items), size):
        yield items[start:start + size]


def _postgres() -> bool:
    return connection.vendor == "postgresql"


def pk_in(model, values, *, field: str = "pk") -> Q:
    """`field IN values` as one array parameter on PostgreSQL (`values` of the field's type)."""
    values = list(values)
    if not _postgres():
        return Q(**{f"{field}__in": values})
    target = model._meta.pk if field == "pk" else model._meta.get_field(field)
    if target.is_relation:
        target = target.target_field
    return Q(**{f"{field}__in": RawSQL(f"SELECT unnest(%s::{target.db_type(connection)}[])", (values,))})


def _columns(model, names: list[str]) -> list:
    return [model._meta.pk if name == "pk" else model._meta.get_field(name) for name in names]


def _prepared(field, value):
    return field.get_db_prep_save(value, connection=connection)


def _json_value(value):
    """What orjson does not write itself: a Decimal, as its text (PostgreSQL reads it exactly)."""
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not a column value bulk_rows can write")


def _document(rows: list[dict]) -> str:
    """The rows as one JSON array of objects, for `json_to_recordset`: a key's value is read by the type its column
    is declared with there (a JSON field's value kept as JSON). UUIDs, datetimes (with their offset) and enums are
    orjson's own."""
    return orjson.dumps(rows, default=_json_value, option=orjson.OPT_NON_STR_KEYS).decode()


def _recordset(columns: list, names: list[str]) -> str:
    """`json_to_recordset(%s::json) AS v(name type, …)`: the document's keys `names`, read as `columns`' types."""
    quote = connection.ops.quote_name
    declared = ", ".join(f"{quote(name)} {f.db_type(connection)}" for f, name in zip(columns, names, strict=True))
    return f"json_to_recordset(%s::json) AS v({declared})"


def update_rows(model, rows: list[dict], fields: list[str], *, same: dict | None = None) -> None:
    """Set `fields` of each row to its values, and `same`'s fields to one value for every row; each row is a
    dict with its "pk" and those fields.
    `UPDATE t SET f = v.f, g = %s FROM json_to_recordset(<the rows>) AS v(pk …, f …) WHERE t.pk = v.pk` on
    PostgreSQL, `… FROM (VALUES (…), …) AS v` on SQLite (>= 3.33)."""
    if not rows:
        return
    same = same or {}
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    columns = _columns(model, ["pk", *fields])
    fixed = list(zip(_columns(model, list(same)), same.values(), strict=True))
    fixed_sets = [f"{quote(f.column)} = %s" for f, _ in fixed]
    fixed_params = [_prepared(f, value) for f, value in fixed]
    with connection.cursor() as cursor:
        if _postgres():
            sets = ", ".join([*(f"{quote(f.column)} = v.{quote(name)}" for f, name in zip(columns[1:], fields,
                                                                                          strict=True)), *fixed_sets])
            cursor.execute(f"UPDATE {table} SET {sets} FROM {_recordset(columns, ['pk', *fields])} "
                           f"WHERE {table}.{quote(columns[0].column)} = v.{quote('pk')}",
                           [*fixed_params, _document(rows)])
            return
        one = "(" + ", ".join(["%s"] * len(columns)) + ")"
        sets = ", ".join([*(f"{quote(f.column)} = v.column{i + 2}" for i, f in enumerate(columns[1:])), *fixed_sets])
        for chunk in _chunks(rows, BATCH):
            params = [_prepared(f, row[name]) for row in chunk for f, name in zip(columns, ["pk", *fields],
                                                                                   strict=True)]
            cursor.execute(f"UPDATE {table} SET {sets} FROM (VALUES {', '.join([one] * len(chunk))}) AS v "
                           f"WHERE {table}.{quote(columns[0].column)} = v.column1", [*fixed_params, *params])


def insert_rows(model, rows: list[dict], *, ignore_conflicts: bool = False) -> None:
    """Insert rows (dicts of every column but an automatic primary key; the model's defaults fill the rest);
    with `ignore_conflicts`, rows that would break a unique constraint are skipped."""
    if not rows:
        return
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    fields = [f for f in model._meta.concrete_fields if not (f.primary_key and f.auto_created or
                                                             getattr(f, "db_returning", False))]
    defaults = {f.attname: f.get_default() for f in fields if f.has_default() and not callable(f.default)}
    names = ", ".join(quote(f.column) for f in fields)

    def _default(field):
        if field.attname in defaults:
            return defaults[field.attname]
        return field.get_default() if field.has_default() else None

    def value(field, row):
        return _prepared(field, row[field.attname] if field.attname in row else _default(field))

    with connection.cursor() as cursor:
        if _postgres():
            keys = rows[0].keys()
            if any(row.keys() != keys for row in rows):  # rows of several shapes: each given the keys of all
                keys = set().union(*rows)
                rows = [{f.attname: row[f.attname] if f.attname in row else _default(f) for f in fields
                         if f.attname in keys} for row in rows]
            given = [f for f in fields if f.attname in keys]
            rest = [f for f in fields if f.attname not in keys]  # one value for every row: its default
            selected = ", ".join([*(f"v.{quote(f.attname)}" for f in given),
                                  *(f"%s::{f.db_type(connection)}" for f in rest)])
            cursor.execute(f"INSERT INTO {table} ({', '.join(quote(f.column) for f in [*given, *rest])}) "
                           f"SELECT {selected} FROM {_recordset(given, [f.attname for f in given])}"
                           + (" ON CONFLICT DO NOTHING" if ignore_conflicts else ""),
                           [*(_prepared(f, _default(f)) for f in rest), _document(rows)])
            return
        one = "(" + ", ".join(["%s"] * len(fields)) + ")"
        for chunk in _chunks(rows, BATCH // 2):
            cursor.execute(f"INSERT {'OR IGNORE ' if ignore_conflicts else ''}INTO {table} ({names}) "
                           f"VALUES {', '.join([one] * len(chunk))}", [value(f, row) for row in chunk for f in fields])
