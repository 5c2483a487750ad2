"""A tournament's use cases on the store in memory: create, register, pair, publish,
play (bots), results flowing in, the clock, a drop, a late entry, a penalty, the end."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations
from typing import Any

import pytest

from feastlog.replay.games.engine import RuleViolation
from feastlog.replay.record.audit import verify
from feastlog.replay.record.export import export_record, to_text, verify_document
from feastlog.replay.record.visibility import Hidden
from feastlog.replay.tournament.export import verify_tournament
from feastlog.replay.tournament.record import fold_rows
from feastlog.replay.tournament.standings import against_par
from feastlog.service.app.tournament import Seat
from feastlog.service.store import Batch, StoreUnavailable
from feastlog.service.store.projection import rows_of_stored
from feastlog.service.store.records import Signed
from feastlog.v1 import tournament_record_pb2 as tpb
from tests.app.test_app_memory import App, on_memory

NOW = "2026-12-02T00:00:00Z"
OPTIONS = {"game_kind": "bon-appetit", "table_sizes": "3-4", "rounds": "3"}


async def play_round(on: App, seats: list[Seat], rng: random.Random) -> None:
    """Random legal commands at every table of a round until each game is over."""
    by_game: dict[str, list[Seat]] = {}
    for seat in seats:
        by_game.setdefault(seat.game_id, []).append(seat)
    for game_id, table in by_game.items():
        callers = [on.caller(s.token) for s in sorted(table, key=lambda s: s.seat)]
        sent = 0
        while not (await on.app.live.get(game_id)).over:
            for caller in rng.sample(callers, len(callers)):
                legal = await on.app.replays.legal(caller, game_id)
                if legal.commands:
                    command = rng.choice(legal.commands)
                    await on.app.games.submit(caller, game_id, f"bot-{sent}", legal.seq, command)
                    sent += 1
                    break


def command(**action: object) -> tpb.TournamentCommand:
    return tpb.TournamentCommand(reason="as the organiser decided", **action)  # type: ignore[arg-type]


def test_a_small_event_runs_on_the_record() -> None:
    async def scenario(on: App) -> None:
        desks = on.app.tournaments
        names = [f"P{i:02d}" for i in range(7)]
        state = await desks.create_tournament(on.organiser, OPTIONS, names, NOW)
        tid = state.state.tournament_id
        rng = random.Random(3)
        with pytest.raises(RuleViolation) as twice:
            await desks.command(
                on.organiser, tid, command(register=tpb.RegisterPlayer(name="P01")), NOW
            )
        assert twice.value.rule_id == "TOUR-REGISTER-TWICE"
        for number in (1, 2, 3):
            state = await desks.pair(on.organiser, tid, [], [], NOW)
            current = state.state.current
            assert current is not None and sorted(map(len, current.tables)) == [3, 4]
            published = await desks.publish(on.organiser, tid, NOW)
            seats = published.seats
            assert not published.replayed
            retried = await desks.publish(on.organiser, tid, NOW)  # its answer lost: sent again
            assert retried.replayed and retried.seats == seats
            assert retried.tournament.state == published.tournament.state
            with pytest.raises(RuleViolation) as early:
                await desks.pair(on.organiser, tid, [], [], NOW)
            assert early.value.rule_id == "TOUR-PAIR-UNFINISHED"
            await desks.command(
                on.organiser, tid, command(start_clock=tpb.StartClock(round=number)), NOW
            )
            await play_round(on, seats, rng)
            snap = await desks.snapshot(tid, 0, NOW)
            assert snap.state.rounds[-1].complete, snap.state.rounds[-1]
            if number == 1:
                await desks.command(
                    on.organiser, tid, command(drop=tpb.DropPlayer(name="P06")), NOW
                )
                await desks.command(
                    on.organiser, tid, command(register=tpb.RegisterPlayer(name="Late")), NOW
                )
        state = await desks.end(on.organiser, tid, NOW)
        snap = await desks.snapshot(tid, 0, NOW)
        assert snap.state.ended and snap.rows[-1].kind == "seed_reveal"
        again = fold_rows(snap.rows)[-1]
        assert again == snap.state
        played = {line.name: line.played for line in snap.standings}
        assert played["P06"] == 1 and played["Late"] == 2
        # the tournament's own record goes through the games' audit, export and verify
        stored = on.store.load(tid)
        assert stored is not None and rows_of_stored(stored) == []
        assert verify(stored.rows, stored.pack_body, stored.server_seed).ok
        alone = verify_document(to_text(export_record(stored.rows, stored.pack_body)))
        assert alone.ok and alone.game_kind == "tournament" and alone.commands_checked > 20
        report = verify_tournament((await desks.export_tournament(on.organiser, tid, NOW)).document)
        assert report.ok, report.faults
        assert report.games_verified == 6

    on_memory(scenario)


def test_a_duplicate_round_deals_every_table_the_same_and_scores_against_par() -> None:
    async def scenario(on: App) -> None:
        desks = on.app.tournaments
        options = {"table_sizes": "4", "rounds": "2", "duplicate": "true", "tiebreaks": "par"}
        state = await desks.create_tournament(
            on.organiser, options, [f"D{i}" for i in range(8)], NOW
        )
        tid = state.state.tournament_id
        rng = random.Random(5)
        for _ in (1, 2):
            await desks.pair(on.organiser, tid, [], [], NOW)
            seats = (await desks.publish(on.organiser, tid, NOW)).seats
            games = sorted({s.game_id for s in seats})
            geneses = [(await on.app.live.get(g)).genesis for g in games]
            assert len({g.seed_commitment for g in geneses}) == 1
            assert all(g.seed_supplied for g in geneses)
            first = [s for s in seats if s.game_id == games[0]]
            await play_round(on, first, rng)
            spectator = on.credentials.caller([])
            with pytest.raises(Hidden):  # its twin still runs: its record stays private
                await on.app.replays.export(spectator, games[0])
            await play_round(on, [s for s in seats if s.game_id != games[0]], rng)
            snap = await desks.snapshot(tid, 0, NOW)
            assert snap.state.rounds[-1].complete
            par = against_par(snap.state.rounds[-1])
            assert sum(par.values()) == 0  # par is each seat's mean across the tables
        await desks.end(on.organiser, tid, NOW)
        report = verify_tournament((await desks.export_tournament(on.organiser, tid, NOW)).document)
        assert report.ok, report.faults
        lines = (await desks.snapshot(tid, 0, NOW)).standings
        assert sum(line.par for line in lines) == 0

    on_memory(scenario)


def test_a_round_robin_event_is_paired_from_the_plane_and_verified() -> None:
    async def scenario(on: App) -> None:
        desks = on.app.tournaments
        options = {"table_sizes": "3", "rounds": "2", "pairing": "round_robin"}
        made = await desks.create_tournament(
            on.organiser, options, [f"R{i}" for i in range(9)], NOW
        )
        tid = made.state.tournament_id
        rng = random.Random(9)
        for _ in (1, 2):
            state = (await desks.pair(on.organiser, tid, [], [], NOW)).state
            assert state.current is not None and state.current.method == "round-robin"
            published = await desks.publish(on.organiser, tid, NOW)
            state = published.tournament.state
            await play_round(on, published.seats, rng)
        await desks.end(on.organiser, tid, NOW)
        report = verify_tournament((await desks.export_tournament(on.organiser, tid, NOW)).document)
        assert report.ok, report.faults
        assert sum("round robin re-derived" in c for c in report.checks) == 2
        met = Counter(
            frozenset(p) for r in state.rounds for t in r.tables for p in combinations(t, 2)
        )
        assert set(met.values()) == {1}

    on_memory(scenario)


def test_a_commit_that_failed_after_writing_leaves_memory_to_follow_the_store() -> None:
    """The store wrote a register row but its answer was a failure (a connection lost
    after COMMIT): the refusal reaches the caller, and the next write reads the store
    first, so it neither loses the row nor clashes with it (STORE_CONFLICT)."""

    async def scenario(on: App) -> None:
        desks = on.app.tournaments
        state = await desks.create_tournament(on.organiser, OPTIONS, ["A", "B", "C"], NOW)
        tid = state.state.tournament_id
        real = on.app.db.commit

        async def written_then_failed(batch: Batch, folded: Any = None) -> Signed | None:
            await real(batch, folded)
            on.app.db.commit = real  # type: ignore[method-assign]
            raise StoreUnavailable("the connection dropped after the commit")

        on.app.db.commit = written_then_failed  # type: ignore[method-assign]
        with pytest.raises(StoreUnavailable):
            await desks.command(
                on.organiser, tid, command(register=tpb.RegisterPlayer(name="D")), NOW
            )
        state = await desks.command(
            on.organiser, tid, command(register=tpb.RegisterPlayer(name="E")), NOW
        )
        assert [p.name for p in state.state.players] == ["A", "B", "C", "D", "E"]
        snap = await desks.snapshot(tid, 0, NOW)
        assert [r.hash for r in snap.rows] == [r.hash for r in on.store.rows(tid)]

    on_memory(scenario)


def test_the_standings_of_a_tournament_are_in_its_own_order() -> None:
    """GetStandings (``feastlog standings T``) ranks a tournament's players as GetTournament
    (``feastlog tournament standings T``) does: match points, then the format's
    tiebreaks, not wins then points; games that only carry a tournament id as a tag keep
    wins, then points, then name."""

    async def scenario(on: App) -> None:
        desks = on.app.tournaments
        names = [f"P{i:02d}" for i in range(8)]
        fmt = {"game_kind": "bon-appetit", "table_sizes": "4", "rounds": "2"}
        tid = (await desks.create_tournament(on.organiser, fmt, names, NOW)).state.tournament_id
        rng = random.Random(11)
        for _ in range(2):
            await desks.pair(on.organiser, tid, [], [], NOW)
            published = await desks.publish(on.organiser, tid, NOW)
            await play_round(on, list(published.seats), rng)
        ranked = [line.name for line in (await desks.snapshot(tid, now=NOW)).standings]
        found = await on.app.replays.standings(on.organiser, tid)
        assert [line.name for line in found.lines] == ranked
        assert found.finished == 4 and found.running == 0

    on_memory(scenario)
