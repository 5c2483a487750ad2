"""Clocks folded from the rows' times (replay/table/clocks.py), from constructed records: bank and
increment, a per-move limit, a simultaneous phase (sealed bids: every seat to act runs),
a time-out and its consequences, pause and resume, holds; each citing its rule id."""

from __future__ import annotations

import pytest

from feastlog.replay.games import fold
from feastlog.replay.games.engine import RuleViolation, SetupRefused
from feastlog.replay.record.audit import verify
from feastlog.replay.table import clocks, desk
from feastlog.v1 import record_pb2
from tests.tableutil import Recorder


def at(seconds: float) -> str:
    """A row's time, ``seconds`` after the genesis (2026-01-01T00:00:00Z)."""
    whole, ms = divmod(round(seconds * 1000), 1000)
    return f"2026-01-01T{whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d}.{ms:03d}000Z"


def clocked(kind: str, clock: str, on_timeout: str = "arbiter", players: int = 2) -> Recorder:
    options = {"clock": clock, "clock_timeout": on_timeout}
    return Recorder(kind, players=players, seed_byte=5, options=options)


def clocks_of(game: Recorder) -> clocks.Clocks:
    found = desk.desk_of(game.table).clocks
    assert found is not None
    return found


def move(game: Recorder, seat: int | None = None, when: float | None = None) -> int:
    """The first legal move of ``seat`` (default: the first to act), at ``when``."""
    seat = sorted(game.engine.to_act(game.table.game))[0] if seat is None else seat
    inner = game.engine.legal_commands(game.table.game, seat)[0]
    if when is not None:
        game.times[len(game.rows) + 1] = at(when)
    game.send(f"seat:{seat}", fold.wrap_command(game.engine.spec.command_field, inner))
    return seat


def timeout(game: Recorder, seat: int, when: float) -> list[dict[str, object]]:
    game.times[len(game.rows) + 1] = at(when)
    event = record_pb2.ClockEvent(timeout=record_pb2.ClockTimeout(seat=seat))
    return game.send("server", record_pb2.Command(clock=event))


def test_bank_and_increment_charge_only_the_seat_to_act() -> None:
    game = clocked("picky-eaters", "bank:60+5")
    first = sorted(game.engine.to_act(game.table.game))
    assert clocks_of(game).running == tuple(first) and len(first) == 1
    seat = move(game, when=12.5)
    found = clocks_of(game)
    other = 1 - seat
    assert found.used_ms[seat] == 12_500 and found.used_ms[other] == 0
    assert found.remaining_ms[seat] == 60_000 - 12_500 + 5_000  # the increment after the move
    assert found.remaining_ms[other] == 60_000


def test_in_a_sealed_bid_every_seat_to_act_runs() -> None:
    game = clocked("bon-appetit", "bank:100+0", players=3)
    assert clocks_of(game).running == (0, 1, 2)  # every seat seals a bid at once
    sealed = move(game, when=10)
    found = clocks_of(game)
    assert found.used_ms == (10_000, 10_000, 10_000)
    assert sealed not in found.running and len(found.running) == 2
    move(game, when=30)
    assert sorted(clocks_of(game).used_ms) == [10_000, 30_000, 30_000]


def test_a_per_move_limit_is_fresh_each_move() -> None:
    game = clocked("picky-eaters", "move:20")
    seat = move(game, when=15)
    nxt = sorted(game.engine.to_act(game.table.game))[0]
    if nxt == seat:  # to act again: a fresh allowance for the next move
        assert clocks_of(game).remaining_ms[seat] == 20_000
    else:  # the 15 s it spent stay spent until it is to act again; the next seat's is fresh
        assert clocks_of(game).remaining_ms == tuple(
            20_000 if s == nxt else 5_000 for s in range(2)
        )
    with pytest.raises(RuleViolation) as early:
        timeout(game, nxt, 15 + 19.9)
    assert early.value.rule_id == "FL-CLOCK-EARLY"


@pytest.mark.parametrize("consequence", ["arbiter", "forfeit"])
def test_a_time_out_calls_the_arbiter_and_holds_the_game(consequence: str) -> None:
    game = clocked("picky-eaters", "move:20", consequence)
    seat = sorted(game.engine.to_act(game.table.game))[0]
    facts = timeout(game, seat, 20)
    assert facts == [{"type": "clock_timeout", "seat": seat, "consequence": consequence}]
    held = desk.holding(game.table)
    assert held is not None and held.seat == seat and "FL-CLOCK-TIMEOUT" in held.claim
    assert (seat in game.table.forfeited) == (consequence == "forfeit")
    assert clocks_of(game).running == ()  # no clock runs while held
    with pytest.raises(RuleViolation) as refused:
        move(game, seat)
    assert refused.value.rule_id == "FL-CALL-HOLD"
    answer = record_pb2.ArbiterCommand(
        reason="play on", answers_call=held.seq, verdict=record_pb2.CALL_VERDICT_UPHELD
    )
    answer.note.text = "seat plays on without a clock"
    game.rule(answer)
    assert seat not in clocks_of(game).running  # it plays on without a clock
    move(game, seat)


def test_pause_and_resume_stop_every_clock() -> None:
    game = clocked("picky-eaters", "bank:60+0")
    seat = sorted(game.engine.to_act(game.table.game))[0]
    game.times[2] = at(5)
    game.rule(record_pb2.ArbiterCommand(reason="a break", pause_clocks=record_pb2.PauseClocks()))
    assert clocks_of(game).running == () and clocks_of(game).used_ms[seat] == 5_000
    with pytest.raises(RuleViolation) as again:
        game.times[3] = at(6)
        game.rule(record_pb2.ArbiterCommand(reason="x", pause_clocks=record_pb2.PauseClocks()))
    assert again.value.rule_id == "FL-CLOCK-PAUSED"
    game.times[3] = at(305)  # five minutes paused: nobody is charged
    game.rule(record_pb2.ArbiterCommand(reason="back", resume_clocks=record_pb2.ResumeClocks()))
    move(game, seat, when=310)
    assert clocks_of(game).used_ms[seat] == 10_000


def test_pausing_a_game_without_clocks_is_refused() -> None:
    game = Recorder("picky-eaters", players=2)
    with pytest.raises(RuleViolation) as refused:
        game.rule(record_pb2.ArbiterCommand(reason="x", pause_clocks=record_pb2.PauseClocks()))
    assert refused.value.rule_id == "FL-CLOCK-NONE"


@pytest.mark.parametrize(
    "clock", ["bank:5+0", "bank:60+4000", "move:1", "move:100000", "fast", "bank:60"]
)
def test_a_clock_option_out_of_range_is_refused(clock: str) -> None:
    with pytest.raises(SetupRefused) as refused:
        clocked("picky-eaters", clock)
    assert refused.value.rule_id == "FL-CLOCK-OPTION" and refused.value.field == "options"
    with pytest.raises(SetupRefused):
        clocked("picky-eaters", "move:30", on_timeout="shrug")


def test_a_clocked_record_refolds_and_audits_to_the_same_clocks() -> None:
    game = clocked("bon-appetit", "bank:90+2", players=3)
    for i in range(12):
        move(game, when=3 * (i + 1) + 0.25 * i)
    report = verify(game.rows, game.pack_bytes, game.seed)
    assert report.ok, report
    # a row's time is under the chain and the clocks under the state hash: another time
    # folds to other clocks, and the audit finds it
    assert clocks_of(game).used_ms != (0, 0, 0)


def test_a_time_out_passes_where_the_rulebook_gives_a_pass() -> None:
    game = clocked("picky-eaters", "move:20", "pass")
    seat = sorted(game.engine.to_act(game.table.game))[0]
    assert desk.default_move(game.engine, game.table.game, seat) is not None
    facts = timeout(game, seat, 20)
    assert facts[0] == {"type": "clock_timeout", "seat": seat, "consequence": "pass"}
    assert desk.holding(game.table) is None  # no call: the seat passed
    assert seat not in game.engine.to_act(game.table.game)
    assert verify(game.rows, game.pack_bytes, game.seed).ok


def test_with_no_pass_to_play_a_time_out_calls_the_arbiter() -> None:
    game = clocked("bon-appetit", "move:20", "pass")  # a sealed bid has no pass
    facts = timeout(game, 0, 20)
    assert facts == [{"type": "clock_timeout", "seat": 0, "consequence": "arbiter"}]
    assert desk.holding(game.table) is not None
