"""Rows of the hot paths read with SQL written once: a model's rows by equality (or membership) on its columns,
with the rows its foreign keys name, as `select_related` reads them, built into model instances the way Django
builds them (`Model.from_db`, each column through the converters Django applies, the related instance cached on
its foreign key; None where a nullable key is null).

Compiling such a queryset (every column of three tables, the joins) cost more CPU than the rest of the query:
about 0.5 ms each for the project and the policy chain of a submission. The SQL is written once per model,
relations, columns and list length, and only the parameters change."""

import typing
import uuid
from collections.abc import Hashable
from functools import cache

from django.db import connections


def _read(table_model, key, related: tuple[str, ...], only: tuple[str, ...] | None) -> list:
    """The fields of one table that the query reads: all, or (as QuerySet.only) the named ones, its primary key
    and, for the base table, the foreign keys of the joined relations."""
    fields = table_model._meta.concrete_fields
    if only is None:
        return list(fields)
    prefix = "" if key is None else f"{key.name}__"
    named = {name.removeprefix(prefix) for name in only if (name.startswith(prefix) if prefix else "__" not in name)}
    return [field for field in fields if field.primary_key or field.name in named or field.attname in named
            or (key is None and field.name in related)]


@cache
def _plan(model, related: tuple[str, ...], where: tuple[tuple[str, int], ...], using: str,
          only: tuple[str, ...] | None = None):
    """(sql, [(model, foreign key or None, first column, end, attnames)], [(position, converters, column)])."""
    connection = connections[using]
    quote = connection.ops.quote_name
    tables = [(model, None, "t0")]
    joins = []
    for number, name in enumerate(related, 1):
        key = model._meta.get_field(name)
        alias, target = f"t{number}", key.related_model
        join = "LEFT OUTER JOIN" if key.null else "INNER JOIN"
        joins.append(f"{join} {quote(target._meta.db_table)} {alias} "
                     f"ON t0.{quote(key.column)} = {alias}.{quote(key.target_field.column)}")
        tables.append((target, key, alias))
    columns, layout, converters = [], [], []
    for table_model, key, alias in tables:
        fields = _read(table_model, key, related, only)
        start = len(columns)
        for position, field in enumerate(fields, start):
            columns.append(f"{alias}.{quote(field.column)}")
            column = field.get_col(alias)
            functions = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
            if functions:
                converters.append((position, functions, column))
        layout.append((table_model, key, start, len(columns), [field.attname for field in fields]))
    conditions = []
    for name, count in where:
        column = f"t0.{quote(model._meta.get_field(name).column)}"
        conditions.append(f"{column} = %s" if count < 0 else f"{column} IN ({', '.join(['%s'] * count)})")
    sql = (f"SELECT {', '.join(columns)} FROM {quote(model._meta.db_table)} t0 {' '.join(joins)} "
           f"WHERE {' AND '.join(conditions) or '1 = 1'}")
    return sql, layout, converters


def _in_range(field, value, connection) -> bool:
    kind = (field.target_field if field.is_relation else field).get_internal_type()
    if not isinstance(value, int) or kind not in connection.ops.integer_field_ranges:
        return True
    low, high = connection.ops.integer_field_range(kind)
    return (low is None or value >= low) and (high is None or value <= high)


def rows(model, *, related: tuple[str, ...] = (), only: tuple[str, ...] | None = None, using: str = "default",
         **where) -> list:
    """Instances of `model` whose columns equal `where`'s values (a list or tuple: one of its values), with
    `related` foreign keys read in the same query; with `only`, the columns QuerySet.only would read, deferring
    the rest. No order: key lookups, or callers that order themselves.
    Values are prepared as a filter prepares them (`Field.get_db_prep_value`); None is not a value here."""
    connection = connections[using]
    prepared = {}
    for name, value in where.items():
        field = model._meta.get_field(name)
        values = [field.get_db_prep_value(v, connection) for v in (value if isinstance(value, list | tuple) else [value])]
        # as Django's integer lookups: a number outside the column's range matches no row (not a database error)
        values = [v for v in values if _in_range(field, v, connection)]
        if not values:
            return []
        prepared[name] = values if isinstance(value, list | tuple) else values[0]
    names = tuple(sorted(prepared))
    shape = tuple((name, len(prepared[name]) if isinstance(prepared[name], list) else -1) for name in names)
    params = []
    for name in names:
        params.extend(prepared[name] if isinstance(prepared[name], list) else [prepared[name]])
    sql, layout, converters = _plan(model, tuple(related), shape, using, only)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        fetched = cursor.fetchall()
    out = []
    for row in fetched:
        row = list(row)
        for position, functions, column in converters:  # as SQLCompiler.apply_converters
            value = row[position]
            for function in functions:
                value = function(value, column, connection)
            row[position] = value
        (base_model, _, start, end, attnames), *joined = layout
        instance = base_model.from_db(using, attnames, row[start:end])
        for table_model, key, start, end, attnames in joined:  # as RelatedPopulator.populate
            pk_position = start + attnames.index(table_model._meta.pk.attname)
            other = None if row[pk_position] is None else table_model.from_db(using, attnames, row[start:end])
            key.set_cached_value(instance, other)
        out.append(instance)
    return out


def lock(model, pk, using: str = "default") -> None:
    """`list(model.objects.select_for_update().filter(pk=pk)[:1])` written once: the row locked until the
    transaction ends (where the database locks rows: not SQLite, where Django's select_for_update emits none)."""
    connection = connections[using]
    sql = _lock_sql(model, using) if connection.features.has_select_for_update else _select_sql(model, using)
    with connection.cursor() as cursor:
        cursor.execute(sql, [model._meta.pk.get_db_prep_value(pk, connection)])
        cursor.fetchall()


@cache
def _select_sql(model, using: str) -> str:
    quote = connections[using].ops.quote_name
    return (f"SELECT {quote(model._meta.pk.column)} FROM {quote(model._meta.db_table)} "
            f"WHERE {quote(model._meta.pk.column)} = %s")


@cache
def _lock_sql(model, using: str) -> str:
    return f"{_select_sql(model, using)} FOR UPDATE"


def converted(fetched, names, converters, connection) -> list[dict]:
    """Fetched rows as dicts of Django's values: each column through its converters, as Django's
    SQLCompiler.apply_converters does, then named as ValuesIterable does."""
    out = []
    for row in fetched:
        row = list(row)
        for position, (functions, expression) in converters:
            value = row[position]
            for function in functions:
                value = function(value, expression, connection)
            row[position] = value
        out.append(dict(zip(names, row, strict=True)))
    return out


# Stand-ins for the parameters of a query compiled once, by the type the builder declares: values no row has
# (ids are positive; no name, token id or key is these strings or UUIDs).
_STAND_INS = {
    int: tuple(-1_000_000_001 - n for n in range(8)),  # within a 32-bit id column (Django refuses beyond it)
    str: tuple(f"\x00perf-stand-in-{n}" for n in range(8)),
    uuid.UUID: tuple(uuid.UUID(int=(0xFFFF_FFFF << 96) + n) for n in range(8)),
}


@cache
def _with_stand_ins(build, names: tuple[str, ...]):
    """`build` called with a stand-in of its declared type (int unless annotated) for each of `names`, and the
    forms each stand-in takes among a query's parameters -> how the real value takes that form."""
    hints = typing.get_type_hints(build)
    stand_ins, forms = {}, {}
    for index, name in enumerate(names):
        kind = hints.get(name, int)
        kind = next((k for k in typing.get_args(kind) if k in _STAND_INS), kind)  # `uuid.UUID | None`
        stand_in = _STAND_INS[kind][index]
        stand_ins[name] = stand_in
        forms[stand_in] = (name, _same)
        if kind is uuid.UUID:  # a database without a UUID type gets its hex (UUIDField.get_db_prep_value)
            forms[stand_in.hex] = (name, _hex)
    return (lambda: build(**stand_ins)), forms


def _same(value):
    return value


def _hex(value):
    return None if value is None else value.hex


@cache
def _compiled_with_stand_ins(build, names: tuple[str, ...], using: str):
    """`build`'s queryset compiled once: (sql, [(name, form) or the fixed parameter], the compiler's state)."""
    stand_in_build, forms = _with_stand_ins(build, names)
    queryset = stand_in_build()
    compiler = queryset.query.get_compiler(using=using)
    sql, params = compiler.as_sql()
    slots = [forms.get(param, (None, param)) if isinstance(param, Hashable) else (None, param) for param in params]
    missing = set(names) - {name for name, _ in slots if name is not None}
    if missing:  # the SQL would not change with them: a builder that does not use a parameter is a mistake
        raise ValueError(f"{build.__qualname__} does not use {sorted(missing)} in its query")
    converters = compiler.get_converters([selected[0] for selected in compiler.select[:compiler.col_count]])
    return sql, slots, compiler, list(converters.items())


def _run(build, using: str, params: dict):
    sql, slots, compiler, converters = _compiled_with_stand_ins(build, tuple(sorted(params)), using)
    values = [form(params[name]) if name is not None else form for name, form in slots]
    with connections[using].cursor() as cursor:
        cursor.execute(sql, values)
        return cursor.fetchall(), compiler, converters


def values_once_compiled(build, using: str = "default", **params) -> list[dict]:
    """`build(**params)`'s values() as dicts, the queryset compiled once per `build` (its SQL is the same whatever
    values `params` hold): `build` is called once with stand-ins of the types its parameters declare (int, str,
    uuid.UUID; int when not annotated), and each later call runs that SQL with the stand-ins replaced by `params`
    (None where a value is None). The quota check's sum and a user's access rules: compiling them cost more than
    running them."""
    fetched, compiler, converters = _run(build, using, params)
    query = compiler.query
    names = [*query.extra_select, *query.values_select, *query.annotation_select]
    return converted(fetched, names, converters, connections[using])


def instances_once_compiled(build, using: str = "default", **params) -> list:
    """`build(**params)`'s model instances (a queryset of one model, no select_related), each annotation set on
    its instance as Django sets it, compiled once as `values_once_compiled`: the bearer token's user with what
    revokes the token, on every API request."""
    fetched, compiler, converters = _run(build, using, params)
    connection = connections[using]
    info = compiler.klass_info
    start, end = info["select_fields"][0], info["select_fields"][-1] + 1
    attnames = [selected[0].target.attname for selected in compiler.select[start:end]]
    annotations = list(compiler.annotation_col_map.items())
    out = []
    for row in fetched:  # as ModelIterable
        row = list(row)
        for position, (functions, expression) in converters:
            for function in functions:
                row[position] = function(row[position], expression, connection)
        instance = info["model"].from_db(using, attnames, row[start:end])
        for name, position in annotations:
            setattr(instance, name, row[position])
        out.append(instance)
    return out
