"""Opening the store: the first connection, the schema made and protected, the projection
brought up to date."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import sql

from feastlog.replay.proof.merkle import leaf_hash
from feastlog.replay.proof.signed import leaf_of
from feastlog.service.store import CannotOpenStore, projection
from feastlog.service.store.postgres.errors import open_error
from feastlog.service.store.postgres.placing import place
from feastlog.service.store.postgres.scans import scan
from feastlog.service.store.postgres.schema import (
    SCHEMA_NAME,
    SEAT_LINKS,
    TABLES,
    projection_schema,
)
from feastlog.service.store.postgres.writes import insert_projection
from feastlog.service.store.sql import LEAF_COLUMNS

CONNECT_TIMEOUT = 10  # seconds to reach the server at start

log = logging.getLogger("feastlog.store")


@contextmanager
def first_connection(dsn: str, shown_as: str) -> Iterator[psycopg.Connection[Any]]:
    """One connection to set the schema up; a failure to connect is one line."""
    try:
        con = psycopg.connect(dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
    except psycopg.Error as error:
        raise open_error(shown_as, error, dsn) from error
    try:
        yield con
    finally:
        con.close()


def prepare(con: psycopg.Connection[Any], shown_as: str) -> None:
    """Make what is missing, protect it, place the rows committed and not placed (a node
    died between a commit and its placement), bring the projection up to date: one
    transaction.

    An advisory lock makes nodes that start together do this one after the other.
    """
    with con.transaction():
        con.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"{SCHEMA_NAME}-schema"])
        _create(con)
        _protect(con)
        plant_tree(con)
        with con.cursor() as cursor:
            placed = place(cursor)
        if placed:
            log.warning(
                "%s: placed %d commits in the log tree that were committed and not placed",
                shown_as,
                len(placed),
            )
        if not projection_current(con):
            if con.execute("SELECT 1 FROM events LIMIT 1").fetchone():
                log.warning("%s: rebuilding the outcomes projection from the log", shown_as)
            rebuild_from_log(con)


def plant_tree(con: psycopg.Connection[Any]) -> None:
    """Give every row of a database written before the log tree its leaf (once): oldest
    game first, each game's rows in seq order (in the caller's transaction). Rows waiting
    for their places are not of such a database: their commits are placed as they are."""
    taken = con.execute("SELECT size FROM log_tree").fetchone()
    if taken is None or int(taken[0]):
        return
    if con.execute("SELECT 1 FROM log_pending LIMIT 1").fetchone():
        return
    found = con.execute(
        "SELECT e.game_id, e.seq, e.hash FROM events e JOIN games g USING (game_id) "
        "ORDER BY g.n, e.seq"
    ).fetchall()
    if not found:
        return
    log.warning("planting the log tree over %d stored rows", len(found))
    with con.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO log_leaves ({LEAF_COLUMNS}) VALUES (%s, %s, %s, %s)".encode(),
            [[i, g, int(q), leaf_hash(leaf_of(g, int(q), h))] for i, (g, q, h) in enumerate(found)],
        )
    con.execute("UPDATE log_tree SET size = %s", [len(found)])


def _create(con: psycopg.Connection[Any]) -> None:
    """The schema and its tables, made where missing (in the caller's transaction)."""
    schema = sql.Identifier(SCHEMA_NAME)
    owner = con.execute(
        "SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = %s",
        [SCHEMA_NAME],
    ).fetchone()
    me = con.execute("SELECT current_user").fetchone()
    if owner and me and owner[0] != me[0]:
        raise CannotOpenStore(
            f"the schema {SCHEMA_NAME} belongs to the role {owner[0]}, not {me[0]}: "
            f"connect as {owner[0]} (only the role feastlog uses may own its tables)",
            path=SCHEMA_NAME,
        )
    con.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(schema))
    con.execute(sql.SQL("SET search_path TO {}").format(schema))
    con.execute(TABLES.encode())
    con.execute(SEAT_LINKS.encode())
    con.execute(projection_schema().encode())


def _protect(con: psycopg.Connection[Any]) -> None:
    """Take back every privilege on feastlog's schema and tables held by anyone but its owner."""
    others = con.execute(
        "SELECT DISTINCT CASE a.grantee WHEN 0 THEN 'PUBLIC' "
        "ELSE pg_get_userbyid(a.grantee) END, "
        "c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace, "
        "aclexplode(c.relacl) a WHERE n.nspname = %s AND a.grantee <> c.relowner "
        "UNION SELECT DISTINCT CASE a.grantee WHEN 0 THEN 'PUBLIC' "
        "ELSE pg_get_userbyid(a.grantee) END, '(the schema)' FROM pg_namespace n, "
        "aclexplode(n.nspacl) a WHERE n.nspname = %s AND a.grantee <> n.nspowner",
        [SCHEMA_NAME, SCHEMA_NAME],
    ).fetchall()
    grantees = sorted({str(g) for g, _ in others} | {"PUBLIC"})
    schema = sql.Identifier(SCHEMA_NAME)
    for grantee in grantees:
        who = sql.SQL("PUBLIC") if grantee == "PUBLIC" else sql.Identifier(grantee)
        con.execute(sql.SQL("REVOKE ALL ON SCHEMA {} FROM {}").format(schema, who))
        for what in ("TABLES", "SEQUENCES"):
            con.execute(
                sql.SQL("REVOKE ALL ON ALL {} IN SCHEMA {} FROM {}").format(
                    sql.SQL(what), schema, who
                )
            )
    if others:
        held = ", ".join(sorted({f"{g} on {t}" for g, t in others}))
        log.warning(
            "schema %s: privileges of others taken back (its tables hold server seeds "
            "and sealed commands): %s",
            SCHEMA_NAME,
            held,
        )


def check_schema(con: psycopg.Connection[Any], shown_as: str) -> None:
    """Refuse, in one line, a database that holds no feastlog tables (reading only)."""
    found = con.execute(
        "SELECT count(*) FROM pg_tables WHERE schemaname = %s AND tablename = 'events'",
        [SCHEMA_NAME],
    ).fetchone()
    if not found or not found[0]:
        raise CannotOpenStore(
            f"{shown_as} holds no feastlog games (no table {SCHEMA_NAME}.events): "
            "serve it once with feastlog serve --db, or pass --db with the right database",
            path=shown_as,
        )


def projection_current(con: psycopg.Connection[Any]) -> bool:
    """Whether the projection tables are there, of this version."""
    found = con.execute("SELECT value FROM meta WHERE key = 'projection'").fetchone()
    return found is not None and found[0] == projection.VERSION


def refill_projection(
    con: psycopg.Connection[Any], projected: Iterable[projection.Projected]
) -> int:
    """Drop and make the projection tables, fill them; returns the games projected."""
    for name in projection.tables():
        con.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(name)))
    con.execute(projection_schema().encode())
    count = 0
    with con.cursor() as cursor:
        for rows in projected:
            if rows:
                insert_projection(cursor, rows)
                count += 1
    con.execute(
        "INSERT INTO meta VALUES ('projection', %s) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [projection.VERSION],
    )
    return count


def rebuild_from_log(con: psycopg.Connection[Any]) -> int:
    """The projection again from one scan of the log, writers held off until it commits.

    SHARE mode on ``events`` lets reads on but makes every commit wait, so no game ends
    between the scan and the new tables (its outcome rows would be lost).
    """
    con.execute("LOCK TABLE events IN SHARE MODE")
    games = [projection.rows_of_stored(g) for _, g in scan(con, [], [], 20_000)]
    return refill_projection(con, games)
