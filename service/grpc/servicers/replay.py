"""feastlog.v1.ReplayService: the state at a seq, replay streams and exports.

A live game keeps the table after every row in memory, so the state at any seq is a
lookup once the game is folded; what each viewer saw is the visibility policy's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from feastlog.service.grpc.servicers.base import Servicer
from feastlog.service.grpc.servicers.convert import event, participant, participant_text, struct
from feastlog.service.grpc.status import streaming, unary
from feastlog.v1 import replay_service_pb2 as pb
from feastlog.v1 import replay_service_pb2_grpc as pb_grpc


class ReplayService(Servicer, pb_grpc.ReplayServiceServicer):
    """feastlog.v1.ReplayService."""

    @unary
    async def GetStateAt(
        self, request: pb.GetStateAtRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetStateAtResponse:
        wanted = participant_text(request.viewer, request.typed_viewer, "typed_viewer")
        found = await self.app.replays.state_at(
            self.caller(context), request.game_id, request.seq, wanted
        )
        return pb.GetStateAtResponse(
            event=event(found.steps[-1], found.typed_member),
            viewer=str(found.viewer),
            typed_viewer=participant(str(found.viewer)),
            rulings=struct(found.rulings),
            last_seq=found.last_seq,
        )

    @streaming
    async def StreamReplay(
        self, request: pb.StreamReplayRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.StreamReplayResponse]:
        wanted = participant_text(request.viewer, request.typed_viewer, "typed_viewer")
        found = await self.app.replays.replay(
            self.caller(context), request.game_id, request.from_seq, request.to_seq, wanted
        )
        for step in found.steps:
            yield pb.StreamReplayResponse(event=event(step, found.typed_member))

    @unary
    async def ExportRecord(
        self, request: pb.ExportRecordRequest, context: grpc.aio.ServicerContext
    ) -> pb.ExportRecordResponse:
        found = await self.app.replays.export(self.caller(context), request.game_id)
        return pb.ExportRecordResponse(
            content=found.text.encode(), file_name=found.file_name, complete=found.complete
        )
