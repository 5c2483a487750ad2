"""The round clock's minutes are bounded wherever they are given, through a real server:
StartClock 1 to 1,440 (0: the format's round_minutes, itself 1 to 1,440), ExtendClock 1
to 240; out of range is INVALID_ARGUMENT naming the field, before anything is written."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from feastlog.replay.tournament.spec import EXTENSION_MINUTES, ROUND_MINUTES
from feastlog.v1 import tournament_service_pb2 as pb
from feastlog.v1 import tournament_service_pb2_grpc as pb_grpc
from tests.serverutil import ThreadedServer, bearer, error_info

PLAYERS = ["Ann", "Bo", "Cy", "Di"]


def refused(call: object, request: object, metadata: object) -> tuple[str, dict[str, str]]:
    """The status code's name and ErrorInfo metadata of a call that must be refused."""
    with pytest.raises(grpc.RpcError) as caught:
        call(request, metadata=metadata)  # type: ignore[operator]
    info = error_info(caught.value)
    return caught.value.code().name, dict(info.metadata)


def test_clock_minutes_are_bounded_alike(tmp_path: Path) -> None:
    server = ThreadedServer(tmp_path / "clock.duckdb")
    try:
        tour = pb_grpc.TournamentServiceStub(grpc.insecure_channel(server.address))
        org = bearer(server.key)
        too_long = pb.CreateTournamentRequest(
            format={"table_sizes": "4", "rounds": "1", "round_minutes": "1441"}, players=PLAYERS
        )
        code, meta = refused(tour.CreateTournament, too_long, org)
        assert (code, meta["field"], meta["rule_id"]) == (
            "INVALID_ARGUMENT",
            "round_minutes",
            "TOUR-FORMAT",
        )
        made = tour.CreateTournament(
            pb.CreateTournamentRequest(format={"table_sizes": "4", "rounds": "1"}, players=PLAYERS),
            metadata=org,
        ).tournament
        tid = made.tournament_id
        tour.PairRound(pb.PairRoundRequest(tournament_id=tid), metadata=org)
        tour.PublishRound(pb.PublishRoundRequest(tournament_id=tid), metadata=org)
        high = ROUND_MINUTES[1]
        for minutes in (-1, high + 1, 2**31 - 1):
            start = pb.StartClockRequest(tournament_id=tid, minutes=minutes)
            code, meta = refused(tour.StartClock, start, org)
            assert (code, meta["field"]) == ("INVALID_ARGUMENT", "minutes"), minutes
        last = tour.GetTournament(pb.GetTournamentRequest(tournament_id=tid)).tournament
        assert last.rounds[-1].minutes == 0  # nothing was written
        started = tour.StartClock(
            pb.StartClockRequest(tournament_id=tid, minutes=high), metadata=org
        )
        assert started.tournament.rounds[-1].minutes == high
        low, high = EXTENSION_MINUTES
        for minutes in (low - 1, -5, high + 1, 2**31 - 1):
            extend = pb.ExtendClockRequest(tournament_id=tid, minutes=minutes, reason="a call")
            code, meta = refused(tour.ExtendClock, extend, org)
            assert (code, meta["field"]) == ("INVALID_ARGUMENT", "minutes"), minutes
        extend = pb.ExtendClockRequest(tournament_id=tid, table=-1, minutes=5, reason="a call")
        assert refused(tour.ExtendClock, extend, org)[1]["field"] == "table"
        extend = pb.ExtendClockRequest(tournament_id=tid, minutes=high, reason="a call")
        extended = tour.ExtendClock(extend, metadata=org).tournament
        assert extended.rounds[-1].tables[0].minutes == ROUND_MINUTES[1] + high
    finally:
        server.stop()


def test_a_clock_started_with_0_minutes_runs_the_formats_round_minutes(tmp_path: Path) -> None:
    server = ThreadedServer(tmp_path / "clock.duckdb")
    try:
        tour = pb_grpc.TournamentServiceStub(grpc.insecure_channel(server.address))
        org = bearer(server.key)
        cup = {"table_sizes": "4", "rounds": "1", "round_minutes": "35"}
        made = tour.CreateTournament(
            pb.CreateTournamentRequest(format=cup, players=PLAYERS), metadata=org
        ).tournament
        tid = made.tournament_id
        tour.PairRound(pb.PairRoundRequest(tournament_id=tid), metadata=org)
        tour.PublishRound(pb.PublishRoundRequest(tournament_id=tid), metadata=org)
        started = tour.StartClock(pb.StartClockRequest(tournament_id=tid), metadata=org)
        assert started.tournament.rounds[-1].minutes == 35
    finally:
        server.stop()
