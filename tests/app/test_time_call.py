"""A round's time call is one decision (the application on a store in memory): the
``call_time`` row, every unfinished game's ruling (a row in its own record, with its
seed reveal) and the results go in one commit; a CallTime sent again finishes what is
missing, never refused; a round an older server left part-closed (the call written,
some rulings not) is finished by the next CallTime, read or start; a table that still
waits for its seats' entropy is begun and closed in the same commit."""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from feastlog.replay.games.engine import RuleViolation
from feastlog.replay.record.rows import ARBITER, SEED_REVEAL
from feastlog.replay.tournament.export import verify_tournament
from feastlog.replay.tournament.state import Tournament
from feastlog.service.app.tournament import Live, Seat
from feastlog.service.store import Batch, StoreConflict
from feastlog.service.store.records import Signed
from feastlog.v1 import record_pb2
from feastlog.v1 import tournament_record_pb2 as tpb
from tests.app.test_app_memory import App, on_memory
from tests.app.test_tournament_app import command, play_round

NOW = "2026-12-02T00:00:00Z"
PLAYERS = [f"P{i:02d}" for i in range(12)]


async def running_round(on: App, **options: str) -> tuple[str, list[Seat]]:
    """A tournament of 3 tables of 4, round 1 published and its clock running, table 1
    played to its end and the others a few moves in: its id and the round's seats."""
    desks = on.app.tournaments
    fmt = {"game_kind": "bon-appetit", "table_sizes": "4", "rounds": "2", **options}
    tid = (await desks.create_tournament(on.organiser, fmt, PLAYERS, NOW)).state.tournament_id
    await desks.pair(on.organiser, tid, [], [], NOW)
    seats = (await desks.publish(on.organiser, tid, NOW)).seats
    await desks.command(on.organiser, tid, command(start_clock=tpb.StartClock(round=1)), NOW)
    rng = random.Random(4)
    await play_round(on, [s for s in seats if s.table == 1], rng)
    for table in (2, 3):
        await moves(on, [s for s in seats if s.table == table], 2, rng)
    return tid, seats


async def moves(on: App, table: list[Seat], count: int, rng: random.Random) -> None:
    """``count`` legal commands at one table."""
    game_id = table[0].game_id
    callers = [on.caller(s.token) for s in sorted(table, key=lambda s: s.seat)]
    for sent in range(count):
        for caller in callers:
            legal = await on.app.replays.legal(caller, game_id)
            if legal.commands:
                await on.app.games.submit(caller, game_id, f"m{sent}", legal.seq, legal.commands[0])
                break


def call(number: int = 1) -> tpb.TournamentCommand:
    return command(call_time=tpb.CallTime(round=number))


def commits(on: App) -> list[Batch]:
    """Every batch committed from now on (the writer's commits, as they are sent)."""
    seen: list[Batch] = []
    real = on.app.db.commit

    async def counted(batch: Batch, folded: Any = None) -> Signed | None:
        seen.append(batch)
        return await real(batch, folded)

    on.app.db.commit = counted  # type: ignore[method-assign]
    return seen


async def called_only(on: App, tid: str, rule_tables: tuple[int, ...] = ()) -> None:
    """What an older server left after a kill: the ``call_time`` row in its own commit,
    then the rulings of ``rule_tables`` only, each alone (its results not taken)."""
    desks = on.app.tournaments
    stream = on.app.db.stream
    stream.unsubscribe(desks.committed)  # as after a restart: no game's end noted since

    async def call_alone(live: Live) -> Tournament:
        return await desks._append(live, [(call(), ARBITER)], NOW)

    current = (await desks._write(tid, call_alone)).current  # a read would finish it
    assert current is not None and current.called
    for table in rule_tables:
        ruling = record_pb2.ArbiterCommand(reason="time called in round 1")
        ruling.close_game.SetInParent()
        game_id = current.game_ids[table - 1]
        await on.app.games.rule(on.organiser, game_id, f"{tid}-r1-time", ruling)
    stream.subscribe("tournaments", desks.committed)


async def whole(on: App, tid: str) -> None:
    """Round 1 called, every table closed with its result, each game's record ended, and
    the tournament's export verified."""
    desks = on.app.tournaments
    current = (await desks.snapshot(tid, 0, NOW)).state.current
    assert current is not None and current.called and current.complete
    assert [r.closed for r in current.results if r is not None] == [False, True, True]
    for game_id in current.game_ids:
        rows = on.store.rows(game_id)
        assert rows[-1].kind == SEED_REVEAL
    for game_id in current.game_ids[1:]:
        ruled = [r.command_id for r in on.store.rows(game_id) if r.actor == "arbiter"]
        assert ruled == [f"{tid}-r1-time"]  # one ruling each, however often time is called
    report = verify_tournament((await desks.export_tournament(on.organiser, tid, NOW)).document)
    assert report.ok, report.faults


def run(scenario: Callable[[App], Awaitable[None]]) -> None:
    on_memory(scenario)


def test_a_time_call_is_one_commit_of_the_call_the_rulings_and_the_results() -> None:
    async def scenario(on: App) -> None:
        tid, _ = await running_round(on)
        desks = on.app.tournaments
        before = len(on.store.rows(tid))
        seen = commits(on)
        state = await desks.command(on.organiser, tid, call(), NOW)
        current = state.state.current
        assert current is not None and current.complete
        written = [b for b in seen if b.rows]
        assert len(written) == 1, [[(r.game_id, r.seq) for r in b.rows] for b in written]
        rows = written[0].rows
        ours = [r for r in rows if r.game_id == tid]
        actions = [tpb.TournamentCommand.FromString(r.body).WhichOneof("action") for r in ours]
        assert actions == ["call_time", "result", "result"]
        assert len(on.store.rows(tid)) == before + 3
        for game_id in current.game_ids[1:]:  # ruling and seed reveal, in their own records
            kinds = [(r.actor, r.kind) for r in rows if r.game_id == game_id]
            assert kinds == [("arbiter", "command"), ("server", SEED_REVEAL)]
            assert (await on.app.live.get(game_id)).over  # memory moved with the commit
        assert written[0].outcomes  # the games' outcomes projected in the same commit
        await whole(on, tid)

    run(scenario)


def test_a_time_call_sent_again_answers_the_round_and_writes_nothing() -> None:
    async def scenario(on: App) -> None:
        tid, _ = await running_round(on)
        desks = on.app.tournaments
        first = await desks.command(on.organiser, tid, call(), NOW)
        rows = len(on.store.rows(tid))
        judge = on.caller(await on.app.arbiters.add_arbiter(on.organiser, "judge-ann"))
        again = await desks.command(judge, tid, call(), NOW)  # another arbiter, the same call
        assert again == first and len(on.store.rows(tid)) == rows
        with pytest.raises(RuleViolation) as refused:  # a call of another round still is one
            await desks.command(on.organiser, tid, call(2), NOW)
        assert refused.value.rule_id == "TOUR-CLOCK"
        await whole(on, tid)

    run(scenario)


def test_a_time_call_is_refused_whole_before_any_game_is_ruled_on() -> None:
    async def scenario(on: App) -> None:
        desks = on.app.tournaments
        fmt = {"game_kind": "bon-appetit", "table_sizes": "4", "rounds": "2"}
        tid = (await desks.create_tournament(on.organiser, fmt, PLAYERS, NOW)).state.tournament_id
        await desks.pair(on.organiser, tid, [], [], NOW)
        seats = (await desks.publish(on.organiser, tid, NOW)).seats
        with pytest.raises(RuleViolation) as refused:  # the clock never started
            await desks.command(on.organiser, tid, call(), NOW)
        assert refused.value.rule_id == "TOUR-CLOCK"
        assert "TOUR-CLOCK" in refused.value.message
        for game_id in {s.game_id for s in seats}:
            assert not (await on.app.live.get(game_id)).over
            assert len(on.store.rows(game_id)) == 1

    run(scenario)


@pytest.mark.parametrize("ruled_before", [(), (2,)])
def test_the_next_time_call_finishes_a_round_an_older_server_left_part_closed(
    ruled_before: tuple[int, ...],
) -> None:
    async def scenario(on: App) -> None:
        tid, _ = await running_round(on)
        await called_only(on, tid, ruled_before)
        await on.app.tournaments.command(on.organiser, tid, call(), NOW)  # not TOUR-CLOCK
        await whole(on, tid)

    run(scenario)


def test_a_read_or_a_start_finishes_a_round_left_part_closed() -> None:
    async def scenario(on: App) -> None:
        tid, _ = await running_round(on)
        await called_only(on, tid)
        await on.app.tournaments.resume()  # what every node runs at its start
        await whole(on, tid)
        other, _ = await running_round(on)
        await called_only(on, other, (3,))
        await on.app.tournaments.snapshot(other, 0, NOW)  # any read catches up
        await whole(on, other)

    run(scenario)


def test_a_void_format_voids_every_table_still_playing_in_the_one_commit() -> None:
    async def scenario(on: App) -> None:
        tid, _ = await running_round(on, at_time="void")
        seen = commits(on)
        state = await on.app.tournaments.command(on.organiser, tid, call(), NOW)
        assert len([b for b in seen if b.rows]) == 1
        current = state.state.current
        assert current is not None and current.complete
        for result in current.results[1:]:
            assert result is not None and result.places == (1, 1, 1, 1) and result.closed

    run(scenario)


def test_a_table_waiting_for_seat_entropy_is_begun_and_closed_in_the_same_commit() -> None:
    async def scenario(on: App) -> None:
        desks = on.app.tournaments
        fmt = {"game_kind": "bon-appetit", "table_sizes": "4", "rounds": "1"}
        fmt["seat_entropy"] = "true"
        names = PLAYERS[:8]
        tid = (await desks.create_tournament(on.organiser, fmt, names, NOW)).state.tournament_id
        await desks.pair(on.organiser, tid, [], [], NOW)
        seats = (await desks.publish(on.organiser, tid, NOW)).seats
        await desks.command(on.organiser, tid, command(start_clock=tpb.StartClock(round=1)), NOW)
        for seat in seats:  # table 1 begins; at table 2 one seat never sends its entropy
            if seat.table == 1 or seat.seat > 0:
                await on.app.games.join(on.caller(seat.token), seat.game_id, b"dice")
        state = (await desks.snapshot(tid, 0, NOW)).state  # a read with a table waiting
        assert state.current is not None and state.current.results == (None, None)
        seen = commits(on)
        state = (await desks.command(on.organiser, tid, call(), NOW)).state
        assert len([b for b in seen if b.rows]) == 1
        assert state.current is not None and state.current.complete
        waited = state.current.game_ids[1]
        kinds = [r.kind for r in on.store.rows(waited)]
        assert kinds == ["genesis", "command", SEED_REVEAL]
        genesis = record_pb2.Genesis.FromString(on.store.rows(waited)[0].body)
        assert list(genesis.seat_entropy) == [b"", b"dice", b"dice", b"dice"]
        assert (await on.app.live.get(waited)).over

    run(scenario)


def test_a_time_call_that_meets_a_conflict_reads_its_records_again_and_lands_whole() -> None:
    """The store refuses the time call's commit as a conflict (another node wrote to the
    tournament or one of its games first): nothing of it is written, the tournament and
    the games it ruled on are read again, and the call is decided once more, whole."""

    async def scenario(on: App) -> None:
        tid, _ = await running_round(on)
        real = on.app.db.commit
        refused: list[Batch] = []

        async def conflict_once(batch: Batch, folded: Any = None) -> Signed | None:
            if not refused and any(r.game_id == tid for r in batch.rows):
                refused.append(batch)
                raise StoreConflict("a row of this commit is taken already")
            return await real(batch, folded)

        on.app.db.commit = conflict_once  # type: ignore[method-assign]
        state = (await on.app.tournaments.command(on.organiser, tid, call(), NOW)).state
        assert refused and state.current is not None and state.current.complete
        await whole(on, tid)

    run(scenario)
