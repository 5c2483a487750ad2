"""feastlog.v1.TournamentService: standings and statistics over finished games.

Both are SQL over the outcomes projection, which the writer keeps current as games end:
nothing is folded to answer them, so they are open to organisers, players and
spectators alike, whatever the size of the tournament.
"""

from __future__ import annotations

import grpc

from feastlog.service.app.application import Application
from feastlog.service.grpc.servicers.base import Servicer
from feastlog.service.grpc.servicers.convert import standing_message, stats_message
from feastlog.service.grpc.status import unary
from feastlog.v1 import tournament_service_pb2 as pb
from feastlog.v1 import tournament_service_pb2_grpc as pb_grpc


class TournamentService(Servicer, pb_grpc.TournamentServiceServicer):
    """Standings and stats for everyone (finished games are public)."""

    @unary
    async def GetStandings(
        self, request: pb.GetStandingsRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetStandingsResponse:
        found = await self.app.standings(request.tournament_id)
        return pb.GetStandingsResponse(
            standings=[standing_message(line) for line in found.lines],
            games_finished=found.finished,
            games_running=found.running,
        )

    @unary
    async def GetStats(
        self, request: pb.GetStatsRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetStatsResponse:
        found = await self.app.stats(request.tournament_id)
        return pb.GetStatsResponse(kinds=[stats_message(k) for k in found])


def add_to(server: grpc.aio.Server, app: Application) -> None:
    """Register the TournamentService on a server."""
    pb_grpc.add_TournamentServiceServicer_to_server(TournamentService(app), server)
