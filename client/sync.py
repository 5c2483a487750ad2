"""``Client``: a feastlog server's RPCs from blocking Python code (the calls it offers
are ``feastlog.client.conveniences``', the same as ``AsyncClient``'s)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TypeVar

import grpc

from feastlog.client.calls import Call, Stream
from feastlog.client.channel import open_blocking_channel
from feastlog.client.conveniences import (
    SPECTATOR,
    Conveniences,
    Pages,
    Resumed,
    retry_wait,
    waits,
)
from feastlog.client.errors import FeastlogError, from_rpc

__all__ = ["SPECTATOR", "Client"]

T = TypeVar("T")


class Client(Conveniences[grpc.Channel]):
    """A feastlog server's RPCs, blocking.

    The server is found as the CLI finds it (``feastlog.client.locate``): ``server``
    (host:port), else the one announced beside ``db``; TLS with ``ca`` (and ``tls_cert``,
    ``tls_key`` for mutual TLS).  Each call is sent with ``token`` (a seat's token) when
    given, else the organiser key (given, or the key file beside ``db`` for its own
    server), else none; a method's own ``token`` overrides both (``SPECTATOR``: none).
    Calls that could not reach the server are sent again (``retries``), a command with
    the same command_id, so it is recorded once.  Every failure is a ``FeastlogError``.

    ``channel``: a channel already open (found and opened by the caller: a server's, or
    one answered in the caller's own process, as the CLI's offline commands are) in place
    of ``server``; it is closed with the client.
    """

    def opened(self, address: str, credentials: grpc.ChannelCredentials | None) -> grpc.Channel:
        """A blocking channel to ``address``, calls carrying the routing header."""
        return open_blocking_channel(address, credentials)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the channel (streams being read end)."""
        self.channel.close()

    def run(self, call: Call[T], token: str | None = None) -> T:
        """One unary call, sent again while the server cannot be reached."""
        method = getattr(self.stubs[call.service], call.method)
        tries = waits(self.retries)
        while True:
            try:
                reply = method(call.request, metadata=self.metadata(token), timeout=self.timeout)
            except grpc.RpcError as error:
                time.sleep(retry_wait(from_rpc(error), tries))
                continue
            return call.answer(reply)

    def stream(self, stream: Stream[T], token: str | None = None) -> Iterator[T]:
        """A server stream's replies (not retried: ``follow`` resumes a game's)."""
        method = getattr(self.stubs[stream.service], stream.method)
        try:
            replies = method(stream.request, metadata=self.metadata(token))
        except grpc.RpcError as error:  # refused before its first reply (in process)
            raise from_rpc(error) from None
        try:
            for reply in replies:
                yield stream.each(reply)
        except grpc.RpcError as error:
            raise from_rpc(error) from None
        finally:
            replies.cancel()

    def paged(self, pages: Pages[T]) -> Iterator[T]:
        """A list's items, page by page."""
        while not pages.done:
            yield from pages.read(self.run(pages.call()))

    def resumed(self, resumed: Resumed[T]) -> Iterator[T]:
        """A stream's items, opened again after each dropped connection (``retries``
        times in a row at most) from where it stood."""
        tries = waits(self.retries)
        while True:
            try:
                for item in self.stream(resumed.opened(), resumed.token):
                    yield item
                    tries = waits(self.retries)
                    if resumed.seen(item):
                        return
                return
            except FeastlogError as failure:
                time.sleep(retry_wait(failure, tries))
