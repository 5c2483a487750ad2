"""feastlog.v1.AdminService: named arbiter keys, added and revoked on a running server.

Only the organiser key manages them (``Application.add_arbiter`` and the others).
"""

from __future__ import annotations

import grpc

from feastlog.service.app.auth import check_arbiter_name
from feastlog.service.app.errors import BadRequest
from feastlog.service.grpc.servicers.base import Servicer
from feastlog.service.grpc.status import unary
from feastlog.v1 import admin_service_pb2 as pb
from feastlog.v1 import admin_service_pb2_grpc as pb_grpc


def arbiter_name(name: str, new: bool = False) -> str:
    """A well-formed arbiter name (``new``: no role's name), or BadRequest naming the field."""
    try:
        return check_arbiter_name(name, new)
    except ValueError as bad:
        raise BadRequest(str(bad), field="name") from bad


class AdminService(Servicer, pb_grpc.AdminServiceServicer):
    """Named arbiters, for the organiser."""

    @unary
    async def AddArbiter(
        self, request: pb.AddArbiterRequest, context: grpc.aio.ServicerContext
    ) -> pb.AddArbiterResponse:
        name = arbiter_name(request.name, new=True)
        key = await self.app.add_arbiter(self.caller(context), name)
        return pb.AddArbiterResponse(name=name, key=key)

    @unary
    async def RevokeArbiter(
        self, request: pb.RevokeArbiterRequest, context: grpc.aio.ServicerContext
    ) -> pb.RevokeArbiterResponse:
        name = arbiter_name(request.name)
        at = await self.app.revoke_arbiter(self.caller(context), name)
        return pb.RevokeArbiterResponse(name=name, revoked_at=at)

    @unary
    async def ListArbiters(
        self, request: pb.ListArbitersRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListArbitersResponse:
        found = await self.app.arbiters(self.caller(context))
        return pb.ListArbitersResponse(
            arbiters=[pb.Arbiter(name=n, added_at=a, revoked_at=r) for n, a, r in found]
        )
