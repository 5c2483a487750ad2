"""PostgreSQL for tests: databases on the server that ``FEASTLOG_TEST_POSTGRES`` names.

``.ci/run`` starts a PostgreSQL cluster on loopback, sets ``FEASTLOG_TEST_POSTGRES`` to
the DSN of a role that may create databases and roles, and sets
``FEASTLOG_REQUIRE_POSTGRES``: there a missing server fails the PostgreSQL tests instead
of skipping them. Each xdist worker gets databases of its own (made once, kept between
runs); each use starts from an empty one (feastlog's schema dropped).
"""

from __future__ import annotations

import hashlib
import os
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from psycopg import sql

POSTGRES_ENV = "FEASTLOG_TEST_POSTGRES"
REQUIRE_POSTGRES = "FEASTLOG_REQUIRE_POSTGRES"


def admin_dsn() -> str:
    """The DSN tests make their databases with; fails or skips the test when it is not set."""
    dsn = os.environ.get(POSTGRES_ENV, "")
    if not dsn:
        why = f"no PostgreSQL for the tests: set {POSTGRES_ENV} (.ci/run starts one)"
        if os.environ.get(REQUIRE_POSTGRES):
            pytest.fail(why)
        pytest.skip(why)
    return dsn


def with_database(dsn: str, database: str) -> str:
    """``dsn`` pointing at another database of the same server."""
    return urlunsplit(urlsplit(dsn)._replace(path="/" + database))


def empty_database(use: str) -> str:
    """The DSN of this worker's database for ``use``, emptied of feastlog's tables."""
    admin = admin_dsn()
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    name = f"feastlog_test_{worker}_{hashlib.sha256(use.encode()).hexdigest()[:10]}"
    with psycopg.connect(admin, autocommit=True) as con:
        found = con.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not found:
            con.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    dsn = with_database(admin, name)
    with psycopg.connect(dsn, autocommit=True) as con:
        con.execute("DROP SCHEMA IF EXISTS feastlog CASCADE")
    return dsn
