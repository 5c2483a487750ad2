"""``AsyncClient``: a feastlog server's RPCs from asyncio code: the same calls as
``Client`` (declared once: ``feastlog.client.sync``'s ``Conveniences``), awaited, on a
``grpc.aio`` channel."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from typing import Any, TypeVar

import grpc

from feastlog.client.calls import Call, Stream
from feastlog.client.channel import Metadata, open_channel
from feastlog.client.errors import FeastlogError, from_rpc
from feastlog.client.methods import Asked, Awaited, Pages, Resumed, ended
from feastlog.client.sync import Conveniences, retry_wait, waits

T = TypeVar("T")


async def sent(stub: Any, call: Call[T], metadata: Metadata = ()) -> T:
    """One call on a stub of its service (made by the caller on its own channel), sent
    once: its answer, or the ``grpc.RpcError`` as it came."""
    return call.answer(await getattr(stub, call.method)(call.request, metadata=metadata))


class AsyncClient(Conveniences[grpc.aio.Channel]):
    """A feastlog server's RPCs, awaited: found, credentialed and retried as ``Client``
    (see its doc; ``channel``: a ``grpc.aio`` channel already open).  Use it in the
    event loop it was made in; ``async with`` closes it."""

    def opened(self, address: str, credentials: grpc.ChannelCredentials | None) -> grpc.aio.Channel:
        """A grpc.aio channel to ``address``, calls carrying the routing header."""
        return open_channel(address, credentials)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the channel."""
        await self.channel.close()

    async def run(self, call: Call[T], token: str | None = None) -> T:
        """One unary call, sent again while the server cannot be reached."""
        method = getattr(self.stubs[call.service], call.method)
        tries = waits(self.retries)
        while True:
            try:
                reply = await method(
                    call.request, metadata=self.metadata(token), timeout=self.timeout
                )
            except grpc.RpcError as error:
                await asyncio.sleep(retry_wait(from_rpc(error), tries))
                continue
            return call.answer(reply)

    async def stream(self, stream: Stream[T], token: str | None = None) -> AsyncIterator[T]:
        """A server stream's replies (not retried: ``follow`` resumes a game's)."""
        method = getattr(self.stubs[stream.service], stream.method)
        replies: Any = method(stream.request, metadata=self.metadata(token))
        try:
            async for reply in replies:
                yield stream.each(reply)
        except grpc.RpcError as error:
            raise from_rpc(error) from None
        finally:
            replies.cancel()

    async def paged(self, pages: Pages[T]) -> AsyncIterator[T]:
        """A list's items, page by page."""
        while not pages.done:
            for item in pages.read(await self.run(pages.call())):
                yield item

    async def resumed(self, resumed: Resumed[T]) -> AsyncGenerator[T, None]:
        """A stream's items, opened again after each dropped connection (``retries``
        times in a row at most) from where it stood."""
        tries = waits(self.retries)
        while True:
            try:
                async for item in self.stream(resumed.opened(), resumed.token):
                    yield item
                    tries = waits(self.retries)
                    if resumed.seen(item):
                        return
                return
            except FeastlogError as failure:
                await asyncio.sleep(retry_wait(failure, tries))

    async def awaited(self, awaited: Awaited[T]) -> T:
        """A value waited for: asked now, then after each item of its stream."""

        async def asked(asking: Asked[T | None]) -> T | None:
            try:
                call = next(asking)
                while True:
                    call = asking.send(await self.run(call, awaited.token))
            except StopIteration as answered:
                return answered.value

        found = await asked(awaited.check())
        if found is not None:
            return found
        async with aclosing(self.resumed(awaited.follow())) as items:
            async for _ in items:
                found = await asked(awaited.check())
                if found is not None:
                    return found
        raise ended()
