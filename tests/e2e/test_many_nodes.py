"""Many nodes, one log: 32 bot games of every kind at once through nginx across two nodes on
one PostgreSQL database; one node is killed with kill -9 mid-load and started again.

Nothing acknowledged is lost, nothing forks, nothing is stored twice, every game ends and
audits clean. Meanwhile watchers on the node that stays up see every row of every game,
those written through the other node included; seat-entropy joins, a ruling and a close
are sent to the other node than the one their game is played on.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import grpc

from feastlog.cli.wire import bearer, new_game, open_channel, reason_of
from feastlog.service.store.postgres import PgStore
from feastlog.v1 import audit_service_pb2 as apb
from feastlog.v1 import audit_service_pb2_grpc as apb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc
from feastlog.v1 import record_pb2
from scripts.cluster import free_port, start_nginx, start_node, stop_process
from tests.botutil import KINDS, Ack, Move, check_stored, next_move, submit_request
from tests.e2e.test_cluster import needs_cluster_programs
from tests.pgutil import empty_database

KEY = "org_many-nodes-organiser-key-long-enough"
GAMES = 32
PLAYERS = {"bon-appetit": 3, "menu-masters": 2, "picky-eaters": 2}
NAMES = ["Ann", "Brian", "Celia"]
ENTROPY_GAMES = (2, 5)  # created waiting for seat entropy; seats join on both nodes
RULED_GAME, CLOSED_GAME = 0, 4  # a note, a close: sent to the other node
T = TypeVar("T")


@dataclass
class Nodes:
    """Two nodes on one database, nginx in front; node 0 is killed and started again."""

    dsn: str
    folder: Path
    ports: list[int] = field(default_factory=list)
    pids: list[int] = field(default_factory=list)
    nginx: int = 0
    address: str = ""
    kills: int = 0

    def start(self) -> None:
        for i in range(2):
            pid, port = start_node(self.dsn, KEY, self.folder, i + 1)
            self.pids.append(pid)
            self.ports.append(port)
        front = free_port()
        self.nginx = start_nginx(self.folder / "nginx", front, self.ports)
        self.address = f"127.0.0.1:{front}"

    async def kill_and_restart(self) -> None:
        """kill -9 node 0, then start it again on its port (nginx meanwhile uses node 1)."""
        os.kill(self.pids[0], signal.SIGKILL)
        await asyncio.to_thread(os.waitpid, self.pids[0], 0)
        self.kills += 1
        await asyncio.sleep(1.0)
        pid, _ = await asyncio.to_thread(start_node, self.dsn, KEY, self.folder, 1, self.ports[0])
        self.pids[0] = pid

    def stop(self) -> None:
        if self.nginx:
            stop_process(self.nginx, signal.SIGQUIT)
        for pid in self.pids:
            stop_process(pid)


@dataclass
class Load:
    """What the bots were told, and how calls cut by the kill turned out."""

    acks: list[Ack] = field(default_factory=list)
    games: dict[int, str] = field(default_factory=dict)
    cut: Counter[str] = field(default_factory=Counter)
    watched: dict[str, list[tuple[int, str]]] = field(default_factory=dict)


async def through_cuts(load: Load, call: Callable[[], Awaitable[T]]) -> T:
    """Make a call; a transport failure (a node killed under it: no feastlog reason) is
    made again, a bounded number of times."""
    for attempt in range(200):
        try:
            return await call()
        except grpc.aio.AioRpcError as error:
            if reason_of(error) or attempt == 199:
                raise
            load.cut[error.code().name] += 1
            await asyncio.sleep(0.05)
    raise AssertionError("unreachable")


async def watch(stub: pb_grpc.GameServiceAsyncStub, load: Load, game_id: str) -> None:
    """Every row of a game, as a spectator of node 1 sees it, until the game ends."""
    seen = load.watched.setdefault(game_id, [])
    async for reply in stub.WatchGame(pb.WatchGameRequest(game_id=game_id, from_seq=1)):
        seen.append((reply.event.seq, reply.event.hash))


@dataclass
class Other:
    """Stubs straight to node 1 (the node that stays up)."""

    games: pb_grpc.GameServiceAsyncStub
    audit: apb_grpc.AuditServiceAsyncStub


async def join(load: Load, stub: pb_grpc.GameServiceAsyncStub, game_id: str, token: str) -> None:
    """One seat's entropy, sent to the node ``stub`` talks to."""
    request = pb.JoinGameRequest(game_id=game_id, entropy=os.urandom(16))
    await through_cuts(load, lambda: stub.JoinGame(request, metadata=bearer(token)))


async def submit(
    load: Load, stub: pb_grpc.GameServiceAsyncStub, move: Move, game_id: str
) -> pb.SubmitCommandResponse:
    """A move, at the seq it was chosen at; after a cut, the same command_id again."""
    request = submit_request(game_id, uuid.uuid4().hex, move.command, move.seq)
    reply = await through_cuts(
        load, lambda: stub.SubmitCommand(request, metadata=bearer(move.token), timeout=30)
    )
    load.acks.append(Ack(game_id, request.command_id, reply.seq, reply.hash))
    return reply


async def rule(load: Load, other: Other, game_id: str, ruling: record_pb2.ArbiterCommand) -> None:
    """A ruling, sent to node 1 whichever node the game is played on."""
    request = apb.SubmitRulingRequest(game_id=game_id, command_id="ruling-1", ruling=ruling)
    await through_cuts(load, lambda: other.audit.SubmitRuling(request, metadata=bearer(KEY)))


async def play(i: int, load: Load, front: pb_grpc.GameServiceAsyncStub, other: Other) -> None:
    """Create game ``i`` through nginx and play it to its end with random legal moves."""
    kind = KINDS[i % len(KINDS)]
    names = NAMES[: PLAYERS[kind]]
    entropy = i in ENTROPY_GAMES
    game = await through_cuts(load, lambda: new_game(front, KEY, kind, names, seat_entropy=entropy))
    game_id, tokens = game.game_id, [t.token for t in game.seat_tokens]
    load.games[i] = game_id
    if entropy:  # seat by seat, on node 1 and through nginx in turn
        for seat, token in enumerate(tokens):
            await join(load, other.games if seat % 2 else front, game_id, token)
    watcher = asyncio.create_task(watch(other.games, load, game_id))
    rng = random.Random(i)
    sent = 0
    while True:
        move = await through_cuts(
            load, lambda: next_move(front, game_id=game_id, tokens=tokens, rng=rng)
        )
        if move is None:
            break
        try:
            await submit(load, front, move, game_id)
        except grpc.aio.AioRpcError as error:
            # a stale view is the client's to refresh (a retried command never gets this:
            # this bot alone moves this game, so its retry either finds its row or fits)
            assert reason_of(error) in {"STALE_EXPECTED_SEQ", "RULE_VIOLATION"}, error
            load.cut[f"refused: {reason_of(error)}"] += 1
            continue
        sent += 1
        if sent == 6 and i in (RULED_GAME, CLOSED_GAME):  # the arbiter, on the other node
            ruling = record_pb2.ArbiterCommand(reason="table 4")
            if i == RULED_GAME:
                ruling.note.text = "clock stopped"
            else:
                ruling.close_game.SetInParent()
            await rule(load, other, game_id, ruling)
            if i == CLOSED_GAME:
                break  # closed: no more moves (its view's "over" is the game's own end)
    await asyncio.wait_for(watcher, 60)


async def run(nodes: Nodes) -> Load:
    """The bots, the watchers and the kill, at once."""
    load = Load()
    async with (
        open_channel(nodes.address) as channel,
        open_channel(f"127.0.0.1:{nodes.ports[1]}") as direct,
    ):
        front = pb_grpc.GameServiceStub(channel)
        other = Other(pb_grpc.GameServiceStub(direct), apb_grpc.AuditServiceStub(direct))
        bots = asyncio.gather(*(play(i, load, front, other) for i in range(GAMES)))
        while len(load.acks) < 400 and not bots.done():
            await asyncio.sleep(0.05)
        await nodes.kill_and_restart()
        await asyncio.wait_for(bots, 150)
    return load


def test_two_nodes_through_nginx_survive_a_kill_9_and_watchers_see_every_row(
    tmp_path: Path,
) -> None:
    needs_cluster_programs()
    nodes = Nodes(empty_database("many-nodes"), tmp_path)
    nodes.start()
    try:
        load = asyncio.run(run(nodes))
    finally:
        nodes.stop()
    store = PgStore(nodes.dsn, read_only=True)
    try:
        stored = {g: store.load(g) for g in load.games.values()}
    finally:
        store.close()
    problems = []
    for game_id, record in stored.items():
        assert record is not None
        problems += check_stored(record, [a for a in load.acks if a.game_id == game_id])
        if record.rows[-1].kind != "seed_reveal":
            problems.append(f"{game_id} did not reach its end")
        seen = load.watched.get(game_id, [])
        if seen != [(r.seq, r.hash) for r in record.rows]:
            problems.append(f"{game_id}: the watcher on node 2 saw {len(seen)} rows")
    print(
        f"\n{len(load.games)} games, {len(load.acks)} acknowledged commands, "
        f"{nodes.kills} kill, cut calls {dict(load.cut)}"
    )
    assert problems == []
    assert len(load.games) == GAMES and nodes.kills == 1
    submits = [
        line.split()[1]
        for line in (tmp_path / "nginx" / "access.log").read_text().splitlines()
        if "/SubmitCommand" in line
    ]
    # both nodes took commands, so the watchers on node 2 saw rows written through node 1
    assert {f"127.0.0.1:{port}" for port in nodes.ports} <= set(submits)
    ruled, closed = stored[load.games[RULED_GAME]], stored[load.games[CLOSED_GAME]]
    assert ruled is not None and [r.actor for r in ruled.rows].count("arbiter") == 1
    assert closed is not None and closed.rows[-2].actor == "arbiter"  # closed, then revealed
