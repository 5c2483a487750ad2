"""feastlog.v1.AuditService: verify, explain, what-if, refusals and arbiter rulings.

Verification reads the log from the store (never the live tables, which are derived).
While a game runs, explanations and what-ifs show hidden cards and sealed bids, so the
visibility policy keeps them for the arbiter; once the seed is revealed they are public.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from feastlog.service.grpc.servicers.base import Servicer
from feastlog.service.grpc.servicers.convert import (
    accepted,
    kind_text,
    participant_text,
    rejection_message,
    report_message,
    struct,
    what_if_message,
)
from feastlog.service.grpc.status import streaming, unary
from feastlog.v1 import audit_service_pb2 as pb
from feastlog.v1 import audit_service_pb2_grpc as pb_grpc


class AuditService(Servicer, pb_grpc.AuditServiceServicer):
    """feastlog.v1.AuditService."""

    @unary
    async def VerifyGame(
        self, request: pb.VerifyGameRequest, context: grpc.aio.ServicerContext
    ) -> pb.VerifyGameResponse:
        report = await self.app.replays.verify(self.caller(context), request.game_id)
        return pb.VerifyGameResponse(report=report_message(report))

    @streaming
    async def VerifyAllGames(
        self, request: pb.VerifyAllGamesRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.VerifyAllGamesResponse]:
        kind = kind_text(request.game_kind, request.kind)
        async for found in self.app.replays.verify_all(self.caller(context), kind):
            yield pb.VerifyAllGamesResponse(report=report_message(found.report), total=found.total)

    @unary
    async def ExplainEvent(
        self, request: pb.ExplainEventRequest, context: grpc.aio.ServicerContext
    ) -> pb.ExplainEventResponse:
        found = await self.app.replays.explain(self.caller(context), request.game_id, request.seq)
        return pb.ExplainEventResponse(explanation=struct(found.found), lines=found.lines)

    @unary
    async def WhatIf(
        self, request: pb.WhatIfRequest, context: grpc.aio.ServicerContext
    ) -> pb.WhatIfResponse:
        actor = participant_text(request.actor, request.typed_actor, "typed_actor")
        answer = await self.app.replays.what_if(
            self.caller(context), request.game_id, request.seq, actor, request.command
        )
        return what_if_message(answer)

    @unary
    async def ListRejections(
        self, request: pb.ListRejectionsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListRejectionsResponse:
        found = await self.app.replays.rejections(self.caller(context), request.game_id)
        return pb.ListRejectionsResponse(rejections=[rejection_message(r) for r in found])

    @unary
    async def SubmitRuling(
        self, request: pb.SubmitRulingRequest, context: grpc.aio.ServicerContext
    ) -> pb.SubmitRulingResponse:
        done = await self.app.games.rule(
            self.caller(context), request.game_id, request.command_id, request.ruling
        )
        return accepted(pb.SubmitRulingResponse(), done)
