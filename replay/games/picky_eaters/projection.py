"""Picky Eaters: its outcome table, the final scoring of every Recipe of a finished game.

``outcome_recipes(game_id, seat, recipe, name, items, base, guests, herbs, points)``:
``guests`` is the per-guest breakdown as JSON.  The headline figure is the average score
of a Recipe.
"""

from __future__ import annotations

import json
from typing import Any

from feastlog.replay.games.engine import FactsByRow, Projection, ProjectionTable


def recipes(game_id: str, facts: FactsByRow) -> list[list[Any]]:
    """Final scoring per Recipe, from the game_over scoring table."""
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
        for row in facts
        for f in row
        if f.get("type") == "game_over"
        for player in f.get("table", [])
        for r in player.get("recipes", [])
    ]


PROJECTION = Projection(
    tables=(
        ProjectionTable(
            "outcome_recipes",
            "game_id VARCHAR, seat INTEGER, recipe VARCHAR, name VARCHAR, items VARCHAR[], "
            "base INTEGER, guests JSON, herbs INTEGER, points INTEGER",
            recipes,
        ),
    ),
    figure=("average recipe score", "SELECT avg(points) FROM outcome_recipes"),
)
