"""perf/timestamps.py: PostgreSQL's timestamps read by psycopg's C loader, with the values Django's loader gives."""

import datetime as dt
import zoneinfo

import psycopg
import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.backends.postgresql.psycopg_any import register_tzloader
from psycopg import pq

from perf import timestamps
from tests.workloads.conftest import postgres_server

TEXTS = ["2026-11-30 18:04:28.883308+00", "2026-01-01 10:00:00.5+03", "1999-12-31 23:59:59-08:30",
         "0001-01-02 00:00:00+00", "9999-12-31 23:59:59.999999+00", "2026-03-29 01:30:00+01"]


@pytest.mark.parametrize("zone", [dt.UTC, zoneinfo.ZoneInfo("America/New_York")])
def test_timestamps_are_parsed_in_c_with_the_values_djangos_loader_gives(zone):
    """Django sets the session's TimeZone to its timezone and puts that timezone on each value; so does this
    loader, with the parsing done by psycopg's C loader rather than its Python one."""
    select = "SELECT " + ", ".join(f"'{text}'::timestamptz" for text in TEXTS) + ", NULL::timestamptz"
    with psycopg.connect(f"{postgres_server()}/postgres") as conn:
        conn.execute(f"SET TimeZone TO '{zone.key if hasattr(zone, 'key') else 'UTC'}'")
        theirs, ours = conn.cursor(), conn.cursor()
        register_tzloader(zone, theirs)
        ours.adapters.register_loader("timestamptz", timestamps._loader(zone))
        expected, got = theirs.execute(select).fetchone(), ours.execute(select).fetchone()
        reader = timestamps._loader(zone)(psycopg.adapters.types["timestamptz"].oid, ours).read
    assert [repr(value) for value in got] == [repr(value) for value in expected]
    assert got[-1] is None and all(value.tzinfo is zone for value in got[:-1])
    assert type(reader.__self__).__module__.startswith(("psycopg_binary", "psycopg_c")), type(reader.__self__)


@pytest.mark.django_db
def test_the_suites_database_connection_reads_timestamps_with_it():
    """On PostgreSQL the connection's loader is this one; on either database a model's timestamp reads back as
    written, in Django's timezone."""
    written = dt.datetime(2026, 11, 30, 18, 4, 28, 883308, tzinfo=dt.UTC)
    user = get_user_model().objects.create(username="stamped", date_joined=written)
    read = get_user_model().objects.values_list("date_joined", flat=True).get(pk=user.pk)
    assert read == written and read.tzinfo is dt.UTC
    if connection.vendor == "postgresql":
        loader = connection.connection.adapters.get_loader(timestamps.TIMESTAMPTZ, pq.Format.TEXT)
        assert loader is timestamps._loader(connection.timezone)
