"""feastlog.v1.FeedService: every game's rows in one stream (``service.app.feed``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from feastlog.service.app.application import Application
from feastlog.service.app.feed import STEPS_KEPT, open_feed
from feastlog.service.grpc.servicers.base import Servicer
from feastlog.service.grpc.servicers.convert import EventsMade
from feastlog.service.grpc.status import streaming
from feastlog.v1 import feed_service_pb2 as pb
from feastlog.v1 import feed_service_pb2_grpc as pb_grpc


class FeedService(Servicer, pb_grpc.FeedServiceServicer):
    """The feed of every game."""

    def __init__(self, app: Application) -> None:
        super().__init__(app)
        self.events = EventsMade(STEPS_KEPT)  # a row's RecordEvent, once for every feed

    @streaming
    async def WatchAll(
        self, request: pb.WatchAllRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.WatchAllResponse]:
        caller = self.caller(context)
        feed = await open_feed(
            self.app, caller, request.game_kind, request.tournament_id, request.position
        )
        async for row in feed:
            made = self.events.of(row.drawn, row.step, row.typed_member)
            yield pb.WatchAllResponse(game_id=row.game_id, event=made, position=row.token)


def add_to(server: grpc.aio.Server, app: Application) -> None:
    """Register the FeedService on a server."""
    pb_grpc.add_FeedServiceServicer_to_server(FeedService(app), server)
