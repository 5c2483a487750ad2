"""The outcomes projection's SQL: inserting, rebuilding, adopting, stats and standings.

The tables and their rows come from ``service.projection`` (no DuckDB there); this module
runs them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from typing import Any

import duckdb

from feastlog.replay.standings import Standing
from feastlog.service.store.duckdb.schema import Statements
from feastlog.service.store.duckdb.schema import insert as insert_columns
from feastlog.service.store.projection import KindStats, Projected, figure_of, schema, tables
from feastlog.service.store.sql import WIN_PARTS


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


def stats(con: duckdb.DuckDBPyConnection, tournament_id: str = "") -> list[KindStats]:
    """Per game kind: games scored, the win rate by seat position, a game-specific figure."""
    where = "WHERE scored" + (" AND tournament_id = $t" if tournament_id else "")
    params = {"t": tournament_id} if tournament_id else {}
    kinds = con.execute(
        f"SELECT game_kind, count(*) FROM outcome_games {where} GROUP BY 1 ORDER BY 1", params
    ).fetchall()
    rates = con.execute(
        "SELECT s.game_kind, s.seat, avg(CASE WHEN s.won THEN 1.0 ELSE 0.0 END) "
        f"FROM outcome_seats s SEMI JOIN (SELECT game_id FROM outcome_games {where}) g "
        "USING (game_id) GROUP BY 1, 2 ORDER BY 1, 2",
        params,
    ).fetchall()
    out = []
    for kind, played in kinds:
        label, query = figure_of(kind)
        if tournament_id and label:
            query += (" AND" if "WHERE" in query else " WHERE") + (
                " game_id IN (SELECT game_id FROM outcome_games WHERE tournament_id = $t)"
            )
        value = con.execute(query, params if label else {}).fetchone()
        figure = None if value is None or value[0] is None else float(value[0])
        by_seat = tuple(float(r[2]) for r in rates if r[0] == kind)
        out.append(KindStats(kind, int(played), by_seat, label, figure))
    return out


def standings(con: duckdb.DuckDBPyConnection, tournament_id: str) -> tuple[list[Standing], int]:
    """A tournament's standings from its finished games, and how many games that is.

    Void games (and games closed before their end) count as played with no points and
    no wins; a forfeited seat never wins; players are matched by name.
    """
    found = con.execute(
        f"SELECT s.name, count(*), sum(CASE WHEN g.scored AND s.won "
        f"THEN {WIN_PARTS} // len(g.winners) ELSE 0 END), "
        "sum(CASE WHEN g.scored THEN s.points ELSE 0 END) "
        "FROM outcome_seats s JOIN outcome_games g USING (game_id) "
        "WHERE g.tournament_id = $t GROUP BY s.name",
        {"t": tournament_id},
    ).fetchall()
    games = con.execute(
        "SELECT count(*) FROM outcome_games WHERE tournament_id = $t", {"t": tournament_id}
    ).fetchone()
    lines = [
        Standing(name, int(played), Fraction(int(wins), WIN_PARTS), int(points))
        for name, played, wins, points in found
    ]
    lines.sort(key=lambda s: (-s.wins, -s.points, s.name))
    return lines, int(games[0]) if games else 0
