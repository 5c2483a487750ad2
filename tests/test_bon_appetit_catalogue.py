"""Bon Appetit!: the rule catalogue is complete and every id is cited by a test."""

from __future__ import annotations

from pathlib import Path

from replay import games
from replay.games.bon_appetit import ENGINE

HERE = Path(__file__).parent


def _test_text() -> str:
    return "\n".join(p.read_text() for p in sorted(HERE.glob("test_bon_appetit_*.py")))


def test_every_rule_id_is_cited_by_a_test() -> None:
    text = _test_text()
    underscored = text.replace("_", "-")
    missing = [r for r in ENGINE.spec.rules if r not in text and r not in underscored]
    assert not missing, f"rule ids without a test: {missing}"


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
