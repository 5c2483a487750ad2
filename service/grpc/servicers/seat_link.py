"""feastlog.v1.SeatLinkService: one-time links to a seat's web page (``Games.seat_link``)."""

from __future__ import annotations

import grpc

from feastlog.service.app.seatlinks import link_path
from feastlog.service.grpc.servicers.base import Servicer
from feastlog.service.grpc.status import unary
from feastlog.v1 import seat_link_service_pb2 as pb
from feastlog.v1 import seat_link_service_pb2_grpc as pb_grpc


class SeatLinkService(Servicer, pb_grpc.SeatLinkServiceServicer):
    """One-time seat links, for the organiser (any seat) or a seat (its own)."""

    @unary
    async def CreateSeatLink(
        self, request: pb.CreateSeatLinkRequest, context: grpc.aio.ServicerContext
    ) -> pb.CreateSeatLinkResponse:
        code = await self.app.games.seat_link(self.caller(context), request.game_id, request.seat)
        path, pages = link_path(request.game_id, code), self.app.seat_links.pages_url
        return pb.CreateSeatLinkResponse(
            game_id=request.game_id,
            seat=request.seat,
            code=code,
            path=path,
            url=pages + path if pages else "",
        )
