"""feastlog.v1.TableService: a seat calls the arbiter, the calls' queue, the case file.

Each method converts its request and calls one use case of ``service/app/table.py``
(``AtTable``, the application's ``table``); errors leave through the one status table.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc

from feastlog.service.app.table import QueuedCall
from feastlog.service.grpc.servicers.base import Servicer
from feastlog.service.grpc.status import streaming, unary
from feastlog.v1 import record_pb2
from feastlog.v1 import table_service_pb2 as pb
from feastlog.v1 import table_service_pb2_grpc as pb_grpc


def call_message(found: QueuedCall) -> pb.ArbiterCall:
    """A call of the queue as an ArbiterCall."""
    return pb.ArbiterCall(**found.as_dict())


class TableService(Servicer, pb_grpc.TableServiceServicer):
    """feastlog.v1.TableService."""

    @unary
    async def CallArbiter(
        self, request: pb.CallArbiterRequest, context: grpc.aio.ServicerContext
    ) -> pb.CallArbiterResponse:
        made = record_pb2.SeatCall(
            about_seq=request.about_seq, claim=request.claim, hold=request.hold
        )
        if request.HasField("alternative"):
            made.alternative.CopyFrom(request.alternative)
        done = await self.app.table.call_arbiter(
            self.caller(context), request.game_id, request.command_id, made
        )
        return pb.CallArbiterResponse(call=done.row.seq, hash=done.row.hash)

    @unary
    async def ListCalls(
        self, request: pb.ListCallsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListCallsResponse:
        found = await self.app.table.calls(
            self.caller(context), request.game_id, request.tournament_id, request.open_only
        )
        return pb.ListCallsResponse(calls=[call_message(c) for c in found])

    @streaming
    async def WatchCalls(
        self, request: pb.WatchCallsRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.WatchCallsResponse]:
        calls = await self.app.table.watch_calls(self.caller(context), request.tournament_id)
        async for found in calls:
            yield pb.WatchCallsResponse(call=call_message(found))

    @unary
    async def GetCaseFile(
        self, request: pb.GetCaseFileRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetCaseFileResponse:
        found = await self.app.table.case_file(self.caller(context), request.game_id, request.call)
        return pb.GetCaseFileResponse(bundle=found.text, sha256=found.sha256)

    @unary
    async def GetClocks(
        self, request: pb.GetClocksRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetClocksResponse:
        return clocks_message(await self.app.table.clocks(self.caller(context), request.game_id))


def clocks_message(found: dict[str, Any] | None) -> pb.GetClocksResponse:
    """A game's clocks (``timing.as_dict``) as GetClocksResponse."""
    if found is None:
        return pb.GetClocksResponse(clocked=False)
    seats = [
        pb.SeatClock(
            seat=s,
            remaining_ms=found["remaining_ms"][s],
            used_ms=found["used_ms"][s],
            running=s in found["running"],
            timed_out=s in found["timed_out"],
        )
        for s in range(len(found["remaining_ms"]))
    ]
    return pb.GetClocksResponse(
        clocked=True,
        mode=found["mode"],
        allowance_ms=found["allowance_ms"],
        increment_ms=found["increment_ms"],
        on_timeout=found["on_timeout"],
        paused=found["paused"],
        seats=seats,
    )
