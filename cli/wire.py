"""The wire: call metadata, Struct and ErrorInfo decoding, a spawned server, async bots
(the benchmarks drive a server with these; every request, theirs as the commands', is
built by ``feastlog.client``)."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

# The channels, the routing header, credentials and ErrorInfo are the client library's
# (``feastlog.client``): the CLI reaches a server the way any client does.
from feastlog.client import calls
from feastlog.client.aio import sent as send
from feastlog.client.channel import ROUTING_HEADER as ROUTING_HEADER
from feastlog.client.channel import Metadata as Metadata
from feastlog.client.channel import bearer as bearer
from feastlog.client.channel import open_blocking_channel as open_blocking_channel
from feastlog.client.channel import open_channel as open_channel
from feastlog.client.data import as_dict as as_dict
from feastlog.client.errors import error_info as error_info
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc


def spawn_server(
    db_path: Path | str, key: str, prelude: str = ""
) -> tuple[subprocess.Popen[str], str]:
    """``feastlog serve`` on port 0 in its own process: the process and its address.

    ``db_path``: a DuckDB file, or a PostgreSQL DSN; ``prelude``: Python run in that
    process first (a benchmark's setting of a constant, a test's fault hook).
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
    The calls are the client library's (``feastlog.client.calls``), each sent once on
    ``stub``; the views are a spectator's.
    """
    rng = random.Random(seed)
    sent = 0
    if await waiting_for_entropy(stub, game_id):
        for token in tokens:
            await send(stub, calls.join_game(game_id, os.urandom(32)), bearer(token))
    while True:
        view = (await send(stub, calls.view(game_id))).table
        if view.get("over"):
            return BotResult(game_id, view, sent)
        to_act = [int(s) for s in view.get("to_act", [])]
        if not to_act:
            raise RuntimeError(f"game {game_id} is not over but nobody is to act")
        for seat in to_act:
            meta = bearer(tokens[seat])
            legal = await send(stub, calls.legal(game_id), meta)
            if not legal.commands:
                continue
            command = rng.choice(legal.commands)
            submitted = calls.submit(game_id, command, legal.seq, typed_facts_only=True)
            await send(stub, submitted.unread(), meta)
            sent += 1


async def waiting_for_entropy(stub: pb_grpc.GameServiceAsyncStub, game_id: str) -> bool:
    """Whether a game still waits for seat entropy."""
    try:
        await send(stub, calls.view(game_id).unread())
    except grpc.aio.AioRpcError as error:
        if reason_of(error) == "WAITING_FOR_SEAT_ENTROPY":
            return True
        raise
    return False


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
    made = calls.create_game(
        kind, players, seed, options, content_pack, seat_entropy, tournament_id
    )
    return (await send(stub, made, bearer(organiser_key))).reply
