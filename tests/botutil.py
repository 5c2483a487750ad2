"""Async bots for the commit-integrity tests: legal moves, and the receipts they were given."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from feastlog.cli.wire import as_dict, bearer
from feastlog.replay.games.fold import state_hash
from feastlog.replay.record.audit import verify
from feastlog.replay.record.history import refold
from feastlog.service.store import StoredGame
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc
from feastlog.v1 import record_pb2

KEY = "org_commit-integrity-organiser-key-long-enough"
PLAYERS = {
    "bon-appetit": ["Ann", "Brian", "Celia"],
    "menu-masters": ["Ann", "Brian", "Celia"],
    "picky-eaters": ["Ann", "Brian", "Celia"],
}
KINDS = tuple(PLAYERS)


@dataclass(frozen=True)
class Ack:
    """An acknowledged command: what the server answered OK to."""

    game_id: str
    command_id: str
    seq: int
    hash: str


@dataclass(frozen=True)
class Move:
    """A seat to act, the seq its legal commands were computed at, and one of them."""

    seat: int
    token: str
    seq: int
    command: record_pb2.Command
    legal: tuple[record_pb2.Command, ...]


async def next_move(
    stub: pb_grpc.GameServiceAsyncStub, game_id: str, tokens: Sequence[str], rng: random.Random
) -> Move | None:
    """A random legal move of a random seat to act; None once the game is over."""
    while True:
        reply = await stub.GetView(pb.GetViewRequest(game_id=game_id))
        view = as_dict(reply.view)
        if view["over"]:
            return None
        to_act = [int(s) for s in view["to_act"]]
        moved_on = False
        for seat in rng.sample(to_act, len(to_act)):
            legal = await stub.ListLegalCommands(
                pb.ListLegalCommandsRequest(game_id=game_id), metadata=bearer(tokens[seat])
            )
            if legal.commands:
                choices = tuple(legal.commands)
                return Move(seat, tokens[seat], legal.seq, rng.choice(choices), choices)
            moved_on = moved_on or legal.seq != reply.seq
        # a command still landing can make the view stale; nothing to do on a fresh one is a bug
        assert moved_on, f"game {game_id} is not over but no seat to act has a legal command"


def submit_request(
    game_id: str, command_id: str, command: record_pb2.Command, expected_seq: int | None = None
) -> pb.SubmitCommandRequest:
    """A SubmitCommand request (with ``expected_seq`` when given)."""
    request = pb.SubmitCommandRequest(game_id=game_id, command_id=command_id, command=command)
    if expected_seq is not None:
        request.expected_seq = expected_seq
    return request


def check_stored(stored: StoredGame, acks: Sequence[Ack]) -> list[str]:
    """Every way a stored game falls short: gaps, forks, a bad chain, a lost acknowledgement."""
    problems = []
    rows = stored.rows
    game_id = rows[0].game_id
    if [r.seq for r in rows] != list(range(1, len(rows) + 1)):
        problems.append(f"{game_id}: seqs are not 1..{len(rows)}")
    ids = [r.command_id for r in rows if r.command_id]
    if len(ids) != len(set(ids)):
        problems.append(f"{game_id}: a command_id is stored twice")
    report = verify(rows, stored.pack_body, stored.server_seed)
    if not report.ok:
        problems.append(f"{game_id}: audit faults {report.faults}")
    by_id = {r.command_id: r for r in rows if r.command_id}
    for ack in acks:
        row = by_id.get(ack.command_id)
        if row is None or (row.seq, row.hash) != (ack.seq, ack.hash):
            problems.append(f"{game_id}: acknowledged {ack} is not in the log as answered")
    return problems


def refolded_state_hash(stored: StoredGame) -> str:
    """The state hash of the stored record refolded from scratch."""
    folded = refold(stored.rows, stored.server_seed, stored.pack_body)
    return state_hash(folded.tables[-1])
