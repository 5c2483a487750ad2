"""kill -9 under concurrent bot games of every kind: nothing acknowledged is lost, nothing forks.

By default a few kills in a few seconds; ``FEASTLOG_SOAK_SECONDS`` (keep playing new games
and killing for that long) and ``FEASTLOG_SOAK_KILLS`` (at least that many kills) run it
longer, for example ``FEASTLOG_SOAK_SECONDS=300 python -m pytest tests/e2e/test_kill_soak.py -s``.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TypeVar

import grpc
from click.testing import CliRunner

from feastlog.cli.main import cli
from feastlog.cli.wire import bearer, new_game, reason_of
from feastlog.service.store.duckdb import Store
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc
from tests.botutil import KINDS, PLAYERS, Ack, check_stored, next_move, submit_request
from tests.serverutil import ProcessServer

KEY = "org_soak-organiser-key-of-the-required-length"
SECONDS = float(os.environ.get("FEASTLOG_SOAK_SECONDS", "0"))
KILLS = int(os.environ.get("FEASTLOG_SOAK_KILLS", "3"))
GAMES_PER_KIND = 1

T = TypeVar("T")


class Server:
    """``feastlog serve`` on one file, killed with SIGKILL and started again."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.process: ProcessServer | None = None
        self.stub: pb_grpc.GameServiceAsyncStub | None = None
        self.channels: list[grpc.aio.Channel] = []
        self.generation = 0
        self.up = asyncio.Event()

    async def start(self) -> None:
        """Start the server and connect to it."""
        self.process = await asyncio.to_thread(ProcessServer, self.db, KEY)
        channel = grpc.aio.insecure_channel(self.process.address)
        self.channels.append(channel)
        self.stub = pb_grpc.GameServiceStub(channel)
        self.generation += 1
        self.up.set()

    async def kill(self) -> None:
        """kill -9, at whatever moment this is."""
        assert self.process is not None
        self.up.clear()  # before the kill: a call failing from now on was cut by it
        await asyncio.to_thread(self.process.kill)
        for pipe in (self.process.proc.stdout, self.process.proc.stderr):
            if pipe is not None:
                pipe.close()

    async def current(self) -> tuple[pb_grpc.GameServiceAsyncStub, int]:
        """The live server's stub and its generation, once it is up."""
        await self.up.wait()
        assert self.stub is not None
        return self.stub, self.generation

    def cut(self, error: grpc.aio.AioRpcError, generation: int) -> bool:
        """Whether ``error`` came from a kill (never from a server that answered)."""
        killed = self.generation != generation or not self.up.is_set()
        return killed and not reason_of(error)

    async def close(self) -> None:
        """Close every channel."""
        for channel in self.channels:
            await channel.close()


@dataclass
class Soak:
    """What happened: kills, receipts, and how calls cut by a kill turned out."""

    acks: list[Ack] = field(default_factory=list)
    games: list[str] = field(default_factory=list)
    kills: int = 0
    cut: Counter[str] = field(default_factory=Counter)
    killing: bool = True


async def call_through_kills(
    server: Server, soak: Soak, call: Callable[[pb_grpc.GameServiceAsyncStub], Awaitable[T]]
) -> T:
    """Make ``call(stub)``; when a kill cuts it, make it again on the restarted server."""
    while True:
        stub, generation = await server.current()
        try:
            return await call(stub)
        except grpc.aio.AioRpcError as error:
            if not server.cut(error, generation):
                raise
            soak.cut[error.code().name] += 1


async def play(server: Server, soak: Soak, kind: str, seed: int) -> None:
    """Play games of ``kind`` to their ends through kills, while the killing goes on."""
    rng = random.Random(seed)
    while True:
        create = partial(new_game, organiser_key=KEY, kind=kind, players=PLAYERS[kind])
        game = await call_through_kills(server, soak, create)
        soak.games.append(game.game_id)
        tokens = [t.token for t in game.seat_tokens]
        look = partial(next_move, game_id=game.game_id, tokens=tokens, rng=rng)
        while True:
            move = await call_through_kills(server, soak, look)
            if move is None:
                break
            request = submit_request(game.game_id, uuid.uuid4().hex, move.command, move.seq)
            reply = await submit_through_kills(server, soak, request, move.token)
            soak.acks.append(Ack(game.game_id, request.command_id, reply.seq, reply.hash))
        if not soak.killing:
            return


async def submit_through_kills(
    server: Server, soak: Soak, request: pb.SubmitCommandRequest, token: str
) -> pb.SubmitCommandResponse:
    """Submit; after a kill, the same command_id again: recorded once, either way."""
    cut = False
    while True:
        stub, generation = await server.current()
        try:
            reply = await stub.SubmitCommand(request, metadata=bearer(token), timeout=30)
        except grpc.aio.AioRpcError as error:
            if not server.cut(error, generation):
                raise
            cut = True
            continue
        if cut:
            outcome = "replayed" if reply.replayed else "recorded"
            soak.cut[f"submits cut, then {outcome}"] += 1
        return reply


async def kill_again_and_again(server: Server, soak: Soak, seed: int) -> None:
    """kill -9 at random moments, and start again, for long enough."""
    rng = random.Random(seed)
    until = time.monotonic() + SECONDS
    while soak.kills < KILLS or time.monotonic() < until:
        await asyncio.sleep(rng.uniform(0.2, 0.9))
        await server.kill()
        soak.kills += 1
        await server.start()
    soak.killing = False


async def soak_run(db: Path) -> Soak:
    """Bots of every kind and a killer, at once; then a last kill -9."""
    soak = Soak()
    server = Server(db)
    await server.start()
    try:
        bots = [
            play(server, soak, kind, seed=10 * i + j)
            for i, kind in enumerate(KINDS)
            for j in range(GAMES_PER_KIND)
        ]
        await asyncio.wait_for(
            asyncio.gather(kill_again_and_again(server, soak, seed=7), *bots),
            timeout=SECONDS + 300,
        )
        await server.kill()
        soak.kills += 1
    finally:
        if server.up.is_set():
            await server.kill()
        await server.close()
    return soak


def test_kill_9_at_random_moments_loses_no_acknowledged_command(tmp_path: Path) -> None:
    db = tmp_path / "soak.duckdb"
    soak = asyncio.run(soak_run(db))
    store = Store(str(db), read_only=True)
    try:
        stored = {g: store.load(g) for g in store.game_ids()}
    finally:
        store.close()
    problems, lost = [], 0
    for game_id in soak.games:
        record = stored.pop(game_id)
        assert record is not None
        acks = [a for a in soak.acks if a.game_id == game_id]
        found = check_stored(record, acks)
        lost += sum(1 for p in found if "acknowledged" in p)
        problems += found
        if record.rows[-1].kind != "seed_reveal":
            problems.append(f"{game_id} did not reach its end")
    # a game whose creation a kill cut before the answer: its genesis at most, never a move
    unanswered = [g for g, r in stored.items() if r is None or len(r.rows) != 1]
    audit = CliRunner().invoke(cli, ["audit", "--all", "--json", "--db", str(db)])
    print(
        f"\nkill -9 soak: {soak.kills} kills, {len(soak.games)} games, "
        f"{len(soak.acks)} acknowledged commands, {lost} lost, "
        f"{len(problems)} problems (gaps, forks, chain), cut calls {dict(soak.cut)}, "
        f"{len(stored)} creations cut before their answer"
    )
    assert problems == [] and lost == 0
    assert unanswered == []
    assert audit.exit_code == 0, audit.output
    assert soak.kills >= KILLS + 1
    assert len(soak.games) >= GAMES_PER_KIND * len(KINDS)
