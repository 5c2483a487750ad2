"""Bon Appetit!: malformed commands and illegal moves at the engine and fold level.

Malformed input raises MalformedCommand; each kind of illegal move raises RuleViolation
with its rule id, in the order ``checks`` lists; the state is left unchanged.
"""

from __future__ import annotations

import pytest

from feastlog.replay.games import fold
from feastlog.replay.games.bon_appetit import ENGINE
from feastlog.replay.games.bon_appetit.state import State
from feastlog.replay.games.engine import MalformedCommand, RuleViolation
from feastlog.replay.record.canonical import canonical_bytes
from feastlog.v1 import bon_appetit_pb2 as pb
from feastlog.v1 import record_pb2
from tests.replay.test_bon_appetit_rules import bid, play, position, tie


def _rejected(state: State, seat: int, command: pb.BonAppetitCommand) -> str:
    """Apply must refuse; the state's canonical bytes must not move."""
    before = canonical_bytes(state)
    with pytest.raises(RuleViolation) as caught:
        fold.play(ENGINE, state, seat, command)
    assert canonical_bytes(state) == before
    assert caught.value.rule_id in fold.checked_rules(
        ENGINE, fold.wrap_command("bon_appetit", command)
    )
    return caught.value.rule_id


@pytest.mark.parametrize(
    ("command", "field"),
    [
        (pb.BonAppetitCommand(), "action"),
        (
            pb.BonAppetitCommand(bid=pb.BonAppetitBid(gems=[pb.BON_APPETIT_GEM_UNSPECIFIED])),
            "bid.gems",
        ),
        (pb.BonAppetitCommand(bid=pb.BonAppetitBid(gems=[pb.BON_APPETIT_GEM_BLUE, 9])), "bid.gems"),  # type: ignore[list-item]
        (
            pb.BonAppetitCommand(tie_break_bid=pb.BonAppetitTieBreakBid(gems=[7])),  # type: ignore[list-item]
            "tie_break_bid.gems",
        ),
    ],
)
def test_malformed_commands(command: pb.BonAppetitCommand, field: str) -> None:
    with pytest.raises(MalformedCommand) as caught:
        fold.play(ENGINE, position(["b", "g", "y"]), 0, command)
    assert caught.value.field == field


def test_malformed_seat_and_foreign_message() -> None:
    table = fold.Table("bon-appetit", position(["b", "g", "y"]), (0, 0, 0))
    with pytest.raises(MalformedCommand) as caught:
        fold.step(ENGINE, table, "seat:5", record_pb2.Command(bon_appetit=bid("")))
    assert caught.value.field == "actor"
    with pytest.raises(MalformedCommand):
        fold.play(ENGINE, position(["b", "g"]), 0, record_pb2.SeatInfo(name="x"))


def test_illegal_moves_cite_their_rule_and_leave_state_unchanged() -> None:
    state = position(["bbggr", "r", "y"])
    assert _rejected(state, 0, tie("b")) == "BA-PHASES"
    assert _rejected(state, 0, bid("bbgg")) == "BA-BID-SIZE"
    assert _rejected(state, 1, bid("y")) == "BA-BID-OWN"
    two = position(["bgry", "b"])
    assert _rejected(two, 0, bid("bgry")) == "BA-BID-COLOURS"
    state, _ = play(state, (0, bid("r")))
    assert _rejected(state, 0, bid("b")) == "BA-TURN"
    state, _ = play(state, (1, bid("r")), (2, bid("")))
    assert _rejected(state, 2, tie("y")) == "BA-TURN"
    assert _rejected(state, 0, bid("b")) == "BA-PHASES"
    over = position(["b", "g", "y"], menu=(), deck=(), round_no=12)
    over, _ = play(over, (0, bid("")), (1, bid("")), (2, bid("")))
    assert _rejected(over, 0, bid("")) == "BA-END"


def test_check_order_over_beats_everything() -> None:
    """A wrong-phase, too-large bid after the end cites BA-END, the first check."""
    over = position(["b", "g", "y"], menu=(), deck=(), round_no=12)
    over, _ = play(over, (0, bid("")), (1, bid("")), (2, bid("")))
    assert _rejected(over, 0, tie("bbbbbb")) == "BA-END"
    assert ENGINE.checks(bid("")) == ("BA-PHASES", "BA-BID-SIZE", "BA-BID-COLOURS", "BA-BID-OWN")
    assert ENGINE.checks(tie("")) == ("BA-PHASES", "BA-BID-OWN")
    wrapped = fold.wrap_command("bon_appetit", bid(""))
    assert fold.checked_rules(ENGINE, wrapped)[:4] == [
        "FL-GAME-CLOSED",
        "BA-END",
        "FL-ARBITER-ONLY",
        "BA-TURN",
    ]


def test_a_seat_not_to_act_is_refused_before_the_phase_is_checked() -> None:
    """The fold checks the seat to act (BA-TURN) before the move's own checks (BA-PHASES):
    a seat not tied sending an initial bid during a tie-break round cites BA-TURN."""
    state = position(["bbggr", "r", "y"])
    state, _ = play(state, (0, bid("r")), (1, bid("r")), (2, bid("")))
    assert state.auction is not None and state.auction.tie_round == 1
    assert _rejected(state, 2, bid("y")) == "BA-TURN"


def test_fold_rejection_keeps_the_state_hash() -> None:
    pack = ENGINE.load_pack(ENGINE.default_pack_bytes())
    genesis = record_pb2.Genesis(
        game_kind="bon-appetit",
        seats=[record_pb2.SeatInfo(name=n) for n in ("Ann", "Brian", "Celia")],
        options={"first_seat": "0"},
    )
    table, _ = fold.start(genesis, bytes(32), pack)
    before = fold.state_hash(table)
    too_many = record_pb2.Command(bon_appetit=bid("bbbb"))
    with pytest.raises(RuleViolation) as caught:
        fold.step(ENGINE, table, "seat:0", too_many)
    assert caught.value.rule_id == "BA-BID-SIZE" and fold.state_hash(table) == before
