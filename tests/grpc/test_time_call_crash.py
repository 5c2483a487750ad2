"""A round's time call lands whole or not at all, wherever a ``kill -9`` meets it.

One tournament is set up through a ``feastlog serve`` process: 12 players at 3 tables,
the clock started, table 1 played to its end, tables 2 and 3 a few moves in.  For each
point of the commits a CallTime makes (``tests/faults.py``: before its commit is sent,
while the store's process has it, just after it is in the file, and after the commits
an older server made next), a copy of that file is served by a server that kills itself
there.  Then the file alone shows the round whole: either time was not called (no
ruling in any game) or it was called, every table is closed with its seed revealed, and
every table has its result.  The server started again on it agrees, and a CallTime
sent again finishes or answers it, never refused (TOUR-CLOCK).
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import grpc
import pytest

from feastlog.replay.record.rows import ARBITER, SEED_REVEAL
from feastlog.replay.tournament.record import fold_rows
from feastlog.replay.tournament.state import Tournament
from feastlog.service.app.clock import utc_now
from feastlog.service.app.tournament import Live
from feastlog.service.store.port import open_store
from feastlog.v1 import tournament_record_pb2 as rpb
from feastlog.v1 import tournament_service_pb2 as pb
from feastlog.v1 import tournament_service_pb2_grpc as pb_grpc
from tests.faults import kill_at
from tests.serverutil import ProcessServer, ThreadedServer, bearer, play_to_end, stub

KEY = "org_time-call-crash-organiser-key-0123456789"
PLAYERS = [f"Player {chr(65 + i)}" for i in range(12)]
FORMAT = {"game_kind": "bon-appetit", "table_sizes": "4", "rounds": "2", "at_time": "close"}
# every point of a time call: its one commit (before, with the store, after), and the
# commits the older server made after it (one ruling per table, then the results)
POINTS = [("before", 1), ("inflight", 1), ("after", 1), ("after", 2), ("after", 3)]


def tour_of(server: ProcessServer) -> pb_grpc.TournamentServiceStub:
    return pb_grpc.TournamentServiceStub(grpc.insecure_channel(server.address))


@pytest.fixture(scope="module")
def before_time(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A served file with round 1 running (one table ended), and the tournament's id."""
    folder = tmp_path_factory.mktemp("cup")
    server = ProcessServer(folder / "cup.duckdb", KEY)
    try:
        tour, org = tour_of(server), bearer(KEY)
        made = tour.CreateTournament(
            pb.CreateTournamentRequest(format=FORMAT, players=PLAYERS), metadata=org
        ).tournament
        tid = made.tournament_id
        tour.PairRound(pb.PairRoundRequest(tournament_id=tid), metadata=org)
        published = tour.PublishRound(pb.PublishRoundRequest(tournament_id=tid), metadata=org)
        tour.StartClock(pb.StartClockRequest(tournament_id=tid), metadata=org)
        tokens: dict[str, list[str]] = {}
        for seat in sorted(published.seats, key=lambda s: (s.table, s.seat)):
            tokens.setdefault(seat.game_id, []).append(seat.seat_token)
        games = stub(server.address)
        for t, (game_id, seats) in enumerate(tokens.items()):
            play_to_end(games, game_id, seats, seed=t, stop_after=None if t == 0 else 3)
        state = tour.GetTournament(pb.GetTournamentRequest(tournament_id=tid)).tournament
        assert [t.finished for t in state.rounds[0].tables] == [True, False, False]
    finally:
        server.terminate()
    return folder, tid


def round_on_file(path: Path, tid: str) -> tuple[bool, list[bool], list[bool], list[str]]:
    """Round 1 as the file holds it: whether time was called, which tables have their
    result, which games ended, and the command ids of every game's arbiter rows."""
    store = open_store(str(path))
    try:
        state = fold_rows(store.rows(tid))[-1]
        first = state.rounds[0]
        records = [store.rows(g) for g in first.game_ids]
    finally:
        store.close()
    ruled = [r.command_id for rows in records for r in rows if r.actor == "arbiter"]
    ended = [rows[-1].kind == SEED_REVEAL for rows in records]
    return first.called, [r is not None for r in first.results], ended, ruled


@pytest.mark.parametrize(("mode", "at"), POINTS)
def test_a_time_call_killed_anywhere_leaves_its_round_whole(
    before_time: tuple[Path, str], tmp_path: Path, mode: str, at: int
) -> None:
    base, tid = before_time
    folder = tmp_path / "copy"
    shutil.copytree(base, folder)
    path = folder / "cup.duckdb"
    server = ProcessServer(path, KEY, prelude=kill_at(mode, at))
    try:
        tour_of(server).CallTime(pb.CallTimeRequest(tournament_id=tid), metadata=bearer(KEY))
    except grpc.RpcError as error:
        assert error.code() == grpc.StatusCode.UNAVAILABLE, error  # killed while it ran
    if server.proc.poll() is None:  # the point is past the commits this server makes
        server.kill()
    server.proc.wait(timeout=10)

    called, results, ended, ruled = round_on_file(path, tid)
    if called:
        assert results == [True, True, True] and ended == [True, True, True], (results, ended)
        assert ruled == [f"{tid}-r1-time", f"{tid}-r1-time"]
    else:
        assert results == [True, False, False] and ended == [True, False, False]
        assert ruled == []
    assert mode != "after" or called, "the call was committed before the kill"

    again = ProcessServer(path, KEY)
    try:
        tour = tour_of(again)
        state = tour.GetTournament(pb.GetTournamentRequest(tournament_id=tid)).tournament
        assert state.rounds[0].called == called
        answer = tour.CallTime(pb.CallTimeRequest(tournament_id=tid), metadata=bearer(KEY))
        first = answer.tournament.rounds[0]
        assert first.called and first.complete
        assert all(t.finished and (t.closed or t.table == 1) for t in first.tables)
        if called:  # sent again: answered as it stands, nothing written
            assert answer.tournament.last_seq == state.last_seq
    finally:
        again.kill()
    assert round_on_file(path, tid)[:3] == (True, [True] * 3, [True] * 3)


def test_a_restart_finishes_a_round_an_older_server_left_part_closed(tmp_path: Path) -> None:
    """The file an older server left at a kill: round 1's ``call_time`` row committed
    alone, no table closed.  The server started on it closes every table and takes the
    results by itself, before anyone reads or writes the tournament."""
    path = tmp_path / "cup.duckdb"
    server = ThreadedServer(path)
    try:
        tour = pb_grpc.TournamentServiceStub(grpc.insecure_channel(server.address))
        org = bearer(server.key)
        made = tour.CreateTournament(
            pb.CreateTournamentRequest(format=FORMAT, players=PLAYERS), metadata=org
        )
        tid = made.tournament.tournament_id
        tour.PairRound(pb.PairRoundRequest(tournament_id=tid), metadata=org)
        tour.PublishRound(pb.PublishRoundRequest(tournament_id=tid), metadata=org)
        tour.StartClock(pb.StartClockRequest(tournament_id=tid), metadata=org)
        desks = server.running.app.tournaments
        call = rpb.TournamentCommand(call_time=rpb.CallTime(round=1), by="organiser")

        async def call_alone(live: Live) -> Tournament:
            return await desks._append(live, [(call, ARBITER)], utc_now())

        assert server.call(desks._write(tid, call_alone)).rounds[0].called
    finally:
        server.stop()
    assert round_on_file(path, tid) == (True, [False] * 3, [False] * 3, [])

    server = ThreadedServer(path)
    try:
        db = server.running.db
        for _ in range(100):  # nobody asks: the start's own catch-up
            state = fold_rows(server.call(db.call(db.store.rows, tid)))[-1]
            if state.rounds[0].complete:
                break
            time.sleep(0.05)
        assert state.rounds[0].complete and all(r and r.closed for r in state.rounds[0].results)
    finally:
        server.stop()
    called, results, ended, ruled = round_on_file(path, tid)
    assert called and results == ended == [True] * 3 and ruled == [f"{tid}-r1-time"] * 3
