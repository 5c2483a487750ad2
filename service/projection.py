"""The outcomes projection: finished games' results in DuckDB tables, kept current.

A game's outcome rows are written in the same commit as the row that ends it (the seed
reveal, which follows the last command or the ruling that voids or closes the game), so
the tables always hold exactly the finished games of the log.  Rulings that change a
result (score adjustments, forfeits) come before the end: after it no command is taken
(FL-GAME-CLOSED), so a finished game's rows never change.  The tables are derived, never
the source of truth: ``feastlog projection rebuild`` makes them again from the log, and
only finished games go in, so nothing hidden leaks into them.

Generic tables, for every game kind:

- ``outcome_games(game_id, game_kind, tournament_id, seats, rows, voided, scored,
  winners, created_at)``: one row per finished game; ``winners`` is a list of seat
  numbers; ``scored`` is false for a voided game or one closed before its end;
- ``outcome_seats(game_id, game_kind, tournament_id, seat, name, points, adjustment, won,
  forfeited)``: final points per seat (with the arbiter's adjustments) and whether the
  seat won.

Every fact of a game is not kept here (a season's would be tens of millions of rows,
written with each game's end): ``feastlog explain`` and ``replay`` derive them from the
log.

Per game kind, each game's own tables and its headline figure for ``stats``, from the
game's package (``replay/games/<kind>/projection.py``; each reads only the game's facts):
``outcome_bids`` of Bon Appetit!, ``outcome_purchases`` and ``outcome_menus`` of Menu
Masters, ``outcome_recipes`` of Picky Eaters.

Statistics and standings are SQL over these tables (``stats``, ``standings``), the same
on a running server and offline.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

import duckdb

from feastlog.v1 import record_pb2
from replay import fold, games
from replay.engine import FactsByRow
from replay.fold import Table
from replay.history import refold
from replay.record import Row
from replay.standings import Standing

# Bumped whenever a table's columns or contents change: a file whose projection has
# another version is rebuilt from the log when a server opens it.
VERSION = "2"

GENERIC_TABLES: dict[str, str] = {
    "outcome_games": "game_id VARCHAR PRIMARY KEY, game_kind VARCHAR, tournament_id VARCHAR, "
    "seats INTEGER, rows INTEGER, voided BOOLEAN, scored BOOLEAN, winners INTEGER[], "
    "created_at VARCHAR",
    "outcome_seats": "game_id VARCHAR, game_kind VARCHAR, tournament_id VARCHAR, seat INTEGER, "
    "name VARCHAR, points INTEGER, adjustment INTEGER, won BOOLEAN, forfeited BOOLEAN",
}


def tables() -> dict[str, str]:
    """Every projection table and its columns."""
    found = dict(GENERIC_TABLES)
    for kind in games.kinds():
        found.update({t.name: t.columns for t in games.engine(kind).projection.tables})
    return found


def schema(replace: bool = False) -> str:
    """The DDL of the projection tables (``replace`` drops what is there)."""
    verb = "CREATE OR REPLACE TABLE" if replace else "CREATE TABLE IF NOT EXISTS"
    return "".join(f"{verb} {name} ({columns});\n" for name, columns in tables().items())


@dataclass(frozen=True)
class Ending:
    """A finished game as the projection reads it: genesis, final table, facts per row."""

    genesis: record_pb2.Genesis
    table: Table
    facts: FactsByRow
    rows: int


Projected = list[tuple[str, list[list[Any]]]]


def outcome_rows(ending: Ending) -> Projected:
    """The projection rows of one finished game, table by table."""
    genesis, table = ending.genesis, ending.table
    engine = fold.engine_of(genesis)
    result = fold.outcome(engine, table)
    winners = list(result.winners) if result else []
    points = list(result.points) if result else [0] * len(genesis.seats)
    game_id, kind, tournament = genesis.game_id, genesis.game_kind, genesis.tournament_id
    found: Projected = [
        (
            "outcome_games",
            [
                [
                    game_id,
                    kind,
                    tournament,
                    len(genesis.seats),
                    ending.rows,
                    table.voided,
                    result is not None,
                    winners,
                    genesis.created_at,
                ]
            ],
        ),
        (
            "outcome_seats",
            [
                [
                    game_id,
                    kind,
                    tournament,
                    s,
                    seat.name,
                    points[s],
                    table.adjustments[s],
                    s in winners,
                    s in table.forfeited,
                ]
                for s, seat in enumerate(genesis.seats)
            ],
        ),
    ]
    found += [(t.name, t.rows(game_id, ending.facts)) for t in engine.projection.tables]
    return [(name, rows) for name, rows in found if rows]


class StoredRecord(Protocol):
    """What the projection needs of a stored game."""

    @property
    def rows(self) -> Sequence[Row]:
        """The game's rows in seq order."""

    @property
    def server_seed(self) -> bytes:
        """The game's server seed."""

    @property
    def pack_body(self) -> bytes:
        """The content pack the genesis names."""


def rows_of_stored(stored: StoredRecord) -> Projected:
    """The projection rows of a stored game (none for one still running)."""
    if stored.rows[-1].kind != "seed_reveal":
        return []
    folded = refold(stored.rows, stored.server_seed, stored.pack_body)
    return outcome_rows(Ending(folded.genesis, folded.tables[-1], folded.facts, len(folded.rows)))


def insert(con: duckdb.DuckDBPyConnection, projected: Projected) -> None:
    """Insert projection rows, one statement per table (lists unnested, not row by row)."""
    merged: dict[str, list[list[Any]]] = {}
    for name, rows in projected:
        merged.setdefault(name, []).extend(rows)
    for name, rows in merged.items():
        columns = list(zip(*rows, strict=True))
        picks = ", ".join(f"unnest(${i + 1})" for i in range(len(columns)))
        con.execute(f"INSERT INTO {name} SELECT {picks}", [list(c) for c in columns])


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


@dataclass(frozen=True)
class KindStats:
    """Stats of one game kind."""

    game_kind: str
    games: int
    win_rate_by_seat: tuple[float, ...]
    figure: str
    value: float | None


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
        known = kind in games.kinds()
        label, query = games.engine(kind).projection.figure if known else ("", "SELECT NULL")
        if tournament_id and label:
            query += (" AND" if "WHERE" in query else " WHERE") + (
                " game_id IN (SELECT game_id FROM outcome_games WHERE tournament_id = $t)"
            )
        value = con.execute(query, params if label else {}).fetchone()
        figure = None if value is None or value[0] is None else float(value[0])
        by_seat = tuple(float(r[2]) for r in rates if r[0] == kind)
        out.append(KindStats(kind, int(played), by_seat, label, figure))
    return out


# A shared victory of k winners gives each 1/k; k is at most 6 seats, so wins are
# summed in 60ths (exact), and made a Fraction again after the sum.
WIN_PARTS = 60


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
