"""``AsyncClient``: a feastlog server's RPCs from asyncio code: the same calls as
``Client`` (``feastlog.client.calls``), awaited, on a ``grpc.aio`` channel."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, TypeVar

import grpc

from feastlog.client import calls
from feastlog.client.calls import Call, Created, Legal, Recorded, Stream, View
from feastlog.client.channel import Metadata, bearer, open_channel
from feastlog.client.errors import FeastlogError, from_rpc
from feastlog.client.locate import DEFAULT_DB
from feastlog.client.sync import RETRIES, SEED_REVEAL, STUBS, TIMEOUT, find, waits
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import record_pb2

T = TypeVar("T")


async def sent(stub: Any, call: Call[T], metadata: Metadata = ()) -> T:
    """One call on a stub of its service (made by the caller on its own channel), sent
    once: its answer, or the ``grpc.RpcError`` as it came."""
    return call.answer(await getattr(stub, call.method)(call.request, metadata=metadata))


class AsyncClient:
    """A feastlog server's RPCs, awaited: found, credentialed and retried as ``Client``
    (see its doc).  Use it in the event loop it was made in; ``async with`` closes it."""

    def __init__(
        self,
        server: str | None = None,
        *,
        db: str = DEFAULT_DB,
        token: str | None = None,
        organiser_key: str | None = None,
        ca: str | None = None,
        tls_cert: str | None = None,
        tls_key: str | None = None,
        retries: int = RETRIES,
        timeout: float | None = TIMEOUT,
        channel: grpc.aio.Channel | None = None,
    ) -> None:
        self.token, self.retries, self.timeout = token, retries, timeout
        self.channel: grpc.aio.Channel
        if channel is not None:
            self.address, self.organiser_key, self.channel = server or "", organiser_key, channel
        else:
            where = find(server, db, organiser_key, ca, tls_cert, tls_key)
            self.address, self.organiser_key = where.server or "", where.key
            credentials = where.tls.channel_credentials() if where.tls else None
            self.channel = open_channel(self.address, credentials)
        self.stubs = {name: stub(self.channel) for name, stub in STUBS.items()}

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the channel."""
        await self.channel.close()

    def metadata(self, token: str | None) -> Metadata:
        """The credentials a call carries (as ``Client.metadata``)."""
        if token is not None:
            return bearer(token)
        return bearer(self.token or self.organiser_key)

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
                failure = from_rpc(error)
                wait = next(tries, None) if failure.retryable else None
                if wait is None:
                    raise failure from None
                await asyncio.sleep(wait)
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

    async def create_game(
        self,
        kind: str,
        players: Sequence[str],
        seed: bytes = b"",
        options: Mapping[str, str] | None = None,
        content_pack: bytes = b"",
        seat_entropy: bool = False,
        tournament_id: str = "",
    ) -> Created:
        """A new game (organiser): its id, seed commitment and seat tokens."""
        made = calls.create_game(
            kind, players, seed, options, content_pack, seat_entropy, tournament_id
        )
        return await self.run(made)

    async def join(
        self, game_id: str, entropy: bytes, token: str | None = None
    ) -> pb.JoinGameResponse:
        """A seat's entropy (a game created with seat entropy)."""
        return await self.run(calls.join_game(game_id, entropy), token)

    async def submit(
        self,
        game_id: str,
        command: record_pb2.Command,
        expected_seq: int | None = None,
        token: str | None = None,
        command_id: str | None = None,
    ) -> Recorded:
        """Send a command; retried with the same command_id."""
        return await self.run(calls.submit(game_id, command, expected_seq, command_id), token)

    async def view(self, game_id: str, token: str | None = None) -> View:
        """The table now, as the caller may see it."""
        return await self.run(calls.view(game_id), token)

    async def legal(self, game_id: str, token: str | None = None) -> Legal:
        """The caller's seat's legal commands now."""
        return await self.run(calls.legal(game_id), token)

    async def games(self, kind: str = "", tournament_id: str = "") -> AsyncIterator[pb.GameSummary]:
        """Every game (of a kind, of a tournament), page by page, oldest first."""
        page = ""
        while True:
            listed = await self.run(calls.list_games(kind, tournament_id, 500, page))
            for game in listed.games:
                yield game
            page = listed.next_page_token
            if not page:
                return

    async def follow(
        self, game_id: str, from_seq: int = 1, token: str | None = None
    ) -> AsyncIterator[pb.RecordEvent]:
        """A game's rows from ``from_seq`` to the seed reveal, resumed after a dropped
        connection where it was."""
        tries = waits(self.retries)
        while True:
            try:
                async for event in self.stream(calls.watch(game_id, from_seq), token):
                    yield event
                    from_seq, tries = event.seq + 1, waits(self.retries)
                    if event.kind == SEED_REVEAL:
                        return
                return
            except FeastlogError as failure:
                wait = next(tries, None) if failure.retryable else None
                if wait is None:
                    raise
                await asyncio.sleep(wait)

    async def verify(self, game_id: str, token: str | None = None) -> Any:
        """One game's audit report (``feastlog.v1.AuditReport``)."""
        return await self.run(calls.verify(game_id), token)

    async def export(self, game_id: str, token: str | None = None) -> Any:
        """The game's record file (``feastlog.v1.ExportRecordResponse``)."""
        return await self.run(calls.export(game_id), token)
