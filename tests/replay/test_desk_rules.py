"""The table's rules (replay/table/desk.py), each from a constructed record, citing its rule id;
and the rewind property: a game rewound to N and played on with its own commands ends as
it did."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from feastlog.replay.games import fold
from feastlog.replay.games.engine import RuleViolation
from feastlog.replay.games.fold import state_hash
from feastlog.replay.record.audit import verify
from feastlog.replay.record.canonical import canonical_bytes
from feastlog.replay.record.export import export_record, to_text, verify_document
from feastlog.replay.record.history import refold
from feastlog.replay.table import desk
from feastlog.v1 import record_pb2
from tests.tableutil import Recorder, rewind_ruling

KINDS = ("bon-appetit", "menu-masters", "picky-eaters")


def played(kind: str, moves: int, seed: int = 1) -> tuple[Recorder, random.Random]:
    game = Recorder(kind, seed_byte=seed)
    chooser = random.Random(seed)
    for _ in range(moves):
        game.move(chooser)
    return game, chooser


def refused(game: Recorder, actor: str, command: record_pb2.Command) -> str:
    before = len(game.rows)
    with pytest.raises(RuleViolation) as caught:
        game.send(actor, command)
    assert len(game.rows) == before  # nothing changed
    return caught.value.rule_id


def call_of(
    about: int, claim: str = "the refill was wrong", hold: bool = False
) -> record_pb2.Command:
    return record_pb2.Command(call=record_pb2.SeatCall(about_seq=about, claim=claim, hold=hold))


def answer(
    call: int, verdict: record_pb2.CallVerdict.ValueType = record_pb2.CALL_VERDICT_DENIED
) -> record_pb2.Command:
    ruling = record_pb2.ArbiterCommand(reason="looked at it", answers_call=call, verdict=verdict)
    ruling.note.text = "answered"
    return record_pb2.Command(arbiter=ruling)


def test_a_table_with_nothing_at_it_hashes_as_before() -> None:
    game, _ = played("bon-appetit", 4)
    assert type(game.table) is fold.Table  # no desk key: earlier records keep their hashes
    game.call(1, 3, "seat 0 bid out of turn")
    assert isinstance(game.table, desk.SeatedTable)
    assert b'"desk":' in canonical_bytes(game.table)


def test_a_call_on_a_row_that_does_not_exist_is_refused_fl_call_row() -> None:
    game, _ = played("bon-appetit", 2)
    assert refused(game, "seat:0", call_of(len(game.rows) + 1)) == "FL-CALL-ROW"
    assert refused(game, "seat:0", call_of(0)) == "FL-CALL-ROW"


def test_a_call_needs_a_claim_fl_call_claim() -> None:
    game, _ = played("bon-appetit", 2)
    assert refused(game, "seat:0", call_of(2, claim="   ")) == "FL-CALL-CLAIM"


def test_a_held_game_refuses_moves_until_answered_fl_call_hold() -> None:
    game, _chooser = played("menu-masters", 3)
    call = game.call(0, 3, "the restock skipped the bakery", hold=True)
    seat = sorted(game.engine.to_act(game.table.game))[0]
    inner = game.engine.legal_commands(game.table.game, seat)[0]
    move = fold.wrap_command(game.engine.spec.command_field, inner)
    assert refused(game, f"seat:{seat}", move) == "FL-CALL-HOLD"
    assert fold.legal_commands(game.engine, game.table, f"seat:{seat}") == []
    assert refused(game, "seat:1", call_of(2, hold=True)) == "FL-CALL-SECOND-HOLD"
    game.call(1, 2, "and the coins", hold=False)  # a call that does not hold is taken
    facts = game.send("arbiter", answer(call))
    assert facts[-1] == {
        "type": "call_answered",
        "call": call,
        "seat": 0,
        "verdict": "denied",
        "reason": "looked at it",
    }
    game.send(f"seat:{seat}", move)  # the hold is lifted


def test_a_ruling_on_an_answered_call_is_refused_fl_call_answered() -> None:
    game, _ = played("picky-eaters", 2)
    call = game.call(0, 2, "wrong card")
    game.send("arbiter", answer(call))
    assert refused(game, "arbiter", answer(call)) == "FL-CALL-ANSWERED"
    assert refused(game, "arbiter", answer(2)) == "FL-CALL-UNKNOWN"
    no_verdict = answer(call)
    no_verdict.arbiter.verdict = record_pb2.CALL_VERDICT_UNSPECIFIED
    assert refused(game, "arbiter", no_verdict) == "FL-CALL-ANSWERED"
    later = game.call(1, 2, "again")
    no_verdict.arbiter.answers_call = later
    assert refused(game, "arbiter", no_verdict) == "FL-CALL-VERDICT"


def test_a_seat_has_a_bounded_number_of_open_calls_fl_call_limit() -> None:
    game, _ = played("bon-appetit", 1)
    for _ in range(desk.OPEN_CALLS):
        game.call(0, 2, "again and again")
    assert refused(game, "seat:0", call_of(2)) == "FL-CALL-LIMIT"
    game.call(1, 2, "another seat may still call")


def test_only_seats_call_and_only_the_arbiter_answers() -> None:
    game, _ = played("bon-appetit", 1)
    assert refused(game, "arbiter", call_of(2)) == "FL-ARBITER-ONLY"


def test_rewind_refusals() -> None:
    game, chooser = played("bon-appetit", 6)
    last = len(game.rows)
    rewind = record_pb2.Command(arbiter=rewind_ruling(last + 1))
    assert refused(game, "arbiter", rewind) == "FL-REWIND-TARGET"  # past the record's end
    rewind.arbiter.rewind.to_seq = 0
    assert refused(game, "arbiter", rewind) == "FL-REWIND-TARGET"
    game.rule(rewind_ruling(4))
    at = len(game.rows)
    game.move(chooser)
    rewind.arbiter.rewind.to_seq = 3  # before the rewind at `at`: it would abandon it
    assert refused(game, "arbiter", rewind) == "FL-REWIND-RULING"
    rewind.arbiter.rewind.to_seq = at + 1  # the last row: no move after it
    assert refused(game, "arbiter", rewind) == "FL-REWIND-NOTHING"
    rewind.arbiter.rewind.to_seq = at
    game.send("arbiter", rewind)  # back to the state right after the last rewind: taken


def test_a_rewind_past_the_end_of_a_finished_game_is_refused() -> None:
    game, chooser = played("picky-eaters", 0)
    while not game.over:
        game.move(chooser)
    with pytest.raises(RuleViolation) as caught:
        game.send("arbiter", record_pb2.Command(arbiter=rewind_ruling(3)))
    assert caught.value.rule_id == game.engine.spec.end_rule


def test_the_rewound_game_continues_from_the_targets_state_and_rulings_stand() -> None:
    game, _chooser = played("bon-appetit", 5)
    target = 3
    game.rule(
        record_pb2.ArbiterCommand(
            reason="r", score_adjustment=record_pb2.ScoreAdjustment(seat=1, points=2)
        )
    )
    call = game.call(0, 4, "seat 1 bid twice", hold=True)
    facts = game.rule(rewind_ruling(target, call))
    assert game.table.game is game.tables[target - 1].game
    assert game.table.adjustments == (0, 2, 0)
    assert [f["type"] for f in facts] == ["ruling", "rewound", "call_answered"]
    assert desk.holding(game.table) is None
    superseded = desk.superseded(game.rows)
    assert sorted(superseded) == [4, 5, 6]  # the seat moves, not the adjustment or the call
    assert set(superseded.values()) == {len(game.rows)}


def _finish(game: Recorder, commands: list[tuple[str, record_pb2.Command]]) -> None:
    for actor, command in commands:
        game.send(actor, command)


@settings(
    max_examples=12,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    kind=st.sampled_from(KINDS),
    seed=st.integers(1, 200),
    data=st.data(),
)
def test_rewind_and_replay_ends_identical(kind: str, seed: int, data: st.DataObject) -> None:
    """Random games, random N: rewound to N and played on with the original commands, the
    game ends exactly as the original did; audit and export verify both lines."""
    original = Recorder(kind, seed_byte=seed)
    chooser = random.Random(seed)
    sent: list[tuple[str, record_pb2.Command]] = []
    while not original.over and len(sent) < 1000:
        sent.append(original.move(chooser))
    assume(original.over)
    n = data.draw(st.integers(1, len(sent)), label="N")  # after N rows: genesis + N-1 moves
    extra = data.draw(st.integers(1, len(sent) - n + 1), label="played before the rewind")
    extra = min(extra, len(sent) - (n - 1))
    again = Recorder(kind, seed_byte=seed)
    _finish(again, sent[: n - 1 + extra])
    assume(not again.over)  # the last move ended it: no rewind after the end
    again.rule(rewind_ruling(n))
    _finish(again, sent[n - 1 :])
    assert again.over
    assert canonical_bytes(again.table.game) == canonical_bytes(original.table.game)
    assert fold.outcome(again.engine, again.table) == fold.outcome(original.engine, original.table)
    report = verify(again.rows, again.pack_bytes)
    assert report.ok, report
    exported = verify_document(to_text(export_record(again.rows, again.pack_bytes)))
    assert exported.ok, exported
    folded = refold(again.rows, again.seed, again.pack_bytes)
    assert state_hash(folded.tables[-1]) == again.rows[-1].state_hash


def test_what_if_folds_a_call_an_answer_and_a_rewind_in_a_rows_place() -> None:
    from feastlog.presentation.explain import what_if

    game, _ = played("bon-appetit", 4)
    call = game.call(0, 3, "seat 1 bid twice", hold=True)
    game.rule(record_pb2.ArbiterCommand(reason="looking", note=record_pb2.Note(text="later")))
    folded = refold(game.rows, game.seed, game.pack_bytes)
    last = len(game.rows)
    rewind = record_pb2.Command(arbiter=rewind_ruling(3, call))
    assert what_if(folded, last, "arbiter", rewind)["legal"] is True
    assert what_if(folded, last, "arbiter", answer(call))["legal"] is True
    assert what_if(folded, last, "seat:1", call_of(2))["legal"] is True
    # in the call's own place there is no call to answer yet
    assert what_if(folded, call, "arbiter", rewind)["rule_id"] == "FL-CALL-UNKNOWN"
