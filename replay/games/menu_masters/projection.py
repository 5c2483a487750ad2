"""Menu Masters: its outcome tables, the purchases and the Menus completed in a finished game.

- ``outcome_purchases(game_id, seq, seat, store, card, cost, paid_to, coins_to)``: each
  purchase with its cost and where the coins went (``paid_to`` the owner's seat, else
  NULL; ``coins_to`` owner, store_board or bank);
- ``outcome_menus(game_id, seq, seat, menu, name, source, stars)``: each Menu completed,
  with the stars it scores.

The headline figure is the average stars of a completed Menu.
"""

from __future__ import annotations

from typing import Any

from feastlog.replay.games.engine import Fact, FactsByRow, Projection, ProjectionTable


def _of_type(facts: FactsByRow, kind: str) -> list[tuple[int, Fact]]:
    """(seq, fact) for every fact of one type."""
    return [
        (seq, f) for seq, row in enumerate(facts, start=1) for f in row if f.get("type") == kind
    ]


def purchases(game_id: str, facts: FactsByRow) -> list[list[Any]]:
    """Purchases: cost, and who was paid or where the coins went."""
    return [
        [game_id, seq, f["seat"], f["store"], f["card"], f["cost"], f["paid_to"], f["coins_to"]]
        for seq, f in _of_type(facts, "purchased")
    ]


def menus(game_id: str, facts: FactsByRow) -> list[list[Any]]:
    """Menus completed, with their stars."""
    return [
        [game_id, seq, f["seat"], f["menu"], f["name"], f["source"], f["stars"]]
        for seq, f in _of_type(facts, "menu_completed")
    ]


PROJECTION = Projection(
    tables=(
        ProjectionTable(
            "outcome_purchases",
            "game_id VARCHAR, seq INTEGER, seat INTEGER, store VARCHAR, card VARCHAR, "
            "cost INTEGER, paid_to INTEGER, coins_to VARCHAR",
            purchases,
        ),
        ProjectionTable(
            "outcome_menus",
            "game_id VARCHAR, seq INTEGER, seat INTEGER, menu VARCHAR, name VARCHAR, "
            "source VARCHAR, stars INTEGER",
            menus,
        ),
    ),
    figure=("average Menu stars", "SELECT avg(stars) FROM outcome_menus"),
)
