"""feastlog.v1.GameService: create, join, submit, view, legal commands, watch, list."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from feastlog.presentation import typed
from feastlog.service.grpc.servicers.base import Servicer
from feastlog.service.grpc.servicers.convert import (
    accepted,
    created_message,
    event,
    kind_enum,
    kind_text,
    participant,
    receipt_message,
    struct,
)
from feastlog.service.grpc.status import streaming, unary
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc


class GameService(Servicer, pb_grpc.GameServiceServicer):
    """feastlog.v1.GameService."""

    @unary
    async def CreateGame(
        self, request: pb.CreateGameRequest, context: grpc.aio.ServicerContext
    ) -> pb.CreateGameResponse:
        created = await self.app.games.create(
            self.caller(context),
            kind_text(request.game_kind, request.kind),
            list(request.players),
            dict(request.options),
            request.seed,
            request.tournament_id,
            request.content_pack,
            request.seat_entropy,
        )
        return created_message(created)

    @unary
    async def JoinGame(
        self, request: pb.JoinGameRequest, context: grpc.aio.ServicerContext
    ) -> pb.JoinGameResponse:
        joined = await self.app.games.join(self.caller(context), request.game_id, request.entropy)
        return pb.JoinGameResponse(
            started=joined.started,
            waiting_for=joined.waiting_for,
            receipts=[receipt_message(r) for r in joined.receipts],
        )

    @unary
    async def SubmitCommand(
        self, request: pb.SubmitCommandRequest, context: grpc.aio.ServicerContext
    ) -> pb.SubmitCommandResponse:
        expected = request.expected_seq if request.HasField("expected_seq") else None
        done = await self.app.games.submit(
            self.caller(context), request.game_id, request.command_id, expected, request.command
        )
        return accepted(pb.SubmitCommandResponse(), done, request.typed_facts_only)

    @unary
    async def GetView(
        self, request: pb.GetViewRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetViewResponse:
        now = await self.app.replays.view(self.caller(context), request.game_id)
        return pb.GetViewResponse(
            seq=now.seq,
            viewer=str(now.viewer),
            view=struct(now.view),
            typed_view=typed.view_message(now.typed_member, now.view),
            typed_viewer=participant(str(now.viewer)),
        )

    @unary
    async def ListLegalCommands(
        self, request: pb.ListLegalCommandsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListLegalCommandsResponse:
        legal = await self.app.replays.legal(self.caller(context), request.game_id)
        return pb.ListLegalCommandsResponse(
            seq=legal.seq, commands=legal.commands, partial=legal.partial
        )

    @streaming
    async def WatchGame(
        self, request: pb.WatchGameRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.WatchGameResponse]:
        watching = await self.app.games.watch(
            self.caller(context), request.game_id, request.from_seq
        )
        async for step in watching.steps:
            yield pb.WatchGameResponse(event=event(step, watching.typed_member))

    @unary
    async def ListGames(
        self, request: pb.ListGamesRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListGamesResponse:
        kind = kind_text(request.game_kind, request.kind)
        found = await self.app.replays.games(
            self.caller(context),
            kind,
            request.page_size,
            request.tournament_id,
            request.page_token,
            request.limit,
        )
        games = [pb.GameSummary(**vars(s), kind=kind_enum(s.game_kind)) for s in found.games]
        return pb.ListGamesResponse(games=games, next_page_token=found.next_page_token)

    @unary
    async def GetGame(
        self, request: pb.GetGameRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetGameResponse:
        found = await self.app.replays.get_game(self.caller(context), request.game_id)
        return pb.GetGameResponse(
            game=pb.GameSummary(**vars(found), kind=kind_enum(found.game_kind))
        )
