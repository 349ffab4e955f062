"""Rows of the hot paths read with SQL written once: a model's rows by equality (or membership) on its columns,
with the rows its foreign keys name, as `select_related` reads them, built into model instances the way Django
builds them (`Model.from_db`, each column through the converters Django applies, the related instance cached on
its foreign key; None where a nullable key is null).

Compiling such a queryset (every column of three tables, the joins) cost more CPU than the rest of the query:
about 0.5 ms each for the project and the policy chain of a submission. The SQL is written once per model,
relations, columns and list length, and only the parameters change."""

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


@cache
def _compiled(build, using: str) -> tuple:
    """`build()`'s values() queryset compiled once: (sql, params, column names, converters)."""
    queryset = build()
    compiler = queryset.query.get_compiler(using=using)
    sql, params = compiler.as_sql()
    query = queryset.query
    names = [*query.extra_select, *query.values_select, *query.annotation_select]
    converters = compiler.get_converters([selected[0] for selected in compiler.select[:compiler.col_count]])
    return sql, tuple(params), names, list(converters.items())


def compiled_values(build, substitutions: dict, using: str = "default") -> list[dict]:
    """The dicts of `build()` (a function that builds a values() queryset with sentinel values, the same each
    call), compiled once; each parameter equal to a key of `substitutions` (a sentinel) replaced by its value."""
    sql, params, names, converters = _compiled(build, using)
    connection = connections[using]
    with connection.cursor() as cursor:
        cursor.execute(sql, [substitutions.get(param, param) for param in params])
        fetched = cursor.fetchall()
    return converted(fetched, names, converters, connection)


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


# Stand-ins for the parameters of a query compiled once: values no row has (ids are positive).
_STAND_INS = tuple(-7_000_000_001 - n for n in range(8))


@cache
def _with_stand_ins(build, names: tuple[str, ...]):
    stand_ins = dict(zip(names, _STAND_INS, strict=False))
    return (lambda: build(**stand_ins)), stand_ins


def values_once_compiled(build, using: str = "default", **params) -> list[dict]:
    """`build(**params)`'s values() as dicts, the queryset compiled once per `build` (its SQL is the same whatever
    integer ids `params` hold): `build` is called once with stand-in ids, and each later call runs that SQL with the
    stand-ins replaced by `params`. The quota check's sum: compiling it cost more than running it."""
    names = tuple(sorted(params))
    stand_in_build, stand_ins = _with_stand_ins(build, names)
    return compiled_values(stand_in_build, {stand_ins[name]: params[name] for name in names}, using)
