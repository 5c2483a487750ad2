"""The visibility policy (replay/record/visibility.py), table by table.

Each row of ``TABLE`` is one kind of thing a game shows (a private fact, a sealed
command, a refusal, an explanation, a replay as another viewer, …) belonging to seat 0,
with who may see it while the game runs and once the seed is revealed, for the four
viewers: seat 0 (its owner), seat 1 (another seat), a spectator and the arbiter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest

from feastlog.replay import games
from feastlog.replay.games.engine import ARBITER, SPECTATOR, Fact, Viewer
from feastlog.replay.record.history import refold
from feastlog.replay.record.rows import COMMAND, SEED_REVEAL, Row
from feastlog.replay.record.visibility import (
    Hidden,
    behind_screen,
    command_for,
    facts_for,
    look_as,
    public_row,
    refusals_for,
    seen,
    sees_all,
    sees_command,
    sees_fact,
    sees_refusal,
    sender_of_another_game,
    table_viewer,
    viewers_of,
)
from feastlog.v1 import bon_appetit_pb2, menu_masters_pb2, record_pb2
from tests.recordutil import build

OWNER, OTHER = Viewer.of_seat(0), Viewer.of_seat(1)
VIEWERS = (OWNER, OTHER, SPECTATOR, ARBITER)

BA = games.engine("bon-appetit")
MM = games.engine("menu-masters")
SEALED_BID = record_pb2.Command(
    bon_appetit=bon_appetit_pb2.BonAppetitCommand(bid=bon_appetit_pb2.BonAppetitBid())
)
OPEN_MOVE = record_pb2.Command(
    menu_masters=menu_masters_pb2.MenuMastersCommand(
        finish_turn=menu_masters_pb2.MenuMastersFinishPurchaseTurn()
    )
)
RULING = record_pb2.Command(
    arbiter=record_pb2.ArbiterCommand(reason="table talk", note=record_pb2.Note(text="warned"))
)


def _looks(wanted: Viewer) -> Callable[[Viewer, bool], bool]:
    """Whether a viewer may replay the game as ``wanted``."""

    def may(viewer: Viewer, public: bool) -> bool:
        try:
            return look_as(viewer, wanted, public) == wanted
        except Hidden:
            return False

    return may


def _behind(viewer: Viewer, public: bool) -> bool:
    try:
        behind_screen(viewer, public, "explain a row")
    except Hidden:
        return False
    return True


@dataclass(frozen=True)
class Case:
    """One kind of thing of seat 0's: who sees it (owner, other, spectator, arbiter)."""

    what: str
    sees: Callable[[Viewer, bool], bool]
    running: tuple[bool, bool, bool, bool]
    revealed: tuple[bool, bool, bool, bool] = (True, True, True, True)


TABLE = (
    Case(
        "a private draw of seat 0",
        lambda v, p: sees_fact(v, {"type": "gems_drawn", "private_to": 0}, p),
        (True, False, False, True),
    ),
    Case(
        "a public fact",
        lambda v, p: sees_fact(v, {"type": "round_started", "round": 1}, p),
        (True, True, True, True),
    ),
    Case(
        "seat 0's sealed bid",
        lambda v, p: sees_command(v, BA, "seat:0", SEALED_BID, p),
        (True, False, False, True),
    ),
    Case(
        "seat 0's open move",
        lambda v, p: sees_command(v, MM, "seat:0", OPEN_MOVE, p),
        (True, True, True, True),
    ),
    Case(
        "an arbiter's ruling",
        lambda v, p: sees_command(v, BA, "arbiter", RULING, p),
        (True, True, True, True),
    ),
    Case(
        "a command refused to seat 0",
        lambda v, p: sees_refusal(v, "seat:0", p),
        (True, False, False, True),
    ),
    Case(
        "a command refused to an anonymous caller",
        lambda v, p: sees_refusal(v, "anonymous", p),
        (False, False, False, True),
    ),
    Case(
        "behind the screen (explain, what-if, faults, export)",
        _behind,
        (False, False, False, True),
    ),
    Case("the replay as seat 0", _looks(OWNER), (True, False, False, True)),
    Case("the replay as the spectator", _looks(SPECTATOR), (True, True, True, True)),
    Case("the replay as the arbiter", _looks(ARBITER), (False, False, False, True)),
    Case(
        "every hidden thing on the table",
        lambda v, p: table_viewer(v, p) == ARBITER,
        (False, False, False, True),
    ),
)


@pytest.mark.parametrize("case", TABLE, ids=[c.what for c in TABLE])
@pytest.mark.parametrize("public", [False, True], ids=["running", "revealed"])
def test_who_sees_what(case: Case, public: bool) -> None:
    expected = case.revealed if public else case.running
    got = tuple(case.sees(viewer, public) for viewer in VIEWERS)
    assert got == expected, f"{case.what}: owner, other, spectator, arbiter"


def test_a_spectator_may_replay_a_finished_game_as_the_arbiter() -> None:
    """The record is public once the game is over: anyone may look as anyone."""
    assert look_as(SPECTATOR, ARBITER, over=True) == ARBITER
    assert look_as(OTHER, OWNER, over=True) == OWNER
    with pytest.raises(Hidden, match="spectator cannot look at the game as arbiter"):
        look_as(SPECTATOR, ARBITER, over=False)


def test_lists_follow_the_single_rules() -> None:
    facts: list[Fact] = [
        {"type": "a", "private_to": 0},
        {"type": "b"},
        {"type": "c", "private_to": 1},
    ]
    assert facts_for(OWNER, facts, public=False) == (facts[0], facts[1])
    assert facts_for(SPECTATOR, facts, public=False) == (facts[1],)
    assert facts_for(SPECTATOR, facts, public=True) == tuple(facts)

    @dataclass
    class Refused:
        actor: str

    refused = [Refused("seat:0"), Refused("seat:1"), Refused("anonymous")]
    assert refusals_for(OWNER, refused, over=False) == refused[:1]
    assert refusals_for(SPECTATOR, refused, over=False) == []
    assert refusals_for(ARBITER, refused, over=False) == refused
    assert refusals_for(SPECTATOR, refused, over=True) == refused
    # sent with a seat token of another game: that game's business, the arbiter's alone
    foreign = [Refused(sender_of_another_game(0, "g_other")), *refused]
    assert refusals_for(ARBITER, foreign, over=False) == foreign
    assert refusals_for(SPECTATOR, foreign, over=True) == refused
    assert refusals_for(OWNER, foreign, over=True) == refused
    assert sees_all(SPECTATOR, over=True) and not sees_all(OWNER, over=False)
    assert [str(v) for v in viewers_of(3)] == ["seat:0", "seat:1", "seat:2", "spectator", "arbiter"]


def test_a_replay_shows_each_row_as_it_was_seen_then() -> None:
    """Before the reveal a seat sees its own bids and private draws, not the others';
    the reveal row is public, however the replay is asked for after the end."""
    built = build(players=3, seed_byte=5)
    folded = refold(built.rows, built.seed, built.pack_bytes)
    assert folded.rows[-1].kind == SEED_REVEAL
    bids = [r for r in folded.rows if r.kind == COMMAND]
    own = next(r for r in bids if r.actor == "seat:0")
    other = next(r for r in bids if r.actor == "seat:1")
    assert seen(folded, own.seq, OWNER).command is not None
    assert seen(folded, other.seq, OWNER).command is None
    assert seen(folded, other.seq, SPECTATOR).command is None
    assert seen(folded, other.seq, ARBITER).command is not None
    private = [
        (seq, f)
        for seq, facts in enumerate(folded.facts, start=1)
        for f in facts
        if "private_to" in f
    ]
    assert private, "a Bon Appetit! game draws gems privately"
    for seq, fact in private:
        owner = Viewer.of_seat(int(fact["private_to"]))
        assert fact in seen(folded, seq, owner).facts
        assert fact not in seen(folded, seq, SPECTATOR).facts
    mid = seen(folded, 3, SPECTATOR).view
    assert all("hand" not in s for s in mid["seats"])
    last = seen(folded, len(folded.rows), SPECTATOR)
    assert public_row(last.row) and last.view == BA.view(folded.tables[-1].game, ARBITER)


def test_a_non_command_row_has_no_command_to_show() -> None:
    genesis = Row("g", 1, "genesis", "server", "", b"", "", "", "", "")
    assert command_for(ARBITER, BA, genesis, public=True) is None
