"""``serve --http``'s tournament page: the current round's tables with players by seat and
links to their games, the clock, and the standings; an unknown tournament is a 404."""

from __future__ import annotations

from pathlib import Path

import grpc

from feastlog.v1 import tournament_service_pb2 as pb
from feastlog.v1 import tournament_service_pb2_grpc as pb_grpc
from tests.serverutil import bearer
from tests.webutil import WebServer, request


def test_the_tournament_page_shows_the_round_the_clock_and_the_standings(tmp_path: Path) -> None:
    server = WebServer(tmp_path / "board.duckdb")
    try:
        tour = pb_grpc.TournamentServiceStub(grpc.insecure_channel(server.address))
        org = bearer(server.key)
        players = ["Ann", "Bo", "Cy", "Di", "Ed", "Flo", "Gus"]
        made = tour.CreateTournament(
            pb.CreateTournamentRequest(format={"rounds": "2"}, players=players), metadata=org
        ).tournament
        tid = made.tournament_id
        before = request(server, "GET", f"/tournaments/{tid}")
        tour.PairRound(pb.PairRoundRequest(tournament_id=tid), metadata=org)
        published = tour.PublishRound(pb.PublishRoundRequest(tournament_id=tid), metadata=org)
        tour.StartClock(pb.StartClockRequest(tournament_id=tid, minutes=40), metadata=org)
        page = request(server, "GET", f"/tournaments/{tid}")
        missing = request(server, "GET", "/tournaments/t_0000000000000000")
    finally:
        server.stop()
    assert before.status == 200 and "No round is paired yet" in before.body
    assert page.status == 200 and 'http-equiv="refresh"' in page.body
    assert "Round 1 of 2 (published; clock: 40 minutes from" in page.body
    for seat in published.seats:
        assert f'<a href="/games/{seat.game_id}">' in page.body
        assert seat.seat_token not in page.body  # a seat's token is the organiser's to hand out
    assert all(name in page.body for name in players)
    assert "<h2>Standings</h2>" in page.body
    assert missing.status == 404
