"""feastlog.v1.AdminService: named arbiter keys, added and revoked on a running server.

Only the organiser key manages them. Keys are stored as sha256; every add or revoke
empties the server's memory of arbiter keys, so a revoked key is refused from the next
call on.
"""

from __future__ import annotations

import grpc

from feastlog.v1 import admin_service_pb2 as pb
from feastlog.v1 import admin_service_pb2_grpc as pb_grpc
from service.app import Games
from service.auth import Caller, check_arbiter_name, new_arbiter_key, token_sha256
from service.errors import ArbiterExists, ArbiterNotFound, BadRequest, unary
from service.live import utc_now


def arbiter_name(name: str) -> str:
    """A well-formed arbiter name, or BadRequest naming the field."""
    try:
        return check_arbiter_name(name)
    except ValueError as bad:
        raise BadRequest(str(bad), field="name") from bad


class AdminService(pb_grpc.AdminServiceServicer):
    """feastlog.v1.AdminService."""

    def __init__(self, games: Games) -> None:
        self.games = games

    def organiser(self, context: grpc.aio.ServicerContext) -> Caller:
        """The caller, refused unless it holds the organiser key."""
        caller = self.games.credentials.caller(tuple(context.invocation_metadata() or ()))
        self.games.credentials.organiser(caller)
        return caller

    @unary
    async def AddArbiter(
        self, request: pb.AddArbiterRequest, context: grpc.aio.ServicerContext
    ) -> pb.AddArbiterResponse:
        self.organiser(context)
        name, key = arbiter_name(request.name), new_arbiter_key()
        store = self.games.db.store
        if not await self.games.db.call(store.add_arbiter, name, token_sha256(key), utc_now()):
            raise ArbiterExists(f"arbiter {name!r} already holds a key: revoke it first")
        self.games.credentials.arbiters_changed()
        return pb.AddArbiterResponse(name=name, key=key)

    @unary
    async def RevokeArbiter(
        self, request: pb.RevokeArbiterRequest, context: grpc.aio.ServicerContext
    ) -> pb.RevokeArbiterResponse:
        self.organiser(context)
        name, at = arbiter_name(request.name), utc_now()
        if not await self.games.db.call(self.games.db.store.revoke_arbiter, name, at):
            raise ArbiterNotFound(f"there is no arbiter {name!r} holding a key")
        self.games.credentials.arbiters_changed()
        return pb.RevokeArbiterResponse(name=name, revoked_at=at)

    @unary
    async def ListArbiters(
        self, request: pb.ListArbitersRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListArbitersResponse:
        self.organiser(context)
        found = await self.games.db.call(self.games.db.store.arbiters)
        return pb.ListArbitersResponse(
            arbiters=[pb.Arbiter(name=n, added_at=a, revoked_at=r) for n, a, r in found]
        )


def add_to(server: grpc.aio.Server, games: Games) -> None:
    """Register the AdminService on a server."""
    pb_grpc.add_AdminServiceServicer_to_server(AdminService(games), server)
