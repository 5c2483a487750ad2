"""Records built without a server (seeded random legal play), and stored in DuckDB files."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from pathlib import Path

from feastlog.v1 import record_pb2
from replay import fold, games
from replay.fold import Table, state_hash
from replay.record import COMMAND, GENESIS, SEED_REVEAL, ZERO_HASH, Row, make_row
from replay.rng import seed_commitment
from service.store import Batch, NewGame, Store

NAMES = ("Ann", "Brian", "Celia", "Dev", "Eve", "Farid")


@dataclass
class Built:
    """A record and what folding it needs."""

    rows: list[Row]
    seed: bytes
    pack_bytes: bytes
    table: Table
    names: tuple[str, ...]


def build(
    kind: str = "bon-appetit",
    players: int = 3,
    seed_byte: int = 1,
    stop_after: int | None = None,
    game_id: str | None = None,
    rulings: dict[int, record_pb2.ArbiterCommand] | None = None,
) -> Built:
    """Play random legal commands from a fixed seed; rulings go in after the given seq."""
    engine = games.engine(kind)
    seed = bytes([seed_byte]) * 32
    pack_bytes = engine.default_pack_bytes()
    pack = engine.load_pack(pack_bytes)
    names = NAMES[:players]
    game_id = game_id or f"g_test{seed_byte:02d}{players}"
    genesis = record_pb2.Genesis(
        game_id=game_id,
        game_kind=kind,
        ruleset_version=engine.ruleset_version,
        pack_id=str(getattr(pack, "id", "")),
        pack_sha256=hashlib.sha256(pack_bytes).hexdigest(),
        seats=[record_pb2.SeatInfo(name=n) for n in names],
        options=dict(engine.option_defaults),
        seed_commitment=seed_commitment(seed),
        created_at=f"2026-01-01T00:00:{seed_byte:02d}Z",
    )
    table, _ = fold.start(genesis, seed, pack)
    body = genesis.SerializeToString(deterministic=True)
    rows = [
        make_row(
            game_id, 1, GENESIS, "server", body, genesis.created_at, ZERO_HASH, state_hash(table)
        )
    ]
    chooser = random.Random(seed_byte)
    sent = 0
    while not fold.is_over(table) and (stop_after is None or sent < stop_after):
        ruling = (rulings or {}).get(len(rows))
        if ruling is not None:
            actor, command = "arbiter", record_pb2.Command(arbiter=ruling)
        else:
            seat = chooser.choice(sorted(engine.to_act(table.game)))
            inner = chooser.choice(engine.legal_commands(table.game, seat))
            command = record_pb2.Command()
            getattr(command, engine.command_field).CopyFrom(inner)
            actor = f"seat:{seat}"
            sent += 1
        table, _ = fold.step(table, actor, command)
        rows.append(
            _next(rows[-1], COMMAND, actor, command.SerializeToString(), table, f"c{len(rows)}")
        )
    if fold.is_over(table):
        reveal = record_pb2.SeedReveal(server_seed=seed).SerializeToString()
        rows.append(_next(rows[-1], SEED_REVEAL, "server", reveal, table, ""))
    return Built(rows, seed, pack_bytes, table, names)


def _next(prev: Row, kind: str, actor: str, body: bytes, table: Table, command_id: str) -> Row:
    """The row after ``prev``."""
    return make_row(
        prev.game_id,
        prev.seq + 1,
        kind,
        actor,
        body,
        f"2026-01-01T00:01:{prev.seq:06d}Z",
        prev.hash,
        state_hash(table),
        command_id,
    )


def store_games(path: Path, built: list[Built]) -> None:
    """Write records into a DuckDB file as the service would."""
    store = Store(str(path))
    try:
        batch = Batch()
        for b in built:
            genesis = record_pb2.Genesis.FromString(b.rows[0].body)
            batch.games.append(
                NewGame(
                    b.rows[0],
                    [(n, hashlib.sha256(n.encode()).hexdigest()) for n in b.names],
                    b.seed,
                    genesis.pack_sha256,
                    genesis.game_kind,
                    genesis.pack_id,
                    b.pack_bytes,
                )
            )
            batch.rows += b.rows[1:]
        store.write(batch)
    finally:
        store.close()
