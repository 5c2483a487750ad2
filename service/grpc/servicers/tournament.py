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

import grpc

from feastlog.replay.record.rows import COMMAND, Row
from feastlog.replay.tournament.export import decoded_row
from feastlog.replay.tournament.standings import exact, standings
from feastlog.replay.tournament.state import Result, Round, Tournament
from feastlog.service.app.application import Application
from feastlog.service.app.errors import BadRequest
from feastlog.service.app.tournament import Snapshot, Tournaments
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

    def desk(self) -> Tournaments:
        """The server's tournaments (a file read offline runs none)."""
        if not isinstance(self.app, Application):
            raise BadRequest("tournaments are run by a server: start `feastlog serve`")
        return self.app.tournaments

    async def _now(self, tid: str) -> pb.TournamentState:
        return state_message(await self.desk().snapshot(tid))

    @unary
    async def CreateTournament(
        self, request: pb.CreateTournamentRequest, context: grpc.aio.ServicerContext
    ) -> pb.CreateTournamentResponse:
        made = await self.desk().create_tournament(
            self.caller(context), dict(request.format), list(request.players)
        )
        return pb.CreateTournamentResponse(tournament=await self._now(made.tournament_id))

    @unary
    async def RegisterPlayer(
        self, request: pb.RegisterPlayerRequest, context: grpc.aio.ServicerContext
    ) -> pb.RegisterPlayerResponse:
        tid = request.tournament_id
        await self.desk().register(self.caller(context), tid, request.name)
        return pb.RegisterPlayerResponse(tournament=await self._now(tid))

    @unary
    async def DropPlayer(
        self, request: pb.DropPlayerRequest, context: grpc.aio.ServicerContext
    ) -> pb.DropPlayerResponse:
        tid = request.tournament_id
        await self.desk().drop_player(self.caller(context), tid, request.name, request.reason)
        return pb.DropPlayerResponse(tournament=await self._now(tid))

    @unary
    async def PairRound(
        self, request: pb.PairRoundRequest, context: grpc.aio.ServicerContext
    ) -> pb.PairRoundResponse:
        tables = [list(t.players) for t in request.tables]
        tid = request.tournament_id
        await self.desk().pair(self.caller(context), tid, tables, list(request.byes))
        return pb.PairRoundResponse(tournament=await self._now(tid))

    @unary
    async def SwapPlayers(
        self, request: pb.SwapPlayersRequest, context: grpc.aio.ServicerContext
    ) -> pb.SwapPlayersResponse:
        tid = request.tournament_id
        await self.desk().swap(
            self.caller(context), tid, request.first, request.second, request.reason
        )
        return pb.SwapPlayersResponse(tournament=await self._now(tid))

    @unary
    async def FixTable(
        self, request: pb.FixTableRequest, context: grpc.aio.ServicerContext
    ) -> pb.FixTableResponse:
        tid = request.tournament_id
        await self.desk().fix(
            self.caller(context), tid, request.name, request.table, request.seat, request.reason
        )
        return pb.FixTableResponse(tournament=await self._now(tid))

    @unary
    async def PublishRound(
        self, request: pb.PublishRoundRequest, context: grpc.aio.ServicerContext
    ) -> pb.PublishRoundResponse:
        done = await self.desk().publish(self.caller(context), request.tournament_id)
        return pb.PublishRoundResponse(
            tournament=await self._now(request.tournament_id),
            seats=[
                pb.PublishedSeat(
                    table=s.table, seat=s.seat, name=s.name, game_id=s.game_id, seat_token=s.token
                )
                for s in done.seats
            ],
            replayed=done.replayed,
        )

    @unary
    async def StartClock(
        self, request: pb.StartClockRequest, context: grpc.aio.ServicerContext
    ) -> pb.StartClockResponse:
        tid = request.tournament_id
        await self.desk().start_clock(self.caller(context), tid, request.minutes)
        return pb.StartClockResponse(tournament=await self._now(tid))

    @unary
    async def ExtendClock(
        self, request: pb.ExtendClockRequest, context: grpc.aio.ServicerContext
    ) -> pb.ExtendClockResponse:
        tid = request.tournament_id
        await self.desk().extend_clock(
            self.caller(context), tid, request.table, request.minutes, request.reason
        )
        return pb.ExtendClockResponse(tournament=await self._now(tid))

    @unary
    async def CallTime(
        self, request: pb.CallTimeRequest, context: grpc.aio.ServicerContext
    ) -> pb.CallTimeResponse:
        tid = request.tournament_id
        await self.desk().call_time(self.caller(context), tid)
        return pb.CallTimeResponse(tournament=await self._now(tid))

    @unary
    async def AddPenalty(
        self, request: pb.AddPenaltyRequest, context: grpc.aio.ServicerContext
    ) -> pb.AddPenaltyResponse:
        tid = request.tournament_id
        await self.desk().add_penalty(
            self.caller(context), tid, request.name, request.penalty, request.round, request.reason
        )
        return pb.AddPenaltyResponse(tournament=await self._now(tid))

    @unary
    async def EndTournament(
        self, request: pb.EndTournamentRequest, context: grpc.aio.ServicerContext
    ) -> pb.EndTournamentResponse:
        await self.desk().end(self.caller(context), request.tournament_id)
        return pb.EndTournamentResponse(tournament=await self._now(request.tournament_id))

    @unary
    async def GetTournament(
        self, request: pb.GetTournamentRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetTournamentResponse:
        found = await self.desk().snapshot(request.tournament_id, request.at_seq)
        return pb.GetTournamentResponse(tournament=state_message(found))

    @streaming
    async def WatchTournament(
        self, request: pb.WatchTournamentRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.WatchTournamentResponse]:
        caller = self.caller(context)
        rows = self.desk().watch_tournament(caller, request.tournament_id, request.from_seq)
        async for row, state in rows:
            yield row_message(row, state)

    @unary
    async def ExportTournament(
        self, request: pb.ExportTournamentRequest, context: grpc.aio.ServicerContext
    ) -> pb.ExportTournamentResponse:
        text = await self.desk().export_tournament(self.caller(context), request.tournament_id)
        return pb.ExportTournamentResponse(
            document=text, file_name=f"{request.tournament_id}.feastlog-tournament.json"
        )


def row_message(row: Row, state: Tournament) -> pb.WatchTournamentResponse:
    """One row of the stream, with the tournament after it."""
    action, body = decoded_row(row)
    snap = Snapshot(row.seq, row.seq, state, [], (), "")
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
        tournament=state_message(snap, with_standings=True),
    )


def state_message(snap: Snapshot, with_standings: bool = True) -> pb.TournamentState:
    """A tournament at a seq as the API gives it."""
    state = snap.state
    lines = snap.standings or (standings(state) if with_standings else [])
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
