"""The record: rows, their canonical bytes and the hash chain (DESIGN.md section 2).

A row's canonical bytes are the canonical JSON (sorted keys, compact, ASCII) of
``{"actor", "body", "command_id", "game_id", "kind", "recorded_at", "seq", "state_hash"}``
with ``body`` as lower-case hex of the stored protobuf bytes.
``hash = sha256(bytes.fromhex(prev_hash) || canonical bytes)``; genesis has an all-zero
``prev_hash``.  Changing, inserting, deleting or reordering any row breaks the chain.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

from replay.canonical import canonical_bytes

ZERO_HASH = "00" * 32

GENESIS = "genesis"
COMMAND = "command"
SEED_REVEAL = "seed_reveal"
ROW_KINDS = (GENESIS, COMMAND, SEED_REVEAL)

SERVER = "server"
ARBITER = "arbiter"


def seat_actor(seat: int) -> str:
    """The actor name of a seat: ``seat:N``."""
    return f"seat:{seat}"


def actor_seat(actor: str) -> int | None:
    """The seat of an actor name, or None for the server and the arbiter."""
    return int(actor[5:]) if actor.startswith("seat:") else None


@dataclass(frozen=True)
class Row:
    """One row of a game's record."""

    game_id: str
    seq: int
    kind: str
    actor: str
    command_id: str
    body: bytes
    recorded_at: str
    prev_hash: str
    hash: str
    state_hash: str

    def canonical(self) -> bytes:
        """The bytes the chain hash covers (everything but the two hashes of the chain)."""
        return canonical_bytes(
            {
                "actor": self.actor,
                "body": self.body,
                "command_id": self.command_id,
                "game_id": self.game_id,
                "kind": self.kind,
                "recorded_at": self.recorded_at,
                "seq": self.seq,
                "state_hash": self.state_hash,
            }
        )

    def expected_hash(self) -> str:
        """The hash this row must carry given its ``prev_hash``."""
        return chain_hash(self.prev_hash, self.canonical())


def chain_hash(prev_hash: str, canonical: bytes) -> str:
    """sha256(prev_hash bytes || canonical row bytes), as hex."""
    return hashlib.sha256(bytes.fromhex(prev_hash) + canonical).hexdigest()


def seal(row: Row, prev_hash: str) -> Row:
    """The row with ``prev_hash`` set and its chain hash computed."""
    linked = replace(row, prev_hash=prev_hash, hash="")
    return replace(linked, hash=linked.expected_hash())


def make_row(
    game_id: str,
    seq: int,
    kind: str,
    actor: str,
    body: bytes,
    recorded_at: str,
    prev_hash: str,
    state_hash: str,
    command_id: str = "",
) -> Row:
    """A new sealed row."""
    row = Row(game_id, seq, kind, actor, command_id, body, recorded_at, prev_hash, "", state_hash)
    return seal(row, prev_hash)
