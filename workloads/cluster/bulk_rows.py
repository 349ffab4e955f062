"""Writing and selecting thousands of rows per statement, for the sync's passes (`sync_writes`).

Django's bulk_update builds a CASE per field and row, and bulk_create and `pk__in` bind one parameter per value;
in a watcher's pass over 10,000 changed workloads that was most of its time (building the expressions, and the
driver splitting queries of 4,000 placeholders). On PostgreSQL each statement here binds one array per column
(`unnest`, `= ANY`); on SQLite (development, tests) it binds a parameter per value, as SQLite wants.
Rows are plain dicts of column values: no model instances (whose defaults are computed per row) are made.
"""

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


def update_rows(model, rows: list[dict], fields: list[str], *, same: dict | None = None) -> None:
    """Set `fields` of each row to its values, and `same`'s fields to one value for every row; each row is a
    dict with its "pk" and those fields.
    `UPDATE t SET f = v.f, g = %s FROM unnest(<pk array>, <f array>, …) AS v WHERE t.pk = v.pk` on PostgreSQL,
    `… FROM (VALUES (…), …) AS v` on SQLite (>= 3.33)."""
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
            names = [quote(f.column) for f in columns]
            arrays = ", ".join(f"%s::{f.db_type(connection)}[]" for f in columns)
            sets = ", ".join([*(f"{name} = v.{name}" for name in names[1:]), *fixed_sets])
            params = [[_prepared(f, row[name]) for row in rows] for f, name in zip(columns, ["pk", *fields],
                                                                                 strict=True)]
            cursor.execute(f"UPDATE {table} SET {sets} FROM unnest({arrays}) AS v({', '.join(names)}) "
                           f"WHERE {table}.{names[0]} = v.{names[0]}", [*fixed_params, *params])
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

    def value(field, row):
        if field.attname in row:
            return _prepared(field, row[field.attname])
        if field.attname in defaults:
            return _prepared(field, defaults[field.attname])
        return _prepared(field, field.get_default() if field.has_default() else None)

    with connection.cursor() as cursor:
        if _postgres():
            arrays = ", ".join(f"%s::{f.db_type(connection)}[]" for f in fields)
            cursor.execute(f"INSERT INTO {table} ({names}) SELECT * FROM unnest({arrays})"
                           + (" ON CONFLICT DO NOTHING" if ignore_conflicts else ""),
                           [[value(f, row) for row in rows] for f in fields])
            return
        one = "(" + ", ".join(["%s"] * len(fields)) + ")"
        for chunk in _chunks(rows, BATCH // 2):
            cursor.execute(f"INSERT {'OR IGNORE ' if ignore_conflicts else ''}INTO {table} ({names}) "
                           f"VALUES {', '.join([one] * len(chunk))}", [value(f, row) for row in chunk for f in fields])
