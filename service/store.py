"""The DuckDB event store: the only module that speaks to DuckDB.

Tables:
- ``events``: every game's rows (genesis, commands, seed reveal), keyed by (game_id, seq),
  each under its record's format version (the ``commitment`` column is empty in format 1);
- ``rejections``: refused commands, outside the chain;
- ``seats``: seat names and the sha256 of each seat token (never the token);
- ``seeds``: each game's server seed, kept out of the rows until the reveal row;
- ``packs``: content packs by sha256, so every record can be refolded and exported;
- ``pending_games`` and ``seat_entropy``: games created with seat entropy that wait for
  every seat's contribution; the genesis row is written when the last one arrives.

A ``Store`` is used from one thread at a time (the service gives it its own thread).
Driver errors are translated here, once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import duckdb

from feastlog.v1 import record_pb2
from replay.record import Row
from service.errors import StoreLocked

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    game_id VARCHAR NOT NULL,
    seq BIGINT NOT NULL,
    kind VARCHAR NOT NULL,
    actor VARCHAR NOT NULL,
    command_id VARCHAR NOT NULL,
    body BLOB NOT NULL,
    recorded_at VARCHAR NOT NULL,
    prev_hash VARCHAR NOT NULL,
    hash VARCHAR NOT NULL,
    state_hash VARCHAR NOT NULL,
    commitment VARCHAR NOT NULL DEFAULT '',
    PRIMARY KEY (game_id, seq)
);
CREATE TABLE IF NOT EXISTS rejections (
    game_id VARCHAR NOT NULL,
    after_seq BIGINT NOT NULL,
    actor VARCHAR NOT NULL,
    command_id VARCHAR NOT NULL,
    body BLOB NOT NULL,
    status VARCHAR NOT NULL,
    reason VARCHAR NOT NULL,
    rule_id VARCHAR NOT NULL,
    message VARCHAR NOT NULL,
    recorded_at VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS seats (
    game_id VARCHAR NOT NULL,
    seat INTEGER NOT NULL,
    name VARCHAR NOT NULL,
    token_sha256 VARCHAR NOT NULL,
    PRIMARY KEY (game_id, seat)
);
CREATE TABLE IF NOT EXISTS seeds (
    game_id VARCHAR PRIMARY KEY,
    server_seed BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS pending_games (
    game_id VARCHAR PRIMARY KEY,
    draft BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS seat_entropy (
    game_id VARCHAR NOT NULL,
    seat INTEGER NOT NULL,
    entropy BLOB NOT NULL,
    PRIMARY KEY (game_id, seat)
);
CREATE TABLE IF NOT EXISTS packs (
    sha256 VARCHAR PRIMARY KEY,
    game_kind VARCHAR NOT NULL,
    pack_id VARCHAR NOT NULL,
    body BLOB NOT NULL
);
"""

# Files written before record format 2 have no commitment column: it is added in place,
# empty for their rows (format 1 has no commitments), and nothing else changes.
MIGRATIONS = """
ALTER TABLE events ADD COLUMN IF NOT EXISTS commitment VARCHAR DEFAULT '';
"""

ROW_COLUMNS = (
    "game_id, seq, kind, actor, command_id, body, recorded_at, prev_hash, hash, state_hash, "
    "commitment"
)
# Reading a file opened read-only that predates the column: every row is format 1.
_FORMAT_1_COLUMNS = ROW_COLUMNS.replace("commitment", "'' AS commitment")


@dataclass(frozen=True)
class Rejection:
    """A refused command, kept outside the chain."""

    game_id: str
    after_seq: int
    actor: str
    command_id: str
    body: bytes
    status: str
    reason: str
    rule_id: str
    message: str
    recorded_at: str


@dataclass(frozen=True)
class NewGame:
    """Everything written when a game is created (genesis None: it waits for seat entropy)."""

    genesis: Row | None
    seats: Sequence[tuple[str, str]]  # (name, token sha256) in seat order
    server_seed: bytes
    pack_sha256: str
    game_kind: str
    pack_id: str
    pack_body: bytes
    game_id: str = ""
    draft: bytes = b""  # the Genesis without seat entropy, while the game waits


@dataclass
class Batch:
    """What one group commit writes."""

    games: list[NewGame] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    entropy: list[tuple[str, int, bytes]] = field(default_factory=list)
    started: list[str] = field(default_factory=list)  # pending games whose genesis is in rows

    def extend(self, other: Batch) -> None:
        """Take in everything another batch writes (group commit)."""
        for part in fields(self):
            getattr(self, part.name).extend(getattr(other, part.name))


@dataclass(frozen=True)
class PendingGame:
    """A game waiting for seat entropy, as stored."""

    game_id: str
    draft: bytes
    server_seed: bytes
    pack_body: bytes
    entropy: dict[int, bytes]


@dataclass(frozen=True)
class StoredGame:
    """A game as stored: its rows in seq order, its seed and its pack."""

    rows: tuple[Row, ...]
    server_seed: bytes
    pack_body: bytes
    seat_names: tuple[str, ...]


class Store:
    """An open DuckDB file holding game records."""

    def __init__(self, path: str, read_only: bool = False) -> None:
        try:
            self.con = duckdb.connect(path, read_only=read_only)
        except duckdb.IOException as error:
            if "lock" in str(error).lower():
                raise StoreLocked(
                    f"{path} is in use by another feastlog process (DuckDB allows one "
                    "writer per file): stop that server, or talk to it with --server",
                    path=path,
                ) from error
            raise
        if not read_only:
            self.con.execute(SCHEMA)
            self.con.execute(MIGRATIONS)
        self.path = path
        self.row_columns = ROW_COLUMNS if self._has_commitments() else _FORMAT_1_COLUMNS

    def _has_commitments(self) -> bool:
        """Whether the events table has its commitment column (a read-only older file has not)."""
        found = self.con.execute(
            "SELECT count(*) FROM duckdb_columns() WHERE table_name = 'events' "
            "AND column_name = 'commitment'"
        ).fetchone()
        return bool(found and found[0])

    def close(self) -> None:
        """Close the file (checkpointing the write-ahead log)."""
        self.con.close()

    def write(self, batch: Batch) -> None:
        """Commit a batch in one transaction: all of it or none of it."""
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            for game in batch.games:
                game_id = game.genesis.game_id if game.genesis else game.game_id
                con.execute(
                    "INSERT INTO packs SELECT ?, ?, ?, ? WHERE NOT EXISTS "
                    "(SELECT 1 FROM packs WHERE sha256 = ?)",
                    [
                        game.pack_sha256,
                        game.game_kind,
                        game.pack_id,
                        game.pack_body,
                        game.pack_sha256,
                    ],
                )
                con.execute("INSERT INTO seeds VALUES (?, ?)", [game_id, game.server_seed])
                con.executemany(
                    "INSERT INTO seats VALUES (?, ?, ?, ?)",
                    [[game_id, i, n, t] for i, (n, t) in enumerate(game.seats)],
                )
                if game.genesis is None:
                    con.execute("INSERT INTO pending_games VALUES (?, ?)", [game_id, game.draft])
            if batch.entropy:
                con.executemany(
                    "INSERT INTO seat_entropy VALUES (?, ?, ?)", [list(e) for e in batch.entropy]
                )
            for game_id in batch.started:
                con.execute("DELETE FROM pending_games WHERE game_id = ?", [game_id])
            rows = [g.genesis for g in batch.games if g.genesis is not None] + batch.rows
            if rows:
                con.executemany(
                    f"INSERT INTO events ({ROW_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [_row_values(r) for r in rows],
                )
            if batch.rejections:
                con.executemany(
                    "INSERT INTO rejections VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [list(vars(r).values()) for r in batch.rejections],
                )
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise

    def game_ids(self) -> list[str]:
        """Every game id, oldest first."""
        found = self.con.execute(
            "SELECT game_id FROM events WHERE seq = 1 ORDER BY recorded_at, game_id"
        ).fetchall()
        return [r[0] for r in found]

    def rows(self, game_id: str) -> tuple[Row, ...]:
        """A game's rows in seq order."""
        found = self.con.execute(
            f"SELECT {self.row_columns} FROM events WHERE game_id = ? ORDER BY seq", [game_id]
        ).fetchall()
        return tuple(_row(r) for r in found)

    def load(self, game_id: str) -> StoredGame | None:
        """A game's rows, seed, pack and seat names; None when there is no such game."""
        rows = self.rows(game_id)
        if not rows:
            return None
        seed = self.con.execute(
            "SELECT server_seed FROM seeds WHERE game_id = ?", [game_id]
        ).fetchone()
        pack = self.con.execute(
            "SELECT body FROM packs WHERE sha256 = ?", [_pack_sha_of(rows[0])]
        ).fetchone()
        names = self.con.execute(
            "SELECT name FROM seats WHERE game_id = ? ORDER BY seat", [game_id]
        ).fetchall()
        return StoredGame(
            rows,
            bytes(seed[0]) if seed else b"",
            bytes(pack[0]) if pack else b"",
            tuple(n[0] for n in names),
        )

    def pending(self) -> list[PendingGame]:
        """Games waiting for seat entropy, with what each seat has sent so far."""
        found = self.con.execute(
            "SELECT p.game_id, p.draft, s.server_seed FROM pending_games p "
            "JOIN seeds s USING (game_id) ORDER BY p.game_id"
        ).fetchall()
        out = []
        for game_id, draft, seed in found:
            sha = record_pb2.Genesis.FromString(bytes(draft)).pack_sha256
            pack = self.con.execute("SELECT body FROM packs WHERE sha256 = ?", [sha]).fetchone()
            sent = self.con.execute(
                "SELECT seat, entropy FROM seat_entropy WHERE game_id = ?", [game_id]
            ).fetchall()
            out.append(
                PendingGame(
                    game_id,
                    bytes(draft),
                    bytes(seed),
                    bytes(pack[0]) if pack else b"",
                    {int(seat): bytes(e) for seat, e in sent},
                )
            )
        return out

    def seat_tokens(self) -> list[tuple[str, str, int]]:
        """(token sha256, game id, seat) for every seat of every game."""
        return [
            (r[0], r[1], int(r[2]))
            for r in self.con.execute("SELECT token_sha256, game_id, seat FROM seats").fetchall()
        ]

    def rejections(self, game_id: str) -> list[Rejection]:
        """A game's refused commands, oldest first."""
        found = self.con.execute(
            "SELECT * FROM rejections WHERE game_id = ? ORDER BY recorded_at", [game_id]
        ).fetchall()
        return [
            Rejection(r[0], int(r[1]), r[2], r[3], bytes(r[4]), r[5], r[6], r[7], r[8], r[9])
            for r in found
        ]

    def summaries(self) -> list[tuple[str, bytes, int, bool, str]]:
        """(game id, genesis body, last seq, over, created at) per game, newest first."""
        found = self.con.execute(
            "SELECT g.game_id, g.body, max(e.seq), bool_or(e.kind = 'seed_reveal'), "
            "g.recorded_at FROM events g JOIN events e ON e.game_id = g.game_id "
            "WHERE g.seq = 1 GROUP BY g.game_id, g.body, g.recorded_at "
            "ORDER BY g.recorded_at DESC, g.game_id"
        ).fetchall()
        return [(r[0], bytes(r[1]), int(r[2]), bool(r[3]), r[4]) for r in found]


def _pack_sha_of(genesis_row: Row) -> str:
    return record_pb2.Genesis.FromString(genesis_row.body).pack_sha256


def _row_values(row: Row) -> list[object]:
    return [
        row.game_id,
        row.seq,
        row.kind,
        row.actor,
        row.command_id,
        row.body,
        row.recorded_at,
        row.prev_hash,
        row.hash,
        row.state_hash,
        row.commitment,
    ]


def _row(values: tuple[Any, ...]) -> Row:
    game_id, seq, kind, actor, command_id, body, recorded_at, prev, hash_, state, commit = values
    return Row(
        game_id,
        int(seq),
        kind,
        actor,
        command_id,
        bytes(body),
        recorded_at,
        prev,
        hash_,
        state,
        commit or "",
    )
