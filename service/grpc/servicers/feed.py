"""feastlog.v1.FeedService: every game's rows in one stream (``service.app.feed``)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator

import grpc

from feastlog.service.app.application import Application
from feastlog.service.app.feed import STEPS_KEPT, FeedRow
from feastlog.service.grpc.servicers.base import Servicer
from feastlog.service.grpc.servicers.convert import event
from feastlog.service.grpc.status import streaming
from feastlog.v1 import feed_service_pb2 as pb
from feastlog.v1 import feed_service_pb2_grpc as pb_grpc


def sent(reply: bytes | pb.WatchAllResponse) -> bytes:
    """A WatchAll reply's bytes: as made (``RepliesMade``), or encoded now."""
    return reply if isinstance(reply, bytes) else reply.SerializeToString()


class FeedService(Servicer, pb_grpc.FeedServiceServicer):
    """The feed of every game."""

    SERIALIZERS = {"WatchAll": sent}  # noqa: RUF012  # the replies go out as made

    def __init__(self, app: Application) -> None:
        super().__init__(app)
        self.replies = RepliesMade(STEPS_KEPT)

    @streaming
    async def WatchAll(  # type: ignore[override]  # its replies go out as made (``sent``)
        self, request: pb.WatchAllRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[bytes]:
        caller = self.caller(context)
        feed = await self.app.feed.watch_all(
            caller, request.game_kind, request.tournament_id, request.position
        )
        async for row in feed:
            yield self.replies.of(row)


class RepliesMade:
    """Each row's WatchAllResponse made and encoded once for every feed handed the same
    drawing of it (``FeedRow.drawn``), the last ``kept``; each feed's own position is
    appended to the bytes (a field after the others, as protobuf reads it).  Beside a
    thousand feeds the conversion, the copy and the encoding of each row for each feed
    took half of the server's loop."""

    def __init__(self, kept: int) -> None:
        self._kept = kept
        self._made: OrderedDict[tuple[int, str, bool], bytes] = OrderedDict()

    def of(self, row: FeedRow) -> bytes:
        """The reply of a feed's row, encoded."""
        made = self._made.get(row.drawn)
        if made is None:
            shown = event(row.step, row.typed_member)
            made = pb.WatchAllResponse(game_id=row.game_id, event=shown).SerializeToString()
            self._made[row.drawn] = made
            while len(self._made) > self._kept:
                self._made.popitem(last=False)
        return made + pb.WatchAllResponse(position=row.token).SerializeToString()
