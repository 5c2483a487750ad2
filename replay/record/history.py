"""A stored record folded row by row: the table and the facts after every row.

The service folds a game once when it first needs it and then keeps it live; replays,
exports and audits use the same function, so there is one fold.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from feastlog.replay import games
from feastlog.replay.games import fold
from feastlog.replay.games.engine import Engine, Fact
from feastlog.replay.games.fold import Table
from feastlog.replay.record.rng import seed_commitment
from feastlog.replay.record.rows import (
    COMMAND,
    CURRENT_VERSION,
    FORMAT_1,
    GENESIS,
    SEED_REVEAL,
    SERVER,
    ZERO_HASH,
    Row,
    make_row,
)
from feastlog.replay.table import desk
from feastlog.v1 import record_pb2


@dataclass(frozen=True)
class Folded:
    """A record folded: ``tables[i]`` and ``facts[i]`` belong to ``rows[i]`` (seq i + 1)."""

    genesis: record_pb2.Genesis
    pack: Any
    rows: tuple[Row, ...]
    tables: tuple[Table, ...]
    facts: tuple[tuple[Fact, ...], ...]


def genesis_of(row: Row) -> record_pb2.Genesis:
    """Decode a genesis row."""
    return record_pb2.Genesis.FromString(row.body)


def first_genesis(rows: Sequence[Row]) -> record_pb2.Genesis:
    """The genesis a record starts with: ValueError when it starts with none, DecodeError
    when its body does not decode."""
    if not rows or rows[0].kind != GENESIS:
        raise ValueError("a record starts with its genesis row")
    return genesis_of(rows[0])


def record_version(genesis: record_pb2.Genesis) -> int:
    """The record's format version: the genesis field, where 0 (absent) means format 1."""
    return genesis.record_version or FORMAT_1


def command_of(row: Row) -> record_pb2.Command:
    """Decode a command row."""
    return record_pb2.Command.FromString(row.body)


def seed_of(row: Row) -> bytes:
    """Decode a seed reveal row."""
    return record_pb2.SeedReveal.FromString(row.body).server_seed


def revealed_seed(rows: Sequence[Row]) -> bytes | None:
    """The server seed of a finished record, from its reveal row."""
    return seed_of(rows[-1]) if rows and rows[-1].kind == SEED_REVEAL else None


def apply_row(
    engine: Engine, table: Table, row: Row, earlier: Sequence[Table] = ()
) -> tuple[Table, list[Fact]]:
    """The table after one row that follows the genesis; ``earlier``: the tables after
    every row before it (what a call or a rewind folds with, ``replay/table/desk.py``)."""
    if row.kind == COMMAND:
        at = desk.At(row.seq, earlier, row.recorded_at) if len(earlier) == row.seq - 1 else None
        return fold.step(engine, table, row.actor, command_of(row), at)
    if row.kind == SEED_REVEAL:
        return table, [{"type": "seed_revealed", "server_seed": seed_of(row).hex()}]
    raise ValueError(f"row {row.seq}: a {row.kind} row can only come first")


def new_genesis(
    game_id: str,
    kind: str,
    names: Sequence[str],
    options: Mapping[str, str],
    pack_bytes: bytes,
    pack: Any,
    server_seed: bytes,
    created_at: str,
    seed_supplied: bool = False,
    tournament_id: str = "",
    version: int = CURRENT_VERSION,
    server_key: str = "",
) -> record_pb2.Genesis:
    """A genesis row's content: every option spelled out, the seed only as its commitment."""
    spec = games.engine(kind).spec
    return record_pb2.Genesis(
        game_id=game_id,
        game_kind=kind,
        ruleset_version=spec.ruleset_version,
        pack_id=str(getattr(pack, "id", "")),
        pack_sha256=hashlib.sha256(pack_bytes).hexdigest(),
        seats=[record_pb2.SeatInfo(name=n) for n in names],
        options={**spec.option_defaults, **options},
        seed_commitment=seed_commitment(server_seed),
        seed_supplied=seed_supplied,
        tournament_id=tournament_id,
        created_at=created_at,
        # format 1 leaves the field out, so its genesis bytes are what earlier builds wrote
        record_version=0 if version == FORMAT_1 else version,
        server_key=server_key,  # the key that signs its receipts (empty: none)
    )


def first_row(genesis: record_pb2.Genesis, state_hash: str, version: int) -> Row:
    """A record's first row (a game's or a tournament's): the genesis's deterministic
    bytes, seq 1 from the server at its ``created_at``, chained to the all-zero hash."""
    body = genesis.SerializeToString(deterministic=True)
    return make_row(
        genesis.game_id,
        1,
        GENESIS,
        SERVER,
        body,
        genesis.created_at,
        ZERO_HASH,
        state_hash,
        version=version,
    )


def begin(
    genesis: record_pb2.Genesis, server_seed: bytes, pack: Any
) -> tuple[Row, Table, list[Fact]]:
    """Set a game up: its genesis row, the table after setup, the facts of setting up."""
    table, facts = fold.start(genesis, server_seed, pack)
    row = first_row(genesis, fold.state_hash(table), record_version(genesis))
    return row, table, facts


def refold(rows: Sequence[Row], server_seed: bytes, pack_bytes: bytes) -> Folded:
    """Fold a record from its genesis; raises if a row does not apply."""
    genesis = first_genesis(rows)
    engine = fold.engine_of(genesis)
    pack = fold.loaded_pack(engine, pack_bytes)
    table, facts = fold.start(genesis, server_seed, pack)
    tables, all_facts = [table], [tuple(facts)]
    for row in rows[1:]:
        table, facts = apply_row(engine, table, row, tables)
        tables.append(table)
        all_facts.append(tuple(facts))
    return Folded(genesis, pack, tuple(rows), tuple(tables), tuple(all_facts))
