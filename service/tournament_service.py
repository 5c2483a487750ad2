"""feastlog.v1.TournamentService: standings and statistics over finished games.

Both are SQL over the outcomes projection, which the writer keeps current as games end
(``service/projection.py``): nothing is folded to answer them, so they are open to
organisers, players and spectators alike, whatever the size of the tournament.
"""

from __future__ import annotations

import grpc

from feastlog.v1 import tournament_service_pb2 as pb
from feastlog.v1 import tournament_service_pb2_grpc as pb_grpc
from replay.standings import Standing, exact
from service.app import Games
from service.errors import unary
from service.projection import KindStats


def standing_message(line: Standing) -> pb.PlayerStanding:
    """A standings line as its message."""
    return pb.PlayerStanding(
        name=line.name,
        games=line.games,
        wins=float(line.wins),
        wins_exact=exact(line.wins),
        points=line.points,
    )


def stats_message(found: KindStats) -> pb.KindStats:
    """A game kind's figures as its message."""
    message = pb.KindStats(
        game_kind=found.game_kind,
        games=found.games,
        win_rate_by_seat=list(found.win_rate_by_seat),
        figure=found.figure,
    )
    if found.value is not None:
        message.value = found.value
    return message


class TournamentService(pb_grpc.TournamentServiceServicer):
    """Standings and stats for everyone (finished games are public)."""

    def __init__(self, games: Games) -> None:
        self.games = games

    @unary
    async def GetStandings(
        self, request: pb.GetStandingsRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetStandingsResponse:
        lines, finished, running = await self.games.standings(request.tournament_id)
        return pb.GetStandingsResponse(
            standings=[standing_message(line) for line in lines],
            games_finished=finished,
            games_running=running,
        )

    @unary
    async def GetStats(
        self, request: pb.GetStatsRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetStatsResponse:
        found = await self.games.stats(request.tournament_id)
        return pb.GetStatsResponse(kinds=[stats_message(k) for k in found])


def add_to(server: grpc.aio.Server, games: Games) -> None:
    """Register the service on a server."""
    pb_grpc.add_TournamentServiceServicer_to_server(TournamentService(games), server)
