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

Per game kind (``KIND_TABLES``; each reads only the game's facts):

- ``outcome_bids(game_id, round, tie_round, dish, seat, gems, base, bonus, total, won)``:
  Bon Appetit! auction results, every revealed bid with its breakdown (base from gem
  values, bonus from gem and dish abilities); ``won`` marks the bid that took the dish;
- ``outcome_purchases(game_id, seq, seat, store, card, cost, paid_to, coins_to)``: Menu
  Masters purchases with their cost and where the coins went (``paid_to`` the owner's
  seat, else NULL; ``coins_to`` owner, store_board or bank);
- ``outcome_menus(game_id, seq, seat, menu, name, source, stars)``: Menu Masters Menus
  completed, with the stars they score;
- ``outcome_recipes(game_id, seat, recipe, name, items, base, guests, herbs, points)``:
  Picky Eaters final scoring per Recipe (``guests`` is the per-guest breakdown as JSON).

Statistics and standings are SQL over these tables, the same on a running server and
offline; the store runs every statement (``service.store.outcomes``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from feastlog.v1 import record_pb2
from replay import fold
from replay.engine import Fact
from replay.fold import Table
from replay.history import refold
from replay.record import Row

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

FactsByRow = Sequence[Sequence[Fact]]


@dataclass(frozen=True)
class KindTable:
    """A game kind's own projection table: its columns and its rows from a game's facts."""

    name: str
    columns: str
    rows: Callable[[str, FactsByRow], list[list[Any]]]


def _of_type(facts: FactsByRow, kind: str) -> list[tuple[int, Fact]]:
    """(seq, fact) for every fact of one type."""
    return [
        (seq, f) for seq, row in enumerate(facts, start=1) for f in row if f.get("type") == kind
    ]


def _bids(game_id: str, facts: FactsByRow) -> list[list[Any]]:
    """Bon Appetit! revealed bids, each marked whether it won its dish."""
    out: list[list[Any]] = []
    for row in facts:
        won = {(f["round"], f["seat"]) for f in row if f.get("type") == "dish_won"}
        for f in row:
            if f.get("type") != "bids_revealed":
                continue
            for bid in f["bids"]:
                winner = (f["round"], bid["seat"]) in won and len(f["tied"]) == 0
                out.append(
                    [
                        game_id,
                        f["round"],
                        f["tie_round"],
                        f["dish"],
                        bid["seat"],
                        bid["gems"],
                        bid["base"],
                        bid["total"] - bid["base"],
                        bid["total"],
                        winner and bid["total"] == f["highest"],
                    ]
                )
    return out


def _purchases(game_id: str, facts: FactsByRow) -> list[list[Any]]:
    """Menu Masters purchases: cost, and who was paid or where the coins went."""
    return [
        [game_id, seq, f["seat"], f["store"], f["card"], f["cost"], f["paid_to"], f["coins_to"]]
        for seq, f in _of_type(facts, "purchased")
    ]


def _menus(game_id: str, facts: FactsByRow) -> list[list[Any]]:
    """Menu Masters Menus completed, with their stars."""
    return [
        [game_id, seq, f["seat"], f["menu"], f["name"], f["source"], f["stars"]]
        for seq, f in _of_type(facts, "menu_completed")
    ]


def _recipes(game_id: str, facts: FactsByRow) -> list[list[Any]]:
    """Picky Eaters final scoring per Recipe, from the game_over scoring table."""
    return [
        [
            game_id,
            player["seat"],
            r["recipe"],
            r["name"],
            r["items"],
            r["base"],
            json.dumps(r["guests"]),
            r["herbs"],
            r["points"],
        ]
        for _, f in _of_type(facts, "game_over")
        for player in f.get("table", [])
        for r in player.get("recipes", [])
    ]


KIND_TABLES: dict[str, tuple[KindTable, ...]] = {
    "bon-appetit": (
        KindTable(
            "outcome_bids",
            "game_id VARCHAR, round INTEGER, tie_round INTEGER, dish VARCHAR, seat INTEGER, "
            "gems VARCHAR[], base INTEGER, bonus INTEGER, total INTEGER, won BOOLEAN",
            _bids,
        ),
    ),
    "menu-masters": (
        KindTable(
            "outcome_purchases",
            "game_id VARCHAR, seq INTEGER, seat INTEGER, store VARCHAR, card VARCHAR, "
            "cost INTEGER, paid_to INTEGER, coins_to VARCHAR",
            _purchases,
        ),
        KindTable(
            "outcome_menus",
            "game_id VARCHAR, seq INTEGER, seat INTEGER, menu VARCHAR, name VARCHAR, "
            "source VARCHAR, stars INTEGER",
            _menus,
        ),
    ),
    "picky-eaters": (
        KindTable(
            "outcome_recipes",
            "game_id VARCHAR, seat INTEGER, recipe VARCHAR, name VARCHAR, items VARCHAR[], "
            "base INTEGER, guests JSON, herbs INTEGER, points INTEGER",
            _recipes,
        ),
    ),
}

# Game-specific figures: label and SQL giving one number per kind (NULL when no data).
FIGURES: dict[str, tuple[str, str]] = {
    "bon-appetit": ("average winning bid", "SELECT avg(total) FROM outcome_bids WHERE won"),
    "menu-masters": ("average Menu stars", "SELECT avg(stars) FROM outcome_menus"),
    "picky-eaters": ("average recipe score", "SELECT avg(points) FROM outcome_recipes"),
}


def tables() -> dict[str, str]:
    """Every projection table and its columns."""
    found = dict(GENERIC_TABLES)
    for kind_tables in KIND_TABLES.values():
        found.update({t.name: t.columns for t in kind_tables})
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
    result = fold.outcome(table)
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
    found += [(t.name, t.rows(game_id, ending.facts)) for t in KIND_TABLES.get(kind, ())]
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


@dataclass(frozen=True)
class KindStats:
    """Stats of one game kind."""

    game_kind: str
    games: int
    win_rate_by_seat: tuple[float, ...]
    figure: str
    value: float | None
