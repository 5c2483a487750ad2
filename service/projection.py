"""The outcomes projection: finished games' results in DuckDB tables for SQL users.

Rebuilt from the log on demand (every finished game is refolded); never the source of
truth, and only finished games go in, so nothing hidden leaks into it.  Tables:

- ``outcome_games(game_id, game_kind, tournament_id, seats, rows, voided, winners,
  created_at)``: one row per finished game; ``winners`` is a list of seat numbers;
- ``outcome_seats(game_id, game_kind, seat, name, points, adjustment, won, forfeited)``:
  final points per seat (with the arbiter's adjustments) and whether the seat won;
- ``outcome_facts(game_id, game_kind, seq, position, type, seat, fact)``: every fact of
  every finished game as JSON, for game-specific questions;
- each game's own tables, from its package's ``projection`` (``outcome_bids`` of Bon
  Appetit!, ``outcome_purchases`` and ``outcome_menus`` of Menu Masters,
  ``outcome_recipes`` of Picky Eaters), and its headline figure for ``stats``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import duckdb

from feastlog.v1 import record_pb2
from replay import fold, games
from replay.history import refold
from service.store import StoredGame

GENERIC_SCHEMA = """
CREATE OR REPLACE TABLE outcome_games (game_id VARCHAR PRIMARY KEY, game_kind VARCHAR,
    tournament_id VARCHAR, seats INTEGER, rows INTEGER, voided BOOLEAN, winners INTEGER[],
    created_at VARCHAR);
CREATE OR REPLACE TABLE outcome_seats (game_id VARCHAR, game_kind VARCHAR, seat INTEGER,
    name VARCHAR, points INTEGER, adjustment INTEGER, won BOOLEAN, forfeited BOOLEAN);
CREATE OR REPLACE TABLE outcome_facts (game_id VARCHAR, game_kind VARCHAR, seq INTEGER,
    position INTEGER, type VARCHAR, seat INTEGER, fact JSON);
"""


def schema() -> str:
    """The tables: the generic ones, then each registered game's own (its ``projection``)."""
    own = (
        f"CREATE OR REPLACE TABLE {table.name} ({table.columns});\n"
        for kind in games.kinds()
        for table in games.engine(kind).projection.tables
    )
    return GENERIC_SCHEMA + "".join(own)


@dataclass(frozen=True)
class KindStats:
    """Stats of one game kind."""

    game_kind: str
    games: int
    win_rate_by_seat: tuple[float, ...]
    figure: str
    value: float | None


def _rows_of(stored: StoredGame) -> dict[str, list[list[Any]]] | None:
    """The projection rows of one finished game (None for a running one)."""
    if stored.rows[-1].kind != "seed_reveal":
        return None
    folded = refold(stored.rows, stored.server_seed, stored.pack_body)
    genesis: record_pb2.Genesis = folded.genesis
    engine = fold.engine_of(genesis)
    table = folded.tables[-1]
    result = fold.outcome(engine, table)
    winners = list(result.winners) if result else []
    points = list(result.points) if result else [0] * len(genesis.seats)
    game_id, kind = genesis.game_id, genesis.game_kind
    facts = [
        [
            game_id,
            kind,
            seq,
            i,
            f.get("type"),
            f.get("seat") if isinstance(f.get("seat"), int) else None,
            json.dumps(f),
        ]
        for seq, row_facts in enumerate(folded.facts, start=1)
        for i, f in enumerate(row_facts)
    ]
    own = {t.name: t.rows(genesis.game_id, folded.facts) for t in engine.projection.tables}
    return {
        "outcome_games": [
            [
                game_id,
                kind,
                genesis.tournament_id,
                len(genesis.seats),
                len(stored.rows),
                table.voided,
                winners,
                genesis.created_at,
            ]
        ],
        "outcome_seats": [
            [
                game_id,
                kind,
                s,
                seat.name,
                points[s],
                table.adjustments[s],
                s in winners,
                s in table.forfeited,
            ]
            for s, seat in enumerate(genesis.seats)
        ],
        "outcome_facts": facts,
        **own,
    }


def rebuild(con: duckdb.DuckDBPyConnection, stored_games: Iterable[StoredGame]) -> int:
    """Drop and rebuild the projection tables on ``con``; returns the games projected."""
    con.execute(schema())
    count = 0
    for stored in stored_games:
        found = _rows_of(stored)
        if found is None:
            continue
        for table, rows in found.items():
            if rows:
                marks = ", ".join("?" * len(rows[0]))
                con.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)
        count += 1
    return count


def stats(con: duckdb.DuckDBPyConnection) -> list[KindStats]:
    """Per game kind: games played, the win rate by seat position, a game-specific figure."""
    out = []
    kinds = con.execute(
        "SELECT game_kind, count(*) FROM outcome_games WHERE NOT voided GROUP BY 1 ORDER BY 1"
    ).fetchall()
    for kind, played in kinds:
        rates = con.execute(
            "SELECT s.seat, avg(CASE WHEN s.won THEN 1.0 ELSE 0.0 END) FROM outcome_seats s "
            "JOIN outcome_games g USING (game_id) WHERE NOT g.voided AND g.game_kind = ? "
            "GROUP BY 1 ORDER BY 1",
            [kind],
        ).fetchall()
        label, query = (
            games.engine(kind).projection.figure if kind in games.kinds() else ("", "SELECT NULL")
        )
        value = con.execute(query).fetchone()
        figure = None if value is None or value[0] is None else float(value[0])
        out.append(KindStats(kind, int(played), tuple(float(r[1]) for r in rates), label, figure))
    return out
