"""Arbiter rulings as the fold checks them (the record rules FL-RULING-*)."""

from __future__ import annotations

import pytest

from feastlog.replay import games
from feastlog.replay.games import fold
from feastlog.replay.games.bon_appetit.pack import default_pack_bytes, load_pack
from feastlog.replay.games.engine import RuleViolation
from feastlog.replay.games.fold import ADJUSTMENT_LIMIT
from feastlog.v1 import record_pb2


def table() -> fold.Table:
    seats = [record_pb2.SeatInfo(name=n) for n in ("Ann", "Brian", "Celia")]
    genesis = record_pb2.Genesis(game_kind="bon-appetit", ruleset_version="1", seats=seats)
    return fold.start(genesis, bytes(32), load_pack(default_pack_bytes()))[0]


def adjust(seat: int, points: int) -> record_pb2.Command:
    ruling = record_pb2.ArbiterCommand(
        reason="scoring slip", score_adjustment=record_pb2.ScoreAdjustment(seat=seat, points=points)
    )
    return record_pb2.Command(arbiter=ruling)


def test_FL_RULING_POINTS_a_seats_total_adjustment_stays_within_the_limit() -> None:
    """A score adjustment that would take a seat's total past ±1,000,000 points is refused
    (the outcomes projection keeps 32-bit scores: a larger total could never be written
    with the row that ends the game); up to the limit, adjustments add up."""
    engine = games.engine("bon-appetit")
    state, facts = fold.step(engine, table(), "arbiter", adjust(0, ADJUSTMENT_LIMIT))
    assert state.adjustments == (ADJUSTMENT_LIMIT, 0, 0)
    assert facts[0]["points"] == ADJUSTMENT_LIMIT
    with pytest.raises(RuleViolation) as caught:
        fold.step(engine, state, "arbiter", adjust(0, 1))
    assert caught.value.rule_id == "FL-RULING-POINTS"
    assert caught.value.message == (
        "an adjustment of +1 would take seat 0's total adjustment to +1000001; "
        "it stays within ±1,000,000 points"
    )
    with pytest.raises(RuleViolation) as caught:
        fold.step(engine, table(), "arbiter", adjust(1, -(2**31 - 1)))
    assert caught.value.rule_id == "FL-RULING-POINTS"
    state, _ = fold.step(engine, state, "arbiter", adjust(0, -2 * ADJUSTMENT_LIMIT))
    assert state.adjustments == (-ADJUSTMENT_LIMIT, 0, 0)
    assert "FL-RULING-POINTS" in fold.checked_rules(engine, adjust(0, 1))
