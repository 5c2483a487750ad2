"""Concurrent ``expected_seq`` and ``command_id`` races: exactly one winner, every time."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections import Counter
from collections.abc import Awaitable
from pathlib import Path

import grpc

from feastlog.cli.wire import bearer, new_game, reason_of
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc
from tests.botutil import KINDS, PLAYERS, Ack, Move, check_stored, next_move, submit_request
from tests.serverutil import ThreadedServer

RACED_MOVES = 15  # per game


async def outcome(
    call: Awaitable[pb.SubmitCommandResponse],
) -> tuple[str, pb.SubmitCommandResponse | None]:
    """How one racer ended ('won', 'replayed' or the error's reason) and its reply."""
    try:
        reply = await call
    except grpc.aio.AioRpcError as error:
        return reason_of(error) or error.code().name, None
    return ("replayed" if reply.replayed else "won"), reply


async def race(
    stubs: list[pb_grpc.GameServiceAsyncStub],
    token: str,
    requests: list[pb.SubmitCommandRequest],
) -> tuple[list[str], list[Ack]]:
    """Send every request at once, each on its own channel: the outcomes, and the winners."""
    ended = await asyncio.gather(
        *(
            outcome(stub.SubmitCommand(r, metadata=bearer(token)))
            for stub, r in zip(stubs, requests, strict=True)
        )
    )
    acks = [
        Ack(r.game_id, r.command_id, reply.seq, reply.hash)
        for r, (_, reply) in zip(requests, ended, strict=True)
        if reply is not None
    ]
    return [label for label, _ in ended], acks


def seq_racers(game_id: str, move: Move) -> list[pb.SubmitCommandRequest]:
    """Three legal commands of the seat to act, each with its own command_id, at one seq."""
    rng = random.Random(move.seq)
    return [
        submit_request(game_id, uuid.uuid4().hex, rng.choice(move.legal), move.seq)
        for _ in range(3)
    ]


def id_racers(game_id: str, move: Move) -> list[pb.SubmitCommandRequest]:
    """Four copies of one command under one command_id, half with expected_seq."""
    command_id = uuid.uuid4().hex
    return [
        submit_request(game_id, command_id, move.command, move.seq if i % 2 else None)
        for i in range(4)
    ]


def clash_racers(game_id: str, move: Move) -> list[pb.SubmitCommandRequest]:
    """Two different commands under one command_id."""
    command_id = uuid.uuid4().hex
    other = next(c for c in move.legal if c != move.command)
    return [submit_request(game_id, command_id, c) for c in (move.command, other)]


async def race_games(address: str, key: str) -> tuple[Counter[str], list[Ack], list[str]]:
    """One game per kind; its first moves raced three ways."""
    tally: Counter[str] = Counter()
    acks: list[Ack] = []
    channels = [grpc.aio.insecure_channel(address) for _ in range(4)]
    stubs = [pb_grpc.GameServiceStub(c) for c in channels]
    game_ids = []
    try:
        for kind in KINDS:
            game = await new_game(stubs[0], key, kind, PLAYERS[kind])
            game_ids.append(game.game_id)
            tokens = [t.token for t in game.seat_tokens]
            rng = random.Random(kind)
            moves = 0
            while (move := await next_move(stubs[0], game.game_id, tokens, rng)) is not None:
                moves += 1
                if moves > RACED_MOVES:
                    break
                kind_of_race = moves % 3
                if kind_of_race == 2 and all(c == move.command for c in move.legal):
                    kind_of_race = 0
                if kind_of_race == 0:
                    requests = seq_racers(game.game_id, move)
                    results, won = await race(stubs[:3], move.token, requests)
                    # exactly one winner; every loser told its view was stale
                    assert sorted(results) == ["STALE_EXPECTED_SEQ"] * 2 + ["won"], results
                    tally["expected_seq races"] += 1
                elif kind_of_race == 1:
                    requests = id_racers(game.game_id, move)
                    results, won = await race(stubs, move.token, requests)
                    # one recorded it; every other copy, at once or late, is answered replayed
                    assert sorted(results) == ["replayed"] * 3 + ["won"], results
                    late, _ = await outcome(
                        stubs[0].SubmitCommand(requests[0], metadata=bearer(move.token))
                    )
                    assert late == "replayed"
                    assert len({(a.seq, a.hash) for a in won}) == 1
                    tally["retries answered replayed"] += results.count("replayed") + 1
                    tally["command_id races"] += 1
                else:
                    requests = clash_racers(game.game_id, move)
                    results, won = await race(stubs[:2], move.token, requests)
                    assert sorted(results) == ["COMMAND_ID_REUSED", "won"], results
                    tally["command_id clashes"] += 1
                tally["winners"] += results.count("won")
                acks += won
    finally:
        for channel in channels:
            await channel.close()
    return tally, acks, game_ids


def test_concurrent_races_have_exactly_one_winner_and_retries_are_replayed(
    tmp_path: Path,
) -> None:
    server = ThreadedServer(tmp_path / "races.duckdb")
    try:
        tally, acks, game_ids = asyncio.run(race_games(server.address, server.key))
        db = server.running.db
        problems = []
        for game_id in game_ids:
            stored = server.call(db.call(db.store.load, game_id))
            assert stored is not None and len(stored.rows) == 1 + RACED_MOVES
            problems += check_stored(stored, [a for a in acks if a.game_id == game_id])
    finally:
        server.stop()
    assert problems == []
    races = tally["expected_seq races"] + tally["command_id races"] + tally["command_id clashes"]
    assert races == RACED_MOVES * len(KINDS)
    assert tally["winners"] == races
    assert min(tally[k] for k in ("expected_seq races", "command_id races")) > 0
    print(f"\nraces: {dict(tally)}")
