"""The wire: call metadata, Struct and ErrorInfo decoding, a spawned server, async bots
(the benchmarks drive a server with these; commands go through ``cli.client``)."""

from __future__ import annotations

import collections
import math
import os
import random
import re
import subprocess
import sys
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import struct_pb2
from google.protobuf.message import DecodeError
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from feastlog.replay.text import fits_header
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc

Metadata = tuple[tuple[str, str], ...]

# Every call about a game carries its id in this header, so a load balancer in front of
# many nodes (nginx: hash $http_x_feastlog_game consistent) sends a game's calls to the
# node that has it folded in memory. Affinity only: any node answers every call correctly.
ROUTING_HEADER = "x-feastlog-game"


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
        return grpc.aio.secure_channel(address, credentials, interceptors=routing)
    return grpc.aio.insecure_channel(address, interceptors=routing)


def open_blocking_channel(
    address: str, credentials: grpc.ChannelCredentials | None = None
) -> grpc.Channel:
    """A blocking channel to a server or a load balancer; calls carry the routing header."""
    if credentials is not None:
        channel = grpc.secure_channel(address, credentials)
    else:
        channel = grpc.insecure_channel(address)
    return grpc.intercept_channel(channel, _SyncGameRouting())


def spawn_server(db_path: Path, key: str, prelude: str = "") -> tuple[subprocess.Popen[str], str]:
    """``feastlog serve`` on port 0 in its own process: the process and its address.

    ``prelude``: Python run in that process first (a benchmark's setting of a constant).
    """
    env = {**os.environ, "FEASTLOG_ORGANISER_KEY": key}
    code = f"{prelude}\nfrom feastlog.cli.main import main; main()"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "serve", "--db", str(db_path), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    found = re.search(r"listening on (\S+)", first)
    if not found:
        proc.kill()
        _, err = proc.communicate(timeout=10)
        raise RuntimeError(f"the server did not start: {first}{err}")
    return proc, found.group(1)


def bearer(token: str | None) -> Metadata:
    """Call metadata carrying a token (none for a spectator)."""
    return (("authorization", f"Bearer {token}"),) if token else ()


def as_dict(message: Any) -> dict[str, Any]:
    """A protobuf Struct as a dict, whole numbers back as ints (Struct carries doubles).

    What ``json_format.MessageToDict`` gives, whole numbers then made ints, in about half
    its time: every row of a replay carries its view and facts as Structs.
    """
    return {key: _plain(value) for key, value in message.fields.items()}


def _plain(value: struct_pb2.Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "struct_value":
        return {key: _plain(item) for key, item in value.struct_value.fields.items()}
    if kind == "list_value":
        return [_plain(item) for item in value.list_value.values]
    if kind == "number_value":
        number = value.number_value
        if math.isinf(number) or math.isnan(number):  # as MessageToDict refuses them
            raise ValueError(f"a Struct holds {number}, which JSON cannot")
        return int(number) if number.is_integer() else number
    if kind == "string_value":
        return value.string_value
    if kind == "bool_value":
        return value.bool_value
    return None  # null, or a Value never set (as MessageToDict reads it)


@dataclass
class BotResult:
    """A game the bots finished: its final public view and how many commands they sent."""

    game_id: str
    view: dict[str, Any]
    commands: int


async def play_with_bots(
    stub: pb_grpc.GameServiceAsyncStub, game_id: str, tokens: Sequence[str], seed: int
) -> BotResult:
    """Play a game to its end: every seat to act picks a random legal command.

    A game waiting for seat entropy is joined first, each seat with 32 fresh random bytes.
    """
    rng = random.Random(seed)
    sent = 0
    if await waiting_for_entropy(stub, game_id):
        for token in tokens:
            request = pb.JoinGameRequest(game_id=game_id, entropy=os.urandom(32))
            await stub.JoinGame(request, metadata=bearer(token))
    while True:
        reply = await stub.GetView(pb.GetViewRequest(game_id=game_id))
        view = as_dict(reply.view)
        if view.get("over"):
            return BotResult(game_id, view, sent)
        to_act = [int(s) for s in view.get("to_act", [])]
        if not to_act:
            raise RuntimeError(f"game {game_id} is not over but nobody is to act")
        for seat in to_act:
            meta = bearer(tokens[seat])
            legal = await stub.ListLegalCommands(
                pb.ListLegalCommandsRequest(game_id=game_id), metadata=meta
            )
            if not legal.commands:
                continue
            command = rng.choice(list(legal.commands))
            await stub.SubmitCommand(
                pb.SubmitCommandRequest(
                    game_id=game_id,
                    command_id=uuid.uuid4().hex,
                    command=command,
                    expected_seq=legal.seq,
                    typed_facts_only=True,
                ),
                metadata=meta,
            )
            sent += 1


async def waiting_for_entropy(stub: pb_grpc.GameServiceAsyncStub, game_id: str) -> bool:
    """Whether a game still waits for seat entropy."""
    try:
        await stub.GetView(pb.GetViewRequest(game_id=game_id))
    except grpc.aio.AioRpcError as error:
        if reason_of(error) == "WAITING_FOR_SEAT_ENTROPY":
            return True
        raise
    return False


def error_info(error: grpc.RpcError) -> error_details_pb2.ErrorInfo | None:
    """The ErrorInfo of a feastlog error (its reason, rule_id or field), if it carries one.

    None too for an error with no trailers to read, or whose rich status disagrees with
    its code (``from_call`` raises ValueError then: a proxy in between may have rewritten
    the code): what the CLI says of an error never depends on more than its code.
    """
    try:
        status = rpc_status.from_call(error)  # type: ignore[arg-type]
    except (AttributeError, ValueError, DecodeError):
        return None
    info = error_details_pb2.ErrorInfo()
    if status is None or not status.details or not status.details[0].Unpack(info):
        return None
    return info


def reason_of(error: grpc.RpcError) -> str:
    """The ErrorInfo reason of a feastlog error ('' when it carries none)."""
    info = error_info(error)
    return info.reason if info else ""


async def new_game(
    stub: pb_grpc.GameServiceAsyncStub,
    organiser_key: str,
    kind: str,
    players: Sequence[str],
    seed: bytes = b"",
    options: dict[str, str] | None = None,
    content_pack: bytes = b"",
    seat_entropy: bool = False,
    tournament_id: str = "",
) -> pb.CreateGameResponse:
    """Create a game as the organiser (with the bundled content pack unless one is given)."""
    request = pb.CreateGameRequest(
        game_kind=kind,
        players=list(players),
        seed=seed,
        options=options or {},
        content_pack=content_pack,
        seat_entropy=seat_entropy,
        tournament_id=tournament_id,
    )
    reply: pb.CreateGameResponse = await stub.CreateGame(request, metadata=bearer(organiser_key))
    return reply
