"""The outcomes projection: finished games' results in DuckDB tables for SQL users.

Rebuilt from the log on demand (every finished game is refolded); never the source of
truth, and only finished games go in, so nothing hidden leaks into it.  Tables:

- ``outcome_games(game_id, game_kind, tournament_id, seats, rows, voided, winners,
  created_at)``: one row per finished game; ``winners`` is a list of seat numbers;
- ``outcome_seats(game_id, game_kind, seat, name, points, adjustment, won, forfeited)``:
  final points per seat (with the arbiter's adjustments) and whether the seat won;
- ``outcome_bids(game_id, round, tie_round, dish, seat, gems, base, bonus, total, won)``:
  Bon Appetit! auction results, every revealed bid with its breakdown (base from gem
  values, bonus from gem and dish abilities); ``won`` marks the bid that took the dish;
- ``outcome_purchases(game_id, seq, seat, store, card, cost, paid_to, coins_to)``: Menu
  Masters purchases with their cost and where the coins went (``paid_to`` the owner's
  seat, else NULL; ``coins_to`` owner, store_board or bank);
- ``outcome_menus(game_id, seq, seat, menu, name, source, stars)``: Menu Masters Menus
  completed, with the stars they score;
- ``outcome_recipes(game_id, seat, recipe, name, items, base, guests, herbs, points)``:
  Picky Eaters final scoring per Recipe (``guests`` is the per-guest breakdown as JSON);
- ``outcome_facts(game_id, game_kind, seq, position, type, seat, fact)``: every fact of
  every finished game as JSON, for game-specific questions (Menu Masters purchases and
  completed menus, Picky Eaters recipes and scoring per guest).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import duckdb

from feastlog.v1 import record_pb2
from replay import fold
from replay.history import Folded, refold
from service.store import StoredGame

SCHEMA = """
CREATE OR REPLACE TABLE outcome_games (game_id VARCHAR PRIMARY KEY, game_kind VARCHAR,
    tournament_id VARCHAR, seats INTEGER, rows INTEGER, voided BOOLEAN, winners INTEGER[],
    created_at VARCHAR);
CREATE OR REPLACE TABLE outcome_seats (game_id VARCHAR, game_kind VARCHAR, seat INTEGER,
    name VARCHAR, points INTEGER, adjustment INTEGER, won BOOLEAN, forfeited BOOLEAN);
CREATE OR REPLACE TABLE outcome_bids (game_id VARCHAR, round INTEGER, tie_round INTEGER,
    dish VARCHAR, seat INTEGER, gems VARCHAR[], base INTEGER, bonus INTEGER, total INTEGER,
    won BOOLEAN);
CREATE OR REPLACE TABLE outcome_purchases (game_id VARCHAR, seq INTEGER, seat INTEGER,
    store VARCHAR, card VARCHAR, cost INTEGER, paid_to INTEGER, coins_to VARCHAR);
CREATE OR REPLACE TABLE outcome_menus (game_id VARCHAR, seq INTEGER, seat INTEGER,
    menu VARCHAR, name VARCHAR, source VARCHAR, stars INTEGER);
CREATE OR REPLACE TABLE outcome_recipes (game_id VARCHAR, seat INTEGER, recipe VARCHAR,
    name VARCHAR, items VARCHAR[], base INTEGER, guests JSON, herbs INTEGER, points INTEGER);
CREATE OR REPLACE TABLE outcome_facts (game_id VARCHAR, game_kind VARCHAR, seq INTEGER,
    position INTEGER, type VARCHAR, seat INTEGER, fact JSON);
"""

# Game-specific figures: label and SQL giving one number per kind (NULL when no data).
FIGURES: dict[str, tuple[str, str]] = {
    "bon-appetit": (
        "average winning bid",
        "SELECT avg(total) FROM outcome_bids WHERE won",
    ),
    "menu-masters": (
        "average Menu stars",
        "SELECT avg(stars) FROM outcome_menus",
    ),
    "picky-eaters": (
        "average recipe score",
        "SELECT avg(points) FROM outcome_recipes",
    ),
}


@dataclass(frozen=True)
class KindStats:
    """Stats of one game kind."""

    game_kind: str
    games: int
    win_rate_by_seat: tuple[float, ...]
    figure: str
    value: float | None


def _bids(game_id: str, folded: Folded) -> list[list[Any]]:
    """Bon Appetit! revealed bids, each marked whether it won its dish."""
    out: list[list[Any]] = []
    for facts in folded.facts:
        won = {(f["round"], f["seat"]) for f in facts if f.get("type") == "dish_won"}
        for f in facts:
            if f.get("type") != "bids_revealed":
                continue
            for bid in f["bids"]:
                bonus = bid["total"] - bid["base"]
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
                        bonus,
                        bid["total"],
                        winner and bid["total"] == f["highest"],
                    ]
                )
    return out


def _of_type(folded: Folded, kind: str) -> list[tuple[int, dict[str, Any]]]:
    """(seq, fact) for every fact of one type."""
    return [
        (seq, f)
        for seq, facts in enumerate(folded.facts, start=1)
        for f in facts
        if f.get("type") == kind
    ]


def _purchases(game_id: str, folded: Folded) -> list[list[Any]]:
    """Menu Masters purchases: cost, and who was paid or where the coins went."""
    return [
        [game_id, seq, f["seat"], f["store"], f["card"], f["cost"], f["paid_to"], f["coins_to"]]
        for seq, f in _of_type(folded, "purchased")
    ]


def _menus(game_id: str, folded: Folded) -> list[list[Any]]:
    """Menu Masters Menus completed, with their stars."""
    return [
        [game_id, seq, f["seat"], f["menu"], f["name"], f["source"], f["stars"]]
        for seq, f in _of_type(folded, "menu_completed")
    ]


def _recipes(game_id: str, folded: Folded) -> list[list[Any]]:
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
        for _, f in _of_type(folded, "game_over")
        for player in f.get("table", [])
        for r in player.get("recipes", [])
    ]


def _rows_of(stored: StoredGame) -> dict[str, list[list[Any]]] | None:
    """The projection rows of one finished game (None for a running one)."""
    if stored.rows[-1].kind != "seed_reveal":
        return None
    folded = refold(stored.rows, stored.server_seed, stored.pack_body)
    genesis: record_pb2.Genesis = folded.genesis
    table = folded.tables[-1]
    result = fold.outcome(table)
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
        "outcome_bids": _bids(game_id, folded) if kind == "bon-appetit" else [],
        "outcome_purchases": _purchases(game_id, folded) if kind == "menu-masters" else [],
        "outcome_menus": _menus(game_id, folded) if kind == "menu-masters" else [],
        "outcome_recipes": _recipes(game_id, folded) if kind == "picky-eaters" else [],
        "outcome_facts": facts,
    }


def rebuild(con: duckdb.DuckDBPyConnection, stored_games: Iterable[StoredGame]) -> int:
    """Drop and rebuild the projection tables on ``con``; returns the games projected."""
    con.execute(SCHEMA)
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
        label, query = FIGURES.get(kind, ("", "SELECT NULL"))
        value = con.execute(query).fetchone()
        figure = None if value is None or value[0] is None else float(value[0])
        out.append(KindStats(kind, int(played), tuple(float(r[1]) for r in rates), label, figure))
    return out
