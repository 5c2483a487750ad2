"""Channels to a feastlog server, blocking and asyncio: every call about a game carries
its id in a routing header, so a load balancer in front of many nodes sends a game's
calls to the node that has it in memory."""

from __future__ import annotations

import collections
from typing import Any

import grpc

from feastlog.replay.games.text import fits_header

Metadata = tuple[tuple[str, str], ...]


# Every call about a game carries its id in this header, so a load balancer in front of
# many nodes (nginx: hash $http_x_feastlog_game consistent) sends a game's calls to the
# node that has it folded in memory. Affinity only: any node answers every call correctly.
ROUTING_HEADER = "x-feastlog-game"

# Each channel connects on its own. gRPC shares a subchannel, and with it its reconnect
# backoff, between all of a process's channels to one address: once one channel had been
# refused while the server restarted, a new channel's first call after "listening" failed
# at once with that refusal (UNAVAILABLE "Connection refused") until the backoff ran out
# (1 s, growing 1.6 times a failure to 2 minutes).
CHANNEL_OPTIONS = (("grpc.use_local_subchannel_pool", 1),)


def _routing(request: Any) -> list[tuple[str, str]]:
    """The routing header of a request that names a game (none for one that does not)."""
    game_id = getattr(request, "game_id", "")
    # affinity only: an id no header can carry goes without it (the server then names it)
    return [(ROUTING_HEADER, game_id)] if game_id and fits_header(game_id) else []


def _routed(details: Any, request: Any) -> Any:
    """An asyncio call's details with the routing header added."""
    extra = _routing(request)
    if not extra:
        return details
    metadata = grpc.aio.Metadata(*(details.metadata or ()), *extra)
    return grpc.aio.ClientCallDetails(
        details.method, details.timeout, metadata, details.credentials, details.wait_for_ready
    )


def _routed_blocking(details: Any, request: Any) -> Any:
    """A blocking call's details with the routing header added."""
    extra = _routing(request)
    if not extra:
        return details
    metadata = [*(details.metadata or ()), *extra]
    return _SyncDetails(
        details.method,
        details.timeout,
        metadata,
        details.credentials,
        details.wait_for_ready,
        details.compression,
    )


# grpc.aio files an interceptor under the first kind it is, so one class per kind.
class _GameRouting(grpc.aio.UnaryUnaryClientInterceptor):
    """Adds the routing header to every unary call of an asyncio channel."""

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        """A unary call, routed by its game."""
        return await continuation(_routed(details, request), request)


class _GameStreamRouting(grpc.aio.UnaryStreamClientInterceptor):
    """Adds the routing header to every server stream of an asyncio channel."""

    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        """A server stream (WatchGame, replays), routed by its game."""
        return await continuation(_routed(details, request), request)


class _SyncDetails(
    collections.namedtuple(
        "_SyncDetails",
        ("method", "timeout", "metadata", "credentials", "wait_for_ready", "compression"),
    ),
    grpc.ClientCallDetails,
):
    """Call details of a blocking channel (grpc gives no constructor for them)."""


class _SyncGameRouting(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    """Adds the routing header to every call of a blocking channel."""

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        """A unary call, routed by its game."""
        return continuation(_routed_blocking(details, request), request)

    def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        """A server stream, routed by its game."""
        return continuation(_routed_blocking(details, request), request)


def open_channel(
    address: str, credentials: grpc.ChannelCredentials | None = None
) -> grpc.aio.Channel:
    """An asyncio channel to a server or a load balancer; calls carry the routing header."""
    routing = [_GameRouting(), _GameStreamRouting()]
    if credentials is not None:
        return grpc.aio.secure_channel(
            address, credentials, options=CHANNEL_OPTIONS, interceptors=routing
        )
    return grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS, interceptors=routing)


def open_blocking_channel(
    address: str, credentials: grpc.ChannelCredentials | None = None
) -> grpc.Channel:
    """A blocking channel to a server or a load balancer; calls carry the routing header."""
    if credentials is not None:
        channel = grpc.secure_channel(address, credentials, options=CHANNEL_OPTIONS)
    else:
        channel = grpc.insecure_channel(address, options=CHANNEL_OPTIONS)
    return grpc.intercept_channel(channel, _SyncGameRouting())


def bearer(token: str | None) -> Metadata:
    """Call metadata carrying a token (none for a spectator)."""
    return (("authorization", f"Bearer {token}"),) if token else ()
