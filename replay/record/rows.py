"""The record: rows, their canonical bytes and the hash chain (DESIGN.md section 2).

A record's format version is in its genesis (``Genesis.record_version``; 0 means 1), and
every row of the record is read under it (docs/record-format.md gives the exact bytes).

Version 1: a row's canonical bytes are the canonical JSON (sorted keys, compact, ASCII) of
``{"actor", "body", "command_id", "game_id", "kind", "recorded_at", "seq", "state_hash"}``
with ``body`` as lower-case hex of the stored protobuf bytes.  Because the hash covers the
body, anyone can test a guess about a sealed command against a public hash.

Version 2: the body and the client's ``command_id`` enter the chain only through the row's
``commitment = sha256(salt || canonical JSON of {"body", "command_id"})``.  A command row's
salt is ``HMAC-SHA256(key=server_seed, msg="row-salt" || uint32_be(len(game_id)) || game_id
|| uint64_be(seq))``: nobody can compute it before the seed is revealed, so nobody can test
a guess.  Genesis and seed-reveal rows hold nothing secret and have an empty salt, so anyone
can check them at once.  The canonical bytes are those of ``{"actor", "commitment",
"game_id", "kind", "recorded_at", "seq", "state_hash"}``: the chain's links can be checked
by anyone before the reveal; the commitments of command rows after it.

In both versions ``hash = sha256(bytes.fromhex(prev_hash) || canonical bytes)``; genesis
has an all-zero ``prev_hash``.  Changing, inserting, deleting or reordering any row breaks
the chain.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass

from feastlog.replay.games.engine import evolve
from feastlog.replay.games.text import plain_number
from feastlog.replay.record.canonical import canonical_fields, canonical_object
from feastlog.replay.record.rng import hmac_sha256

ZERO_HASH = "00" * 32

GENESIS = "genesis"
COMMAND = "command"
SEED_REVEAL = "seed_reveal"
ROW_KINDS = (GENESIS, COMMAND, SEED_REVEAL)

SERVER = "server"
ARBITER = "arbiter"

# Record format versions this build reads; new games are written in the last one.
FORMAT_1 = 1
FORMAT_2 = 2
VERSIONS = (FORMAT_1, FORMAT_2)
CURRENT_VERSION = FORMAT_2

SALT_LABEL = b"row-salt"

# The highest seq: seqs are int64 in the store and on the wire (a row's salt takes a uint64).
MAX_SEQ = 2**63 - 1


def seat_actor(seat: int) -> str:
    """The actor name of a seat: ``seat:N``."""
    return f"seat:{seat}"


def actor_seat(actor: str) -> int | None:
    """The seat of an actor name, or None for the server, the arbiter (or any other name)."""
    return plain_number(actor[5:]) if actor.startswith("seat:") else None


def salted(kind: str) -> bool:
    """Whether rows of this kind are committed with a secret salt (format 2): commands."""
    return kind == COMMAND


def row_salt(server_seed: bytes, game_id: str, seq: int) -> bytes:
    """The salt of command row ``seq``: HMAC-SHA256 of the server seed; 32 bytes.

    The game id is in it so that games dealt from one supplied seed (duplicate tables)
    do not share salts: one table's reveal must not open another's sealed commands.
    ValueError for a seq no uint64 holds, or a game id that is not UTF-8 text.
    """
    if not 0 <= seq < 2**64:
        raise ValueError(f"seq {seq} has no salt: it is not a uint64")
    name = game_id.encode("utf-8")
    msg = SALT_LABEL + struct.pack(">I", len(name)) + name + struct.pack(">Q", seq)
    return hmac_sha256(server_seed, msg)


def commitment_of(salt: bytes, body: bytes, command_id: str) -> str:
    """sha256(salt || canonical JSON of {"body", "command_id"}), as hex."""
    committed = canonical_object((("body", body), ("command_id", command_id)))
    return hashlib.sha256(salt + committed).hexdigest()


# The fields of a row's canonical bytes in each format version (format 2: the commitment
# in place of body and command_id), in sorted order as canonical JSON writes them.
_KEYS_1 = ("actor", "body", "command_id", "game_id", "kind", "recorded_at", "seq", "state_hash")
_KEYS_2 = ("actor", "commitment", "game_id", "kind", "recorded_at", "seq", "state_hash")
_CANONICAL_KEYS = {FORMAT_1: _KEYS_1, FORMAT_2: _KEYS_2}


@dataclass(frozen=True)
class Row:
    """One row of a game's record (``commitment`` is empty in format 1)."""

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
    commitment: str = ""

    def canonical(self, version: int) -> bytes:
        """The bytes the chain hash covers under the record's format ``version``."""
        keys = _CANONICAL_KEYS.get(version)
        if keys is None:
            raise ValueError(f"record format version {version} is unknown to this build")
        return canonical_fields(self, keys)

    def expected_hash(self, version: int) -> str:
        """The hash this row must carry given its ``prev_hash``."""
        return chain_hash(self.prev_hash, self.canonical(version))

    def opens(self, salt: bytes) -> bool:
        """Whether body and command_id match the commitment under ``salt`` (format 2)."""
        return commitment_of(salt, self.body, self.command_id) == self.commitment


def chain_hash(prev_hash: str, canonical: bytes) -> str:
    """sha256(prev_hash bytes || canonical row bytes), as hex; ValueError for a prev_hash
    that is not hex."""
    return hashlib.sha256(bytes.fromhex(prev_hash) + canonical).hexdigest()


def salt_for(row: Row, server_seed: bytes | None) -> bytes | None:
    """The salt a format-2 row was committed with; None for a command row without the seed."""
    if not salted(row.kind):
        return b""
    return None if server_seed is None else row_salt(server_seed, row.game_id, row.seq)


def seal(row: Row, prev_hash: str, version: int, server_seed: bytes | None = None) -> Row:
    """The row with its commitment (format 2), ``prev_hash`` and chain hash computed."""
    commitment = ""
    if version == FORMAT_2:
        salt = salt_for(row, server_seed)
        if salt is None:
            raise ValueError("a format-2 command row is committed with the server seed")
        commitment = commitment_of(salt, row.body, row.command_id)
    linked = evolve(row, prev_hash=prev_hash, hash="", commitment=commitment)
    return evolve(linked, hash=linked.expected_hash(version))


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
    *,
    version: int,
    server_seed: bytes | None = None,
) -> Row:
    """A new sealed row of a record in format ``version`` (format 2 commands need the seed)."""
    row = Row(game_id, seq, kind, actor, command_id, body, recorded_at, prev_hash, "", state_hash)
    return seal(row, prev_hash, version, server_seed)
