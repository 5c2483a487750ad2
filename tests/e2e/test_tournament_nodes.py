"""A tournament across two nodes on one PostgreSQL database, nginx in front (as
``scripts/cluster.py`` starts them): the organiser runs it on node A, its 12 players play
on node B, with seat clocks and a held call; node B is killed with ``kill -9`` in the
middle of the round, and time is called on node A.

Every table is closed, the round completes, the standings are the same on both nodes once
B is back, nothing acknowledged is lost, and every game and the tournament verify."""

from __future__ import annotations

import json
import os
import random
import signal
import time
import uuid
from pathlib import Path

from feastlog.client.channel import open_blocking_channel
from feastlog.replay.tournament.export import verify_tournament
from feastlog.service.store.postgres import PgStore
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc
from feastlog.v1 import table_service_pb2 as tbpb
from feastlog.v1 import table_service_pb2_grpc as tb_grpc
from feastlog.v1 import tournament_service_pb2 as tpb
from feastlog.v1 import tournament_service_pb2_grpc as t_grpc
from scripts.cluster import free_port, start_nginx, start_node, stop_process
from tests.e2e.test_cluster import needs_cluster_programs
from tests.pgutil import empty_database
from tests.serverutil import bearer, play_to_end, view_of

KEY = "org_tournament-nodes-organiser-key-long-enough"
PLAYERS = [f"Player {chr(65 + i)}" for i in range(12)]
FORMAT = {
    "game_kind": "bon-appetit",
    "table_sizes": "4",
    "rounds": "2",
    "at_time": "close",
    "game.clock": "bank:600+5",
    "game.clock_timeout": "arbiter",
}


def moves(
    games: pb_grpc.GameServiceStub, game_id: str, tokens: list[str], count: int
) -> list[tuple[str, int, str]]:
    """``count`` random legal moves of the seats to act; the acknowledged (seq, hash)."""
    rng = random.Random(game_id)
    acked: list[tuple[str, int, str]] = []
    while len(acked) < count:
        view = view_of(games.GetView(pb.GetViewRequest(game_id=game_id)))
        if view["over"]:
            break
        for seat in [int(s) for s in view["to_act"]]:
            legal = games.ListLegalCommands(
                pb.ListLegalCommandsRequest(game_id=game_id), metadata=bearer(tokens[seat])
            )
            if legal.commands:
                request = pb.SubmitCommandRequest(
                    game_id=game_id,
                    command_id=uuid.uuid4().hex,
                    command=rng.choice(list(legal.commands)),
                )
                reply = games.SubmitCommand(request, metadata=bearer(tokens[seat]))
                acked.append((game_id, reply.seq, reply.hash))
                break
    return acked


def standings(tour: t_grpc.TournamentServiceStub, tid: str) -> list[tuple[str, str, int]]:
    state = tour.GetTournament(tpb.GetTournamentRequest(tournament_id=tid)).tournament
    return [(s.name, s.match_points, s.game_points) for s in state.standings]


def test_a_round_played_on_a_killed_node_is_finished_by_time_called_on_the_other(
    tmp_path: Path,
) -> None:
    needs_cluster_programs()
    dsn = empty_database("tournament-nodes")
    pids, ports = [], []
    for index in (1, 2):
        pid, port = start_node(dsn, KEY, tmp_path, index)
        pids.append(pid)
        ports.append(port)
    front = free_port()
    nginx = start_nginx(tmp_path / "nginx", front, ports)
    a, b = (f"127.0.0.1:{p}" for p in ports)
    org = bearer(KEY)
    try:
        on_a = t_grpc.TournamentServiceStub(open_blocking_channel(a))
        tid = on_a.CreateTournament(
            tpb.CreateTournamentRequest(format=FORMAT, players=PLAYERS), metadata=org
        ).tournament.tournament_id
        on_a.PairRound(tpb.PairRoundRequest(tournament_id=tid), metadata=org)
        published = on_a.PublishRound(tpb.PublishRoundRequest(tournament_id=tid), metadata=org)
        on_a.StartClock(tpb.StartClockRequest(tournament_id=tid), metadata=org)
        tokens: dict[str, list[str]] = {}
        for seat in published.seats:
            tokens.setdefault(seat.game_id, []).append(seat.seat_token)
        first, held, third = list(tokens)

        # the players, on node B: one table plays to its end, one makes a held call,
        # one plays a few moves
        channel_b = open_blocking_channel(b)
        games_b = pb_grpc.GameServiceStub(channel_b)
        play_to_end(games_b, first, tokens[first], seed=1)
        acked = moves(games_b, held, tokens[held], 4) + moves(games_b, third, tokens[third], 3)
        call = tb_grpc.TableServiceStub(channel_b).CallArbiter(
            tbpb.CallArbiterRequest(
                game_id=held,
                command_id="call-1",
                about_seq=2,
                claim="the dish was turned too soon",
                hold=True,
            ),
            metadata=bearer(tokens[held][0]),
        )
        acked.append((held, call.call, call.hash))

        # node B dies in the middle of the round; time is called on node A
        os.kill(pids[1], signal.SIGKILL)
        os.waitpid(pids[1], 0)
        on_a.CallTime(tpb.CallTimeRequest(tournament_id=tid), metadata=org)
        state = on_a.GetTournament(tpb.GetTournamentRequest(tournament_id=tid)).tournament
        (round_,) = state.rounds
        assert round_.called and round_.complete
        assert all(t.finished for t in round_.tables)
        assert [t.closed for t in round_.tables] == [False, True, True]

        # node B comes back and says the same
        pids[1], _ = start_node(dsn, KEY, tmp_path, 2, ports[1])
        on_b = t_grpc.TournamentServiceStub(open_blocking_channel(b))
        deadline = time.monotonic() + 20
        while standings(on_b, tid) != standings(on_a, tid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert standings(on_b, tid) == standings(on_a, tid)
        state_b = on_b.GetTournament(tpb.GetTournamentRequest(tournament_id=tid)).tournament
        assert state_b.last_seq == state.last_seq and state_b.rounds[0].complete

        audit = apb_grpc.AuditServiceStub(open_blocking_channel(f"127.0.0.1:{front}"))
        for game_id in tokens:
            report = audit.VerifyGame(apb.VerifyGameRequest(game_id=game_id), metadata=org).report
            assert report.ok, (game_id, list(report.faults))
        document = on_b.ExportTournament(tpb.ExportTournamentRequest(tournament_id=tid)).document
        verified = verify_tournament(document)
        assert verified.ok, verified.faults
        assert verified.games_verified == 3
        assert len(json.loads(document)["games"]) == 3
    finally:
        stop_process(nginx, signal.SIGQUIT)
        for pid in pids:
            stop_process(pid)
    store = PgStore(dsn, read_only=True)
    try:  # every acknowledged row is in the log, as it was acknowledged
        for game_id, seq, hashed in acked:
            stored = store.load(game_id)
            assert stored is not None and stored.rows[seq - 1].hash == hashed
    finally:
        store.close()
