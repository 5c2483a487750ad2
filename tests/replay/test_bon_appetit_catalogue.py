"""Bon Appetit!: the rule catalogue's shape and the engine's facts (that every id is cited
by a test is a contract of every game, tests/contract/)."""

from __future__ import annotations

from pathlib import Path

from feastlog.replay import games
from feastlog.replay.games.bon_appetit import ENGINE

HERE = Path(__file__).parent


def test_catalogue_shape() -> None:
    assert all(r.id.startswith("BA-") and r.section and r.text for r in ENGINE.spec.rules.values())
    readings = [r for r in ENGINE.spec.rules.values() if r.interpretation]
    assert {f"BA-I{i}" for i in range(1, 9)} <= {r.id for r in readings}


def test_engine_facts() -> None:
    engine = games.engine("bon-appetit")
    assert engine is ENGINE and engine.spec.command_field == "bon_appetit"
    assert (engine.spec.min_seats, engine.spec.max_seats) == (2, 4)
    assert engine.spec.option_defaults["first_seat"] == "random"
    assert engine.spec.rng_labels == (
        "bon-appetit/gem-card",
        "bon-appetit/dish-deck",
        "bon-appetit/bag",
        "bon-appetit/first-seat",
    )
