"""Bon Appetit!: its outcome table, every revealed bid of a finished game with its breakdown.

``outcome_bids(game_id, round, tie_round, dish, seat, gems, base, bonus, total, won)``:
base from gem values, bonus from gem and dish abilities; ``won`` marks the bid that took
the dish.  The headline figure is the average winning bid.
"""

from __future__ import annotations

from typing import Any

from feastlog.replay.games.engine import FactsByRow, Projection, ProjectionTable


def bids(game_id: str, facts: FactsByRow) -> list[list[Any]]:
    """Revealed bids, each marked whether it won its dish."""
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


PROJECTION = Projection(
    tables=(
        ProjectionTable(
            "outcome_bids",
            "game_id VARCHAR, round INTEGER, tie_round INTEGER, dish VARCHAR, seat INTEGER, "
            "gems VARCHAR[], base INTEGER, bonus INTEGER, total INTEGER, won BOOLEAN",
            bids,
        ),
    ),
    figure=("average winning bid", "SELECT avg(total) FROM outcome_bids WHERE won"),
)
