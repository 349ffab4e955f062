"""Fixtures of the cluster-loop tests."""

import uuid

import psycopg
import pytest
from django.db import connection


def postgres_server() -> str:
    """The suite's PostgreSQL server when it runs on one, else the shared one of this machine (and CI)."""
    db = connection.settings_dict
    if connection.vendor != "postgresql":
        return "postgres://postgres@127.0.0.1:5432"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"


@pytest.fixture
def own_postgres_database():
    """A database of this test's own on the PostgreSQL server (advisory locks are per database); dropped after."""
    server, name = postgres_server(), f"round_locks_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield f"{server}/{name}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

