"""feastlog.v1.AdminService: named arbiter keys, added and revoked on a running server,
and a backup of its file.

Only the organiser key manages them (``service/app/arbiters.py``, ``service/app/backup.py``).
"""

from __future__ import annotations

import grpc

from feastlog.service.app.backup import back_up
from feastlog.service.grpc.servicers.base import Servicer
from feastlog.service.grpc.status import unary
from feastlog.v1 import admin_service_pb2 as pb
from feastlog.v1 import admin_service_pb2_grpc as pb_grpc


class AdminService(Servicer, pb_grpc.AdminServiceServicer):
    """Named arbiters, for the organiser."""

    @unary
    async def AddArbiter(
        self, request: pb.AddArbiterRequest, context: grpc.aio.ServicerContext
    ) -> pb.AddArbiterResponse:
        key = await self.app.arbiters.add_arbiter(self.caller(context), request.name)
        return pb.AddArbiterResponse(name=request.name, key=key)

    @unary
    async def RevokeArbiter(
        self, request: pb.RevokeArbiterRequest, context: grpc.aio.ServicerContext
    ) -> pb.RevokeArbiterResponse:
        at = await self.app.arbiters.revoke_arbiter(self.caller(context), request.name)
        return pb.RevokeArbiterResponse(name=request.name, revoked_at=at)

    @unary
    async def ListArbiters(
        self, request: pb.ListArbitersRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListArbitersResponse:
        found = await self.app.arbiters.list_arbiters(self.caller(context))
        return pb.ListArbitersResponse(
            arbiters=[pb.Arbiter(name=n, added_at=a, revoked_at=r) for n, a, r in found]
        )

    @unary
    async def Backup(
        self, request: pb.BackupRequest, context: grpc.aio.ServicerContext
    ) -> pb.BackupResponse:
        made = await back_up(self.app.db, self.caller(context), request.path)
        return pb.BackupResponse(
            path=made.path,
            games=made.games,
            rows=made.rows,
            bytes=made.bytes,
            paused_seconds=made.paused_seconds,
        )
