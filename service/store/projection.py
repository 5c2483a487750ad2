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

Statistics and standings are SQL over these tables, the same on a running server and
offline; the store runs every statement (``service.store.duckdb.outcomes``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from feastlog.replay import games
from feastlog.replay.games import fold
from feastlog.replay.games.engine import FactsByRow
from feastlog.replay.games.fold import Table
from feastlog.replay.record.history import genesis_of, refold
from feastlog.replay.record.rows import Row
from feastlog.replay.tournament.record import is_tournament
from feastlog.v1 import record_pb2

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
    if stored.rows[-1].kind != "seed_reveal" or is_tournament(genesis_of(stored.rows[0])):
        return []  # running, or a tournament's own record (its games have outcomes)
    folded = refold(stored.rows, stored.server_seed, stored.pack_body)
    return outcome_rows(Ending(folded.genesis, folded.tables[-1], folded.facts, len(folded.rows)))


@dataclass(frozen=True)
class KindStats:
    """Stats of one game kind."""

    game_kind: str
    games: int
    win_rate_by_seat: tuple[float, ...]
    figure: str
    value: float | None


def figure_of(kind: str) -> tuple[str, str]:
    """A kind's headline figure for ``stats``: its label and the SQL giving one number."""
    if kind not in games.kinds():
        return "", "SELECT NULL"
    return games.engine(kind).projection.figure
