"""A command's fate is decided by its commit, never by the caller's deadline.

Clients that give up after 1-8 ms (a deadline, a cancellation) may miss the answer; the
command they sent is recorded or not, in memory and in the log alike, and the game goes on.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from feastlog.cli.wire import as_dict, bearer, new_game
from feastlog.replay.games.fold import state_hash
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc
from tests.botutil import (
    KINDS,
    PLAYERS,
    Ack,
    check_stored,
    next_move,
    refolded_state_hash,
    submit_request,
)
from tests.serverutil import ThreadedServer

SHORT_DEADLINES = 200


@dataclass
class Storm:
    """What the clients did and were told."""

    key: str  # the organiser's, to create games
    left: int = SHORT_DEADLINES
    acks: list[Ack] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)
    gave_up: list[tuple[str, str]] = field(default_factory=list)  # (game id, command id)
    games: dict[str, str] = field(default_factory=dict)  # game id -> "storm" or "healthy"
    healthy_commands: int = 0
    over: asyncio.Event = field(default_factory=asyncio.Event)


async def stormy_player(stub: pb_grpc.GameServiceAsyncStub, kind: str, storm: Storm, seed: int):
    """Play games of ``kind``, half the commands with a 1-8 ms deadline, until none are left."""
    rng = random.Random(seed)
    while storm.left > 0:
        game = await new_game(stub, storm.key, kind, PLAYERS[kind])
        storm.games[game.game_id] = "storm"
        tokens = [t.token for t in game.seat_tokens]
        while (move := await next_move(stub, game.game_id, tokens, rng)) is not None:
            request = submit_request(game.game_id, uuid.uuid4().hex, move.command, move.seq)
            meta = bearer(move.token)
            if storm.left > 0 and rng.random() < 0.5:
                storm.left -= 1
                try:
                    reply = await stub.SubmitCommand(
                        request, metadata=meta, timeout=rng.uniform(0.001, 0.008)
                    )
                except grpc.aio.AioRpcError as error:
                    storm.outcomes[f"short: {error.code().name}"] += 1
                    if error.code() == grpc.StatusCode.ABORTED:
                        continue  # in time to hear it was stale (a given-up one landed first)
                    assert error.code() in (
                        grpc.StatusCode.DEADLINE_EXCEEDED,
                        grpc.StatusCode.CANCELLED,
                    ), error
                    storm.gave_up.append((game.game_id, request.command_id))
                    if rng.random() < 0.5:
                        continue  # give up on it: look at the game afresh, then play on
                    # the same command again, no deadline: recorded once, whatever happened
                    try:
                        reply = await stub.SubmitCommand(request, metadata=meta)
                    except grpc.aio.AioRpcError as again:
                        # it was refused as stale: a command given up on before it landed
                        assert again.code() == grpc.StatusCode.ABORTED, again
                        storm.outcomes["retry: ABORTED (stale view)"] += 1
                        continue
                    storm.outcomes["retry: replayed" if reply.replayed else "retry: recorded"] += 1
                else:
                    storm.outcomes["short: OK"] += 1
            else:
                try:
                    reply = await stub.SubmitCommand(request, metadata=meta)
                except grpc.aio.AioRpcError as error:
                    # a command given up on a moment ago may still be recording: stale view
                    assert error.code() == grpc.StatusCode.ABORTED, error
                    storm.outcomes["normal: ABORTED (stale view after a short one)"] += 1
                    continue
                storm.outcomes["normal: OK"] += 1
            storm.acks.append(Ack(game.game_id, request.command_id, reply.seq, reply.hash))
    storm.over.set()


async def healthy_player(
    stub: pb_grpc.GameServiceAsyncStub, kind: str, storm: Storm, seed: int
) -> None:
    """Play whole games of ``kind`` with no deadline while the storm lasts: nothing may fail."""
    rng = random.Random(seed)
    while True:
        game = await new_game(stub, storm.key, kind, PLAYERS[kind])
        storm.games[game.game_id] = "healthy"
        tokens = [t.token for t in game.seat_tokens]
        while (move := await next_move(stub, game.game_id, tokens, rng)) is not None:
            request = submit_request(game.game_id, uuid.uuid4().hex, move.command, move.seq)
            reply = await stub.SubmitCommand(request, metadata=bearer(move.token))
            assert not reply.replayed
            storm.acks.append(Ack(game.game_id, request.command_id, reply.seq, reply.hash))
            storm.healthy_commands += 1
        if storm.over.is_set():
            return


async def run_storm(address: str, key: str) -> Storm:
    """Stormy and healthy players of every kind at once, over one channel each."""
    storm = Storm(key)
    channels = [grpc.aio.insecure_channel(address) for _ in range(2 * len(KINDS))]
    try:
        stubs = [pb_grpc.GameServiceStub(c) for c in channels]
        players = [stormy_player(stubs[i], kind, storm, seed=i) for i, kind in enumerate(KINDS)] + [
            healthy_player(stubs[len(KINDS) + i], kind, storm, seed=100 + i)
            for i, kind in enumerate(KINDS)
        ]
        await asyncio.wait_for(asyncio.gather(*players), timeout=240)
        for game_id, what in storm.games.items():
            view = as_dict((await stubs[0].GetView(pb.GetViewRequest(game_id=game_id))).view)
            assert view["over"], f"{what} game {game_id} did not reach its end"
    finally:
        for channel in channels:
            await channel.close()
    return storm


def test_short_deadlines_never_wedge_a_game_nor_touch_healthy_ones(tmp_path: Path) -> None:
    server = ThreadedServer(tmp_path / "deadlines.duckdb")
    try:
        storm = asyncio.run(run_storm(server.address, server.key))
        db, live_games = server.running.db, server.running.app.live
        problems: list[str] = []
        for game_id in storm.games:
            live = server.call(live_games.get(game_id))
            stored = server.call(db.call(db.store.load, game_id))
            assert stored is not None
            # memory equals the log: the same rows, and the log refolds to the state in memory
            assert [r.hash for r in live.rows] == [r.hash for r in stored.rows], game_id
            assert refolded_state_hash(stored) == state_hash(live.table), game_id
            problems += check_stored(stored, [a for a in storm.acks if a.game_id == game_id])
        logged = {
            r.command_id
            for game_id in storm.games
            for r in server.call(db.call(db.store.rows, game_id))
        }
    finally:
        server.stop()
    assert problems == []
    shorts = sum(n for what, n in storm.outcomes.items() if what.startswith("short"))
    assert shorts == SHORT_DEADLINES
    assert storm.outcomes["short: DEADLINE_EXCEEDED"] > 0  # the race was really run
    assert storm.healthy_commands > 0 and "healthy" in storm.games.values()
    recorded_anyway = sum(1 for _, cid in storm.gave_up if cid in logged)
    print(
        f"\n{shorts} short-deadline commands: {dict(storm.outcomes)}; "
        f"{len(storm.gave_up)} given up, {recorded_anyway} of them recorded all the same; "
        f"{len(storm.games)} games, {storm.healthy_commands} healthy commands, all OK"
    )
