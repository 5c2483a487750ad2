"""feastlog.v1.TournamentService: standings over a tournament's finished games.

A finished game's result never changes, so each is folded once, off the event loop
(``Games.refolds``), and kept.  Standings of a tournament of more than
``OPEN_STANDINGS_GAMES`` games may fold hundreds of records, so they are the
organiser's (or arbiter's) to ask for; smaller ones are open to players and spectators.
"""

from __future__ import annotations

from collections import OrderedDict

import grpc

from feastlog.v1 import tournament_service_pb2 as pb
from feastlog.v1 import tournament_service_pb2_grpc as pb_grpc
from replay.history import refold
from replay.standings import Result, Standing, exact, result_of, standings
from service.app import Games
from service.auth import Caller
from service.errors import BadRequest, GameNotFound, unary
from service.store import StoredGame

OPEN_STANDINGS_GAMES = 64
RESULTS_KEPT = 100_000  # a result is a few hundred bytes


def result_from_stored(stored: StoredGame) -> Result:
    """A finished game's result, folded from its record."""
    folded = refold(stored.rows, stored.server_seed, stored.pack_body)
    return result_of(folded.genesis, folded.tables[-1])


class Results:
    """Finished games' results, folded off the event loop and kept."""

    def __init__(self, games: Games) -> None:
        self.games = games
        self._kept: OrderedDict[str, Result] = OrderedDict()

    async def of(self, game_id: str) -> Result:
        """The result of a finished game."""
        found = self._kept.get(game_id)
        if found is None:
            stored = await self.games.db.call(self.games.db.store.load, game_id)
            if stored is None:
                raise GameNotFound(f"there is no game {game_id!r}", game_id=game_id)
            found = self._kept[game_id] = await self.games.refolds.run(result_from_stored, stored)
            while len(self._kept) > RESULTS_KEPT:
                self._kept.popitem(last=False)
        return found


async def tournament_standings(
    results: Results, caller: Caller, tournament_id: str
) -> tuple[list[Standing], int, int]:
    """A tournament's standings from its finished games: (lines, finished, running)."""
    if not tournament_id:
        raise BadRequest("tournament_id is required", field="tournament_id")
    listed = await results.games.summaries(tournament_id=tournament_id)
    if not listed:
        raise GameNotFound(f"there is no game in tournament {tournament_id!r}")
    if len(listed) > OPEN_STANDINGS_GAMES:
        results.games.credentials.organiser(caller)
    finished = [await results.of(s.game_id) for s in listed if s.over]
    return standings(finished), len(finished), len(listed) - len(finished)


def standing_message(line: Standing) -> pb.PlayerStanding:
    """A standings line as its message."""
    return pb.PlayerStanding(
        name=line.name,
        games=line.games,
        wins=float(line.wins),
        wins_exact=exact(line.wins),
        points=line.points,
    )


class TournamentService(pb_grpc.TournamentServiceServicer):
    """Standings for organisers, players and spectators alike (finished games are public)."""

    def __init__(self, games: Games) -> None:
        self.games = games
        self.results = Results(games)

    @unary
    async def GetStandings(
        self, request: pb.GetStandingsRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetStandingsResponse:
        caller = self.games.credentials.caller(tuple(context.invocation_metadata() or ()))
        lines, finished, running = await tournament_standings(
            self.results, caller, request.tournament_id
        )
        return pb.GetStandingsResponse(
            standings=[standing_message(line) for line in lines],
            games_finished=finished,
            games_running=running,
        )


def add_to(server: grpc.aio.Server, games: Games) -> None:
    """Register the service on a server."""
    pb_grpc.add_TournamentServiceServicer_to_server(TournamentService(games), server)
