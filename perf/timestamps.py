"""Timestamps read from PostgreSQL by psycopg's C loader. Django's (`BaseTzLoader`) subclasses psycopg's pure-Python
`TimestamptzLoader`, so every timestamp it reads is parsed in Python: a watcher's full pass reads eight a workload,
and at 100,000 workloads that parsing was a third of reading their rows (docs/performance.md). Django sets the
session's TimeZone to its own timezone and puts that timezone on each value; this loader has the C loader read the
value and puts Django's timezone on it, as Django's loader does."""

import functools

from django.db.backends.signals import connection_created
from psycopg import adapt, adapters, pq

TIMESTAMPTZ = adapters.types["timestamptz"].oid


@functools.cache
def _loader(timezone) -> type:
    """A loader with the `timezone` Django's `create_cursor` checks (it registers its own on a cursor whose
    connection's loader has another) that has psycopg's default loader, the C one, read each value. The C loader
    cannot be subclassed: it is called."""
    reader = adapters.get_loader(TIMESTAMPTZ, pq.Format.TEXT)

    class CTimestamptzLoader(adapt.Loader):
        def __init__(self, oid, context=None):
            super().__init__(oid, context)
            self.read = reader(oid, context).load

        def load(self, data):
            return self.read(data).replace(tzinfo=timezone)

    CTimestamptzLoader.timezone = timezone
    return CTimestamptzLoader


def use_c_timestamps(sender, connection, **kwargs) -> None:
    """`connection_created`'s receiver: a new PostgreSQL connection reads timestamps with the C loader."""
    if connection.vendor == "postgresql":
        connection.connection.adapters.register_loader("timestamptz", _loader(connection.timezone))


def connect() -> None:
    connection_created.connect(use_c_timestamps, dispatch_uid="perf-c-timestamps")
