"""A tournament write's fate is decided by its commit, never by its caller's deadline.

Through a real server on a DuckDB file, a whole two-round tournament is run with every
write first sent with a deadline of 1 to 20 ms (each commit held 4 ms, so that some pass
while the write waits for its commit on any machine): create, register, drop, pair, swap, fix,
publish, start the clock, extend it, penalties, results taken when a read catches up,
call time and end.  After each, once the writes taken have run to their end, memory and
the store agree (GetTournament's last_seq and the last row's hash are the stored ones),
and the next write succeeds.  A PublishRound whose answer was lost is sent again, by the
organiser, by a named arbiter and after a restart on the same file: each answer is
``replayed`` with the seats and tokens of the first, and the seats play with them.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest

from feastlog.replay.tournament.export import verify_tournament
from feastlog.service.app.auth import KEY_ENV
from feastlog.v1 import admin_service_pb2 as adpb
from feastlog.v1 import admin_service_pb2_grpc as adpb_grpc
from feastlog.v1 import game_service_pb2 as gpb
from feastlog.v1 import tournament_service_pb2 as pb
from feastlog.v1 import tournament_service_pb2_grpc as pb_grpc
from tests.serverutil import ThreadedServer, bearer, error_info, play_to_end, stub

DEADLINES = (0.001, 0.002, 0.003, 0.005, 0.008, 0.013, 0.02)  # seconds
# Each commit of the server under test is held this long before it is written, so that the
# shorter deadlines pass while a write waits for its commit, and the longer ones do not,
# however fast the machine (on a quick one, every write answered within 1 ms)
COMMIT_SECONDS = 0.004
GAVE_UP = (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED)
PLAYERS = [f"P{i}" for i in range(1, 9)]
FORMAT = {"game_kind": "bon-appetit", "table_sizes": "4", "rounds": "2", "at_time": "close"}


def held_commits(server: ThreadedServer) -> ThreadedServer:
    """``server`` with each of its commits held ``COMMIT_SECONDS`` before it is written."""
    db = server.running.db
    write = db._commit

    async def held(batch: Any) -> Any:
        await asyncio.sleep(COMMIT_SECONDS)
        return await write(batch)

    db._commit = held  # type: ignore[method-assign]
    return server


@dataclass
class Cup:
    """A server, the organiser's stubs, and the tournament under test."""

    server: ThreadedServer
    tid: str = ""
    outcomes: Counter[str] = field(default_factory=Counter)  # "RPC: OK" or the code

    @property
    def tour(self) -> pb_grpc.TournamentServiceStub:
        return pb_grpc.TournamentServiceStub(grpc.insecure_channel(self.server.address))

    @property
    def org(self) -> tuple[tuple[str, str], ...]:
        return bearer(self.server.key)

    def state(self) -> pb.TournamentState:
        """The tournament as the server holds it in memory (GetTournament, no deadline)."""
        request = pb.GetTournamentRequest(tournament_id=self.tid)
        return self.tour.GetTournament(request).tournament

    def stored_rows(self, tid: str) -> list[Any]:
        """The tournament's rows in the store."""
        db = self.server.running.db
        return list(self.server.call(db.call(db.store.rows, tid)))

    def settled(self, tid: str = "") -> pb.TournamentState:
        """Once every write taken has run to its end, memory says what the store holds:
        the same last seq, and the same hash at it."""
        tid = tid or self.tid
        self.server.call(self.server.running.app.finishing.drain())
        for _ in range(40):  # a commit given up on may still be on its way to the file
            rows = self.stored_rows(tid)
            state = self.tour.GetTournament(pb.GetTournamentRequest(tournament_id=tid)).tournament
            if state.last_seq == len(rows):
                break
            time.sleep(0.05)
        assert state.last_seq == len(rows), (
            f"memory says seq {state.last_seq}, the store holds {len(rows)} rows"
        )
        watch = self.tour.WatchTournament(
            pb.WatchTournamentRequest(tournament_id=tid, from_seq=state.last_seq)
        )
        last = next(iter(watch))
        watch.cancel()
        assert (last.seq, last.hash) == (len(rows), rows[-1].hash)
        return state

    def short(self, rpc: str, request: Any, deadline: float, metadata: Any = None) -> Any:
        """Send a write with a short deadline: its answer, or None when the caller gave up
        (anything else, a refusal or a store conflict, fails the test)."""
        call = getattr(self.tour, rpc)
        try:
            answer = call(request, metadata=metadata or self.org, timeout=deadline)
        except grpc.RpcError as error:
            assert error.code() in GAVE_UP, f"{rpc} at {deadline * 1000:g} ms: {error}"
            self.outcomes[f"{rpc}: {error.code().name}"] += 1
            return None
        self.outcomes[f"{rpc}: OK"] += 1
        return answer


def seats_of(answer: pb.PublishRoundResponse) -> list[tuple[int, int, str, str, str]]:
    return [(s.table, s.seat, s.name, s.game_id, s.seat_token) for s in answer.seats]


def tokens_by_game(answer: pb.PublishRoundResponse) -> dict[str, list[str]]:
    tokens: dict[str, list[str]] = {}
    for seat in sorted(answer.seats, key=lambda s: (s.table, s.seat)):
        tokens.setdefault(seat.game_id, []).append(seat.seat_token)
    return tokens


def each_deadline(cup: Cup, send: Callable[[float], Any]) -> None:
    """``send`` once per short deadline, memory and store agreeing after each."""
    for deadline in DEADLINES:
        send(deadline)
        cup.settled()


@pytest.fixture
def cup(tmp_path: Path) -> Iterator[Cup]:
    made = Cup(held_commits(ThreadedServer(tmp_path / "cup.duckdb")))
    try:
        yield made
    finally:
        made.server.stop()


def test_short_deadlines_on_every_tournament_write_leave_it_usable(
    cup: Cup, tmp_path: Path
) -> None:
    tour = cup.tour
    # created with a short deadline: whatever its caller heard, memory follows the store
    for deadline in DEADLINES:
        create = pb.CreateTournamentRequest(format=FORMAT, players=PLAYERS)
        cup.short("CreateTournament", create, deadline)
    db = cup.server.running.db
    for tid in cup.server.call(db.call(db.store.game_ids)):
        if tid.startswith("t_"):
            cup.settled(tid)
    made = tour.CreateTournament(
        pb.CreateTournamentRequest(format=FORMAT, players=PLAYERS), metadata=cup.org
    )
    cup.tid = made.tournament.tournament_id
    judge = adpb_grpc.AdminServiceStub(grpc.insecure_channel(cup.server.address)).AddArbiter(
        adpb.AddArbiterRequest(name="judge-ann"), metadata=cup.org
    )
    for i, deadline in enumerate(DEADLINES):
        late = pb.RegisterPlayerRequest(tournament_id=cup.tid, name=f"Late {i}")
        cup.short("RegisterPlayer", late, deadline)
        cup.settled()
    for i, player in enumerate(p for p in cup.state().players if p.name.startswith("Late")):
        drop = pb.DropPlayerRequest(tournament_id=cup.tid, name=player.name, reason="went home")
        cup.short("DropPlayer", drop, DEADLINES[i % len(DEADLINES)])
        cup.settled()
    for player in cup.state().players:
        if player.name.startswith("Late") and not player.dropped:
            drop = pb.DropPlayerRequest(tournament_id=cup.tid, name=player.name, reason="left")
            tour.DropPlayer(drop, metadata=cup.org)  # the next write succeeds
    each_deadline(
        cup, lambda d: cup.short("PairRound", pb.PairRoundRequest(tournament_id=cup.tid), d)
    )
    if not cup.state().rounds:
        tour.PairRound(pb.PairRoundRequest(tournament_id=cup.tid), metadata=cup.org)
    tables = cup.state().rounds[-1].tables
    first, second = tables[0].players[0], tables[0].players[1]
    swap = pb.SwapPlayersRequest(tournament_id=cup.tid, first=first, second=second, reason="asked")
    each_deadline(cup, lambda d: cup.short("SwapPlayers", swap, d))
    mover = tables[1].players[0]
    fix = pb.FixTableRequest(tournament_id=cup.tid, name=mover, table=1, seat=2, reason="a seat")
    each_deadline(cup, lambda d: cup.short("FixTable", fix, d))

    # round 1: published with 2 ms, its answer lost; sent again by the organiser and a judge
    publish = pb.PublishRoundRequest(tournament_id=cup.tid)
    cup.short("PublishRound", publish, 0.002)
    taken = cup.settled().rounds[-1].published
    first_answer = tour.PublishRound(publish, metadata=cup.org)
    assert first_answer.replayed == taken and first_answer.tournament.rounds[-1].published
    again = tour.PublishRound(publish, metadata=bearer(judge.key))
    assert again.replayed and seats_of(again) == seats_of(first_answer)
    assert len(first_answer.seats) == 8
    start = pb.StartClockRequest(tournament_id=cup.tid)
    cup.short("StartClock", start, 0.002)
    if not cup.settled().rounds[-1].minutes:
        tour.StartClock(start, metadata=cup.org)
    extend = pb.ExtendClockRequest(tournament_id=cup.tid, minutes=1, reason="a judge call")
    each_deadline(cup, lambda d: cup.short("ExtendClock", extend, d))
    warn = pb.AddPenaltyRequest(
        tournament_id=cup.tid, name="P1", penalty="warning", reason="slow play"
    )
    each_deadline(cup, lambda d: cup.short("AddPenalty", warn, d, bearer(judge.key)))
    games = stub(cup.server.address)
    for t, (game_id, tokens) in enumerate(tokens_by_game(again).items()):
        play_to_end(games, game_id, tokens, seed=t)  # the tokens given again work
        for deadline in DEADLINES:  # a read's catch-up takes the result: a write too
            cup.short("GetTournament", pb.GetTournamentRequest(tournament_id=cup.tid), deadline)
        cup.settled()
    for _ in range(100):
        if cup.settled().rounds[-1].complete:
            break
        time.sleep(0.05)
    assert cup.state().rounds[-1].complete

    # round 2: published with 20 ms, then the server restarts on the same file
    tour.PairRound(pb.PairRoundRequest(tournament_id=cup.tid), metadata=cup.org)
    cup.short("PublishRound", publish, 0.02)
    taken = cup.settled().rounds[-1].published
    before = tour.PublishRound(publish, metadata=cup.org)
    assert before.replayed == taken
    cup.server.stop()
    cup.server = held_commits(ThreadedServer(tmp_path / "cup.duckdb"))
    tour = cup.tour
    after = tour.PublishRound(publish, metadata=cup.org)
    assert after.replayed and seats_of(after) == seats_of(before)
    cup.settled()
    tour.StartClock(start, metadata=cup.org)
    (done, done_tokens), (running, running_tokens) = tokens_by_game(after).items()
    play_to_end(stub(cup.server.address), done, done_tokens, seed=9)  # after the restart too
    play_to_end(stub(cup.server.address), running, running_tokens, seed=8, stop_after=3)
    cup.short("CallTime", pb.CallTimeRequest(tournament_id=cup.tid), 0.005)
    if not cup.settled().rounds[-1].called:
        tour.CallTime(pb.CallTimeRequest(tournament_id=cup.tid), metadata=cup.org)
    for _ in range(100):
        if cup.settled().rounds[-1].complete:
            break
        time.sleep(0.05)
    assert cup.state().rounds[-1].complete and cup.state().rounds[-1].tables[1].closed
    end = pb.EndTournamentRequest(tournament_id=cup.tid)
    cup.short("EndTournament", end, 0.003)
    if not cup.settled().ended:
        tour.EndTournament(end, metadata=cup.org)
    final = cup.settled()
    assert final.ended and len(final.rounds) == 2
    document = tour.ExportTournament(pb.ExportTournamentRequest(tournament_id=cup.tid)).document
    report = verify_tournament(document)
    assert report.ok, report.faults
    assert report.games_verified == 4 and json.loads(document)["server_seed"]
    gave_up = sum(n for what, n in cup.outcomes.items() if not what.endswith(": OK"))
    print(f"\nshort-deadline tournament calls: {dict(sorted(cup.outcomes.items()))}")
    assert gave_up >= 10, "the deadlines passed too rarely to test anything"


def test_tokens_made_under_another_organiser_key_are_never_given_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """TOUR-TOKENS: after the organiser key changed, a retry of a published round's
    PublishRound cannot make its tokens again; it is refused, never answered with tokens
    that would not work."""
    monkeypatch.setenv(KEY_ENV, "org_the-first-organiser-key-0123456789abcdef")
    server = ThreadedServer(tmp_path / "cup.duckdb")
    try:
        cup = Cup(server)
        made = cup.tour.CreateTournament(
            pb.CreateTournamentRequest(format=FORMAT, players=PLAYERS), metadata=cup.org
        )
        cup.tid = made.tournament.tournament_id
        cup.tour.PairRound(pb.PairRoundRequest(tournament_id=cup.tid), metadata=cup.org)
        publish = pb.PublishRoundRequest(tournament_id=cup.tid)
        first = cup.tour.PublishRound(publish, metadata=cup.org)
    finally:
        server.stop()
    monkeypatch.setenv(KEY_ENV, "org_a-second-organiser-key-0123456789abcdef")
    cup.server = ThreadedServer(tmp_path / "cup.duckdb")
    try:
        with pytest.raises(grpc.RpcError) as refused:
            cup.tour.PublishRound(publish, metadata=cup.org)
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert error_info(refused.value).metadata["rule_id"] == "TOUR-TOKENS"
        assert "organiser key" in (refused.value.details() or "")
        seat = first.seats[0]  # the tokens handed out still work
        view = stub(cup.server.address).GetView(
            gpb.GetViewRequest(game_id=seat.game_id), metadata=bearer(seat.seat_token)
        )
        assert view.viewer == f"seat:{seat.seat}"
    finally:
        cup.server.stop()


def test_a_lost_publish_answer_is_given_again_after_a_restart(tmp_path: Path) -> None:
    """The answer of a PublishRound is lost (its caller gave up), the server restarts on the
    same file: PublishRound sent again answers ``replayed`` with the round's seats, and
    again after another restart with the same tokens, and a seat plays with its token."""
    path = tmp_path / "cup.duckdb"
    cup = Cup(ThreadedServer(path))
    try:
        made = cup.tour.CreateTournament(
            pb.CreateTournamentRequest(format=FORMAT, players=PLAYERS), metadata=cup.org
        )
        cup.tid = made.tournament.tournament_id
        cup.tour.PairRound(pb.PairRoundRequest(tournament_id=cup.tid), metadata=cup.org)
        publish = pb.PublishRoundRequest(tournament_id=cup.tid)
        lost = next((d for d in DEADLINES if cup.short("PublishRound", publish, d) is None), None)
        assert lost is not None, "every short PublishRound was answered: none was lost"
        cup.server.stop()
        cup.server = ThreadedServer(path)
        taken = cup.state().rounds[-1].published
        first = cup.tour.PublishRound(publish, metadata=cup.org)
        assert first.replayed == taken and len(first.seats) == len(PLAYERS)
        cup.server.stop()
        cup.server = ThreadedServer(path)
        again = cup.tour.PublishRound(publish, metadata=cup.org)
        assert again.replayed and seats_of(again) == seats_of(first)
        assert again.tournament.last_seq == len(cup.stored_rows(cup.tid))
        game_id, tokens = next(iter(tokens_by_game(again).items()))
        assert play_to_end(stub(cup.server.address), game_id, tokens, seed=1, stop_after=4) == 4
    finally:
        cup.server.stop()
