"""feastlog.v1.TournamentService: standings and statistics over finished games, and the
tournaments run on the record (``service/app/tournament.py``).

GetStandings and GetStats are SQL over the outcomes projection, which the writer keeps
current as games end: nothing is folded to answer them, so they are open to organisers,
players and spectators alike, whatever the size of the tournament.  A tournament's
stream is public too (GetTournament, WatchTournament, ExportTournament); everything that
changes it is the organiser's or a named arbiter's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc

from feastlog.replay.record.rows import COMMAND, Row
from feastlog.replay.tournament.export import decoded_row
from feastlog.replay.tournament.standings import exact
from feastlog.replay.tournament.state import Result, Round
from feastlog.service.app.tournament import Snapshot
from feastlog.service.grpc.servicers.base import Servicer
from feastlog.service.grpc.servicers.convert import standing_message, stats_message
from feastlog.service.grpc.status import streaming, unary
from feastlog.v1 import tournament_service_pb2 as pb
from feastlog.v1 import tournament_service_pb2_grpc as pb_grpc


class TournamentService(Servicer, pb_grpc.TournamentServiceServicer):
    """Standings and stats for everyone (finished games are public); tournaments."""

    @unary
    async def GetStandings(
        self, request: pb.GetStandingsRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetStandingsResponse:
        found = await self.app.replays.standings(self.caller(context), request.tournament_id)
        return pb.GetStandingsResponse(
            standings=[standing_message(line) for line in found.lines],
            games_finished=found.finished,
            games_running=found.running,
        )

    @unary
    async def GetStats(
        self, request: pb.GetStatsRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetStatsResponse:
        found = await self.app.replays.stats(self.caller(context), request.tournament_id)
        return pb.GetStatsResponse(kinds=[stats_message(k) for k in found])

    @unary
    async def CreateTournament(
        self, request: pb.CreateTournamentRequest, context: grpc.aio.ServicerContext
    ) -> pb.CreateTournamentResponse:
        made = await self.app.tournaments.create_tournament(
            self.caller(context), dict(request.format), list(request.players)
        )
        return pb.CreateTournamentResponse(tournament=state_message(made))

    @unary
    async def PairRound(
        self, request: pb.PairRoundRequest, context: grpc.aio.ServicerContext
    ) -> pb.PairRoundResponse:
        tables = [list(t.players) for t in request.tables]
        now = await self.app.tournaments.pair(
            self.caller(context), request.tournament_id, tables, list(request.byes)
        )
        return pb.PairRoundResponse(tournament=state_message(now))

    @unary
    async def PublishRound(
        self, request: pb.PublishRoundRequest, context: grpc.aio.ServicerContext
    ) -> pb.PublishRoundResponse:
        done = await self.app.tournaments.publish(self.caller(context), request.tournament_id)
        return pb.PublishRoundResponse(
            tournament=state_message(done.tournament),
            seats=[
                pb.PublishedSeat(
                    table=s.table, seat=s.seat, name=s.name, game_id=s.game_id, seat_token=s.token
                )
                for s in done.seats
            ],
            replayed=done.replayed,
        )

    @streaming
    async def WatchTournament(
        self, request: pb.WatchTournamentRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.WatchTournamentResponse]:
        caller = self.caller(context)
        rows = await self.app.tournaments.watch_tournament(
            caller, request.tournament_id, request.from_seq
        )
        async for row, now in rows:
            yield row_message(row, now)

    @unary
    async def ExportTournament(
        self, request: pb.ExportTournamentRequest, context: grpc.aio.ServicerContext
    ) -> pb.ExportTournamentResponse:
        found = await self.app.tournaments.export_tournament(
            self.caller(context), request.tournament_id
        )
        return pb.ExportTournamentResponse(document=found.document, file_name=found.file_name)


# The calls that change a tournament, and GetTournament: each gives its use case
# (``service/app/tournament.py``) the caller and these fields of its request, in this
# order, and answers with the tournament after it (the reply's ``tournament``).  A line
# an RPC: the proto says what each field is, the use case what it checks.
ANSWERED_WITH_THE_TOURNAMENT: dict[str, tuple[str, ...]] = {
    "RegisterPlayer": ("register", "tournament_id", "name"),
    "DropPlayer": ("drop_player", "tournament_id", "name", "reason"),
    "SwapPlayers": ("swap", "tournament_id", "first", "second", "reason"),
    "FixTable": ("fix", "tournament_id", "name", "table", "seat", "reason"),
    "StartClock": ("start_clock", "tournament_id", "minutes"),
    "ExtendClock": ("extend_clock", "tournament_id", "table", "minutes", "reason"),
    "CallTime": ("call_time", "tournament_id"),
    "AddPenalty": ("add_penalty", "tournament_id", "name", "penalty", "round", "reason"),
    "EndTournament": ("end", "tournament_id"),
    "GetTournament": ("get_tournament", "tournament_id", "at_seq"),
}


def _answered_with_the_tournament(name: str, use_case: str, fields: tuple[str, ...]) -> Any:
    """The servicer method of RPC ``name`` (a line of ``ANSWERED_WITH_THE_TOURNAMENT``)."""
    reply = getattr(pb, f"{name}Response")

    async def rpc(self: TournamentService, request: Any, context: grpc.aio.ServicerContext) -> Any:
        call = getattr(self.app.tournaments, use_case)
        now = await call(self.caller(context), *(getattr(request, f) for f in fields))
        return reply(tournament=state_message(now))

    rpc.__name__ = rpc.__qualname__ = name
    return unary(rpc)


for _name, (_use_case, *_fields) in ANSWERED_WITH_THE_TOURNAMENT.items():
    setattr(
        TournamentService, _name, _answered_with_the_tournament(_name, _use_case, tuple(_fields))
    )


def row_message(row: Row, snap: Snapshot) -> pb.WatchTournamentResponse:
    """One row of the stream, with the tournament after it."""
    action, body = decoded_row(row)
    return pb.WatchTournamentResponse(
        seq=row.seq,
        kind=row.kind,
        actor=row.actor,
        recorded_at=row.recorded_at,
        prev_hash=row.prev_hash,
        hash=row.hash,
        state_hash=row.state_hash,
        commitment=row.commitment,
        action=action if row.kind == COMMAND else "",
        decoded=body,
        tournament=state_message(snap),
    )


def state_message(snap: Snapshot) -> pb.TournamentState:
    """A tournament at a seq as the API gives it."""
    state = snap.state
    lines = snap.standings
    return pb.TournamentState(
        tournament_id=state.tournament_id,
        seq=snap.seq,
        last_seq=snap.last_seq,
        format=state.format.options(),
        players=[
            pb.TournamentPlayer(
                name=p.name,
                entered=p.entered,
                last_round=p.last_round or 0,
                dropped=not p.active(),
                disqualified=p.disqualified,
            )
            for p in state.players
        ],
        rounds=[
            pb.TournamentRound(
                round=r.number,
                tables=[
                    pb.TournamentTable(
                        table=t,
                        players=list(players),
                        game_id=r.game_ids[t - 1] if r.published else "",
                        minutes=r.minutes_for(t) if r.minutes else 0,
                        finished=bool(r.results and r.results[t - 1] is not None),
                        points=list(res.points) if (res := _result(r, t)) else [],
                        places=list(res.places) if res else [],
                        closed=res.closed if res else False,
                    )
                    for t, players in enumerate(r.tables, start=1)
                ],
                byes=list(r.byes),
                method=r.method,
                solver=r.solver,
                objective=r.objective,
                status=r.status,
                published=r.published,
                complete=r.complete,
                minutes=r.minutes,
                called=r.called,
                changes=r.changes,
            )
            for r in state.rounds
        ],
        penalties=[
            pb.TournamentPenalty(
                name=p.name, penalty=p.penalty, round=p.round, by=p.by, reason=p.reason
            )
            for p in state.penalties
        ],
        standings=[
            pb.TournamentStanding(
                place=place,
                name=line.name,
                match_points=exact(line.match_points),
                match_points_value=float(line.match_points),
                game_points=line.game_points,
                opponents_average=exact(line.opponents_average),
                wins=exact(line.wins),
                played=line.played,
                byes=line.byes,
                dropped=line.dropped,
                disqualified=line.disqualified,
                warnings=line.warnings,
            )
            for place, line in enumerate(lines, start=1)
        ],
        ended=state.ended,
        seed_commitment=snap.seed_commitment,
    )


def _result(round_: Round, table: int) -> Result | None:
    return round_.results[table - 1] if round_.results else None
