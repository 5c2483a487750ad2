"""A tournament's tables with seat clocks (``game.clock``, ``game.clock_timeout`` in the
format: the table's own options, which each table's game takes), and a game its clock
ends: the server's time-out row plays a Picky Eaters seat's default move, the last pass
of round 5, which ends the game, and its result reaches the tournament through the
stream of committed rows (``Tournaments.committed``), with nobody reading or writing the
tournament.  On a store in memory, the service's clock a ``ManualClock`` the test moves.
"""

from __future__ import annotations

import asyncio

import pytest

from feastlog.replay.games.engine import SetupRefused
from feastlog.replay.record.rows import SEED_REVEAL
from feastlog.service.app import commands
from feastlog.service.app.clock import ManualClock
from feastlog.service.app.live import LiveGame
from feastlog.v1 import record_pb2
from feastlog.v1 import tournament_record_pb2 as tpb
from tests.app.test_app_memory import App, on_memory

NOW = "2026-12-02T00:00:00.000000Z"
FORMAT = {
    "game_kind": "picky-eaters",
    "table_sizes": "2",
    "rounds": "1",
    "game.clock": "move:5",
    "game.clock_timeout": "pass",
}


def ends_the_game(game: LiveGame, seat: int, command: record_pb2.Command, now: str) -> bool:
    """Whether ``command`` from ``seat`` would end the game now (folded, not recorded)."""
    body = command.SerializeToString(deterministic=True)
    done = commands.advance(game, f"seat:{seat}", None, command, body, "probe", now)
    return done.rows[-1].kind == SEED_REVEAL


async def until(check: object, what: str) -> None:
    """The server's timer and the tournament's catch-up run as tasks: wait for them."""
    for _ in range(500):
        if check():  # type: ignore[operator]
            return
        await asyncio.sleep(0.002)
    pytest.fail(f"{what} did not happen")


def test_a_game_its_clock_ends_has_its_result_taken_into_the_tournament() -> None:
    async def scenario(on: App) -> None:
        clock = ManualClock(NOW)  # the tournament's rows and the games' on one time
        on.app.clock = clock
        desks = on.app.tournaments
        tid = (
            await desks.create_tournament(on.organiser, FORMAT, ["Ann", "Bo"], NOW)
        ).state.tournament_id
        await desks.pair(on.organiser, tid, [], [], NOW)
        seats = sorted((await desks.publish(on.organiser, tid, NOW)).seats, key=lambda s: s.seat)
        game = await on.app.live.get(seats[0].game_id)
        assert dict(game.genesis.options)["clock"] == "move:5"
        callers = [on.caller(s.token) for s in seats]
        sent = 0
        while True:  # the seats play; the last pass is left to the clock
            seat, legal = 0, []
            for seat in range(2):
                legal = (await on.app.replays.legal(callers[seat], game.game_id)).commands
                if legal:
                    break
            passes = [c for c in legal if c.picky_eaters.WhichOneof("action") == "pass_round"]
            command = passes[0] if passes else legal[0]
            if passes and ends_the_game(game, seat, command, clock.now()):
                break
            await on.app.games.submit(callers[seat], game.game_id, f"c{sent}", None, command)
            sent += 1
        before = game.last_seq
        clock.advance(5.001)  # the seat's time runs out: its pass is played for it
        await until(lambda: game.over, "the time-out")
        timeout = game.rows[before]
        assert timeout.actor == "server"
        assert record_pb2.Command.FromString(timeout.body).WhichOneof("game") == "clock"
        assert game.rows[-1].kind == SEED_REVEAL

        def result_rows() -> list[tpb.TournamentCommand]:
            found = [tpb.TournamentCommand.FromString(r.body) for r in on.store.rows(tid)[1:]]
            return [c for c in found if c.WhichOneof("action") == "result"]

        await until(lambda: result_rows(), "the result's catch-up")
        (result,) = result_rows()
        assert result.result.game_id == game.game_id and result.by == "server"
        state = (await desks.snapshot(tid, 0, NOW)).state
        assert state.current is not None and state.current.complete

    on_memory(scenario)


@pytest.mark.parametrize(
    ("option", "value", "field"),
    [
        ("game.clock", "move:1", "game.clock"),
        ("game.clock", "hourglass", "game.clock"),
        ("game.clock_timeout", "shrug", "game.clock_timeout"),
    ],
)
def test_a_seat_clock_the_tables_cannot_take_is_refused_naming_the_option(
    option: str, value: str, field: str
) -> None:
    async def scenario(on: App) -> None:
        fmt = {**FORMAT, option: value}
        with pytest.raises(SetupRefused) as refused:
            await on.app.tournaments.create_tournament(on.organiser, fmt, ["Ann", "Bo"], NOW)
        assert refused.value.rule_id == "TOUR-FORMAT" and refused.value.field == field
        assert "FL-CLOCK-OPTION" in refused.value.message

    on_memory(scenario)
