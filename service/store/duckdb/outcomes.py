"""The outcomes projection's SQL: inserting, rebuilding, adopting, stats and standings.

The tables and their rows come from ``service.store.projection`` (no DuckDB there); this module
runs them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import duckdb

from feastlog.service.store.duckdb.schema import Statements
from feastlog.service.store.duckdb.schema import insert as insert_columns
from feastlog.service.store.projection import Projected, schema, tables


def insert(con: duckdb.DuckDBPyConnection | Statements, projected: Projected) -> None:
    """Insert projection rows, one statement per table (lists unnested, not row by row)."""
    merged: dict[str, list[list[Any]]] = {}
    for name, rows in projected:
        merged.setdefault(name, []).extend(rows)
    for name, rows in merged.items():
        insert_columns(con, name, "", rows)


def write_file(path: str, projected_games: Iterable[Projected]) -> int:
    """Build projection tables in a DuckDB file of their own (a worker's share)."""
    con = duckdb.connect(path)
    try:
        return rebuild(con, projected_games)
    finally:
        con.close()


def adopt(con: duckdb.DuckDBPyConnection, paths: Sequence[str]) -> int:
    """Replace the projection on ``con`` with the tables built in ``paths``; games adopted."""
    con.execute(schema(replace=True))
    for i, path in enumerate(paths):
        con.execute(f"ATTACH '{_quoted(path)}' AS share{i} (READ_ONLY)")
        try:
            # a worker process knows the games registered on import; a game registered
            # later in this process only (a test's) has no games in a worker's share
            held = con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = ?", [f"share{i}"]
            ).fetchall()
            for name in [t for t in tables() if (t,) in held]:
                con.execute(f"INSERT INTO {name} SELECT * FROM share{i}.{name}")
        finally:
            con.execute(f"DETACH share{i}")
    found = con.execute("SELECT count(*) FROM outcome_games").fetchone()
    return int(found[0]) if found else 0


def _quoted(path: str) -> str:
    return path.replace("'", "''")


def rebuild(
    con: duckdb.DuckDBPyConnection,
    projected_games: Iterable[Projected],
    every: int = 500,
) -> int:
    """Drop and refill the projection tables on ``con``; returns the games projected.

    ``projected_games`` gives each game's rows (empty for a running game); they are
    inserted ``every`` games at a time.
    """
    con.execute(schema(replace=True))
    count = 0
    waiting: Projected = []
    for projected in projected_games:
        if not projected:
            continue
        waiting += projected
        count += 1
        if count % every == 0:
            insert(con, waiting)
            waiting = []
    if waiting:
        insert(con, waiting)
    return count
