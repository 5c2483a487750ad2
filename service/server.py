"""The gRPC server: thin servicers over ``service.app.Games``, health and reflection."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from feastlog.v1 import audit_service_pb2, replay_service_pb2, tournament_service_pb2
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc
from replay import typed
from service import audit_service, limits, reflection, replay_service, tournament_service
from service.app import Games
from service.auth import Caller, Credentials, organiser_key
from service.convert import (
    event,
    kind_enum,
    kind_text,
    participant,
    struct,
    structs,
    typed_facts,
)
from service.errors import streaming, unary
from service.live import Database
from service.store import Store


class GameService(pb_grpc.GameServiceServicer):
    """feastlog.v1.GameService."""

    def __init__(self, games: Games) -> None:
        self.games = games

    def caller(self, context: grpc.aio.ServicerContext) -> Caller:
        """Who is calling, from the authorization metadata."""
        return self.games.credentials.caller(tuple(context.invocation_metadata() or ()))

    @unary
    async def CreateGame(
        self, request: pb.CreateGameRequest, context: grpc.aio.ServicerContext
    ) -> pb.CreateGameResponse:
        created = await self.games.create(
            self.caller(context),
            kind_text(request.game_kind, request.kind),
            list(request.players),
            dict(request.options),
            request.seed,
            request.tournament_id,
            request.content_pack,
            request.seat_entropy,
        )
        g = created.genesis
        tokens = [
            pb.SeatToken(seat=i, name=s.name, token=t)
            for i, (s, t) in enumerate(zip(g.seats, created.tokens, strict=True))
        ]
        return pb.CreateGameResponse(
            game_id=g.game_id,
            seed_commitment=g.seed_commitment,
            seat_tokens=tokens,
            ruleset_version=g.ruleset_version,
            pack_sha256=g.pack_sha256,
            kind=kind_enum(g.game_kind),
        )

    @unary
    async def JoinGame(
        self, request: pb.JoinGameRequest, context: grpc.aio.ServicerContext
    ) -> pb.JoinGameResponse:
        started, waiting = await self.games.join(
            self.caller(context), request.game_id, request.entropy
        )
        return pb.JoinGameResponse(started=started, waiting_for=waiting)

    @unary
    async def SubmitCommand(
        self, request: pb.SubmitCommandRequest, context: grpc.aio.ServicerContext
    ) -> pb.SubmitCommandResponse:
        expected = request.expected_seq if request.HasField("expected_seq") else None
        done = await self.games.submit(
            self.caller(context), request.game_id, request.command_id, expected, request.command
        )
        game = await self.games.get(request.game_id)
        return pb.SubmitCommandResponse(
            seq=done.row.seq,
            hash=done.row.hash,
            state_hash=done.row.state_hash,
            facts=structs(done.facts),
            game_over=done.game_over,
            replayed=done.replayed,
            typed_facts=typed_facts(game.engine.command_field, done.facts),
        )

    @unary
    async def GetView(
        self, request: pb.GetViewRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetViewResponse:
        game, viewer, view = await self.games.view(self.caller(context), request.game_id)
        return pb.GetViewResponse(
            seq=game.last_seq,
            viewer=str(viewer),
            view=struct(view),
            typed_view=typed.view_message(game.engine.command_field, view),
            typed_viewer=participant(str(viewer)),
        )

    @unary
    async def ListLegalCommands(
        self, request: pb.ListLegalCommandsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListLegalCommandsResponse:
        seq, commands, partial = await self.games.legal(self.caller(context), request.game_id)
        return pb.ListLegalCommandsResponse(seq=seq, commands=commands, partial=partial)

    @streaming
    async def WatchGame(
        self, request: pb.WatchGameRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.WatchGameResponse]:
        game = await self.games.get(request.game_id)
        steps = self.games.watch(self.caller(context), request.game_id, request.from_seq)
        async for step in steps:
            yield pb.WatchGameResponse(event=event(step, game.engine.command_field))

    @unary
    async def ListGames(
        self, request: pb.ListGamesRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListGamesResponse:
        kind = kind_text(request.game_kind, request.kind)
        summaries = await self.games.summaries(kind, request.limit, request.tournament_id)
        games = [pb.GameSummary(**vars(s), kind=kind_enum(s.game_kind)) for s in summaries]
        return pb.ListGamesResponse(games=games)


SERVICE_NAMES = (
    pb.DESCRIPTOR.services_by_name["GameService"].full_name,
    replay_service_pb2.DESCRIPTOR.services_by_name["ReplayService"].full_name,
    audit_service_pb2.DESCRIPTOR.services_by_name["AuditService"].full_name,
    tournament_service_pb2.DESCRIPTOR.services_by_name["TournamentService"].full_name,
    health.SERVICE_NAME,
    *reflection.SERVICE_NAMES,
)


@dataclass
class Running:
    """A started server and what it holds."""

    server: grpc.aio.Server
    port: int
    games: Games
    db: Database
    organiser_key: str
    key_source: str

    async def stop(self, grace: float = 5.0) -> None:
        """Drain in-flight calls, then close the database."""
        await self.server.stop(grace)
        await self.games.drain()  # commands already taken are recorded, callers or not
        await self.db.close()


async def create_server(db_path: str, address: str = "127.0.0.1:0") -> Running:
    """Open the store and start serving on ``address`` (port 0 picks a free port)."""
    store = Store(db_path)
    db = Database(store)
    db.start()
    key, key_source = organiser_key(db_path)
    credentials = Credentials(key, await db.call(store.seat_tokens))
    games = Games(db, credentials)
    await games.load_pending()
    server = grpc.aio.server(
        interceptors=[limits.Guard(credentials)], options=limits.server_options()
    )
    pb_grpc.add_GameServiceServicer_to_server(GameService(games), server)
    replay_service.add_to(server, games)
    audit_service.add_to(server, games)
    tournament_service.add_to(server, games)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable(SERVICE_NAMES[:5], server)  # v1 and v1alpha
    port = server.add_insecure_port(address)
    await server.start()
    for name in (*SERVICE_NAMES[:4], ""):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return Running(server, port, games, db, key, key_source)


async def serve_forever(running: Running) -> None:
    """Serve until SIGINT or SIGTERM, then shut down gracefully."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await running.stop()
