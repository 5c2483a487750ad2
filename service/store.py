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

import contextlib
import functools
import logging
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import duckdb

from feastlog.v1 import record_pb2
from replay.record import Row
from service.errors import (
    CannotOpenStore,
    StoreConflict,
    StoreLocked,
    StoreUnavailable,
    new_incident_id,
)
from service.files import (
    hold_private_umask,
    make_private_folder,
    mode_text,
    release_private_umask,
    tighten,
)

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")

log = logging.getLogger("feastlog.store")
OR_IGNORE = "INSERT OR IGNORE"

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


def translated(method: Callable[P, R]) -> Callable[P, R]:
    """Translate the driver's errors into the store's own, once, here.

    The cause goes to the server log under an incident id; the error the client may see
    carries only the id.
    """

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except duckdb.Error as error:
            incident = new_incident_id()
            log.error(
                "incident %s: the store failed in %s: %s: %s",
                incident,
                method.__name__,
                type(error).__name__,
                error,
            )
            if isinstance(error, duckdb.ConstraintException):
                raise StoreConflict(
                    f"the game store refused a write that was out of date (incident {incident}); "
                    "try again",
                    incident_id=incident,
                ) from error
            if method.__name__ != "write":
                message = f"the game store failed to read (incident {incident}); try again"
            else:
                message = (
                    f"the game store failed to write (incident {incident}); try again: "
                    "a command sent again with its command_id is recorded once"
                )
            raise StoreUnavailable(message, incident_id=incident) from error

    return wrapper


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    """End a failed transaction; one that already ended (a failed COMMIT) needs nothing."""
    # a transaction that is over already needs nothing: the first error is the one to report
    with contextlib.suppress(duckdb.Error):
        con.execute("ROLLBACK")


def _read_at_start(method: Callable[[Store], T]) -> Callable[[Store], T]:
    """A read the server makes before it serves: a driver error means the file is unusable."""

    @functools.wraps(method)
    def read(store: Store) -> T:
        try:
            return method(store)
        except duckdb.Error as error:
            raise _open_error(Path(store.path), error) from error

    return read


class Store:
    """An open DuckDB file holding game records."""

    def __init__(self, path: str, read_only: bool = False) -> None:
        self.path = path
        self._writing = not read_only
        if self._writing:
            # DuckDB makes the WAL and spill files itself, at any time while it is open.
            hold_private_umask()
        try:
            self.con = _open(Path(path), read_only)
        except BaseException:
            self._release_umask()
            raise
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
        self._release_umask()

    def _release_umask(self) -> None:
        if self._writing:
            self._writing = False
            release_private_umask()

    @translated
    def write(self, batch: Batch) -> None:
        """Commit a batch in one transaction: all of it or none of it."""
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            _write_rows(con, batch)
            con.execute("COMMIT")
        except BaseException:
            _rollback(con)
            raise

    @translated
    def game_ids(self) -> list[str]:
        """Every game id, oldest first."""
        found = self.con.execute(
            "SELECT game_id FROM events WHERE seq = 1 ORDER BY recorded_at, game_id"
        ).fetchall()
        return [r[0] for r in found]

    @translated
    def rows(self, game_id: str) -> tuple[Row, ...]:
        """A game's rows in seq order."""
        found = self.con.execute(
            f"SELECT {self.row_columns} FROM events WHERE game_id = ? ORDER BY seq", [game_id]
        ).fetchall()
        return tuple(_row(r) for r in found)

    @translated
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

    @_read_at_start
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

    @_read_at_start
    def seat_tokens(self) -> list[tuple[str, str, int]]:
        """(token sha256, game id, seat) for every seat of every game."""
        return [
            (r[0], r[1], int(r[2]))
            for r in self.con.execute("SELECT token_sha256, game_id, seat FROM seats").fetchall()
        ]

    @translated
    def rejections(self, game_id: str) -> list[Rejection]:
        """A game's refused commands, oldest first."""
        found = self.con.execute(
            "SELECT * FROM rejections WHERE game_id = ? ORDER BY recorded_at", [game_id]
        ).fetchall()
        return [
            Rejection(r[0], int(r[1]), r[2], r[3], bytes(r[4]), r[5], r[6], r[7], r[8], r[9])
            for r in found
        ]

    @translated
    def summaries(self) -> list[tuple[str, bytes, int, bool, str]]:
        """(game id, genesis body, last seq, over, created at) per game, newest first."""
        found = self.con.execute(
            "SELECT g.game_id, g.body, max(e.seq), bool_or(e.kind = 'seed_reveal'), "
            "g.recorded_at FROM events g JOIN events e ON e.game_id = g.game_id "
            "WHERE g.seq = 1 GROUP BY g.game_id, g.body, g.recorded_at "
            "ORDER BY g.recorded_at DESC, g.game_id"
        ).fetchall()
        return [(r[0], bytes(r[1]), int(r[2]), bool(r[3]), r[4]) for r in found]


# Rows per INSERT statement: many rows in one VALUES list, never executemany (which
# DuckDB runs row by row, its slowest path), and bounded so a statement stays small.
ROWS_PER_INSERT = 256


def _insert(
    con: duckdb.DuckDBPyConnection,
    table: str,
    columns: str,
    rows: Sequence[Sequence[object]],
    verb: str = "INSERT",
) -> None:
    """Insert rows with multi-row VALUES statements."""
    for start in range(0, len(rows), ROWS_PER_INSERT):
        chunk = rows[start : start + ROWS_PER_INSERT]
        marks = "(" + ", ".join("?" * len(chunk[0])) + ")"
        con.execute(
            f"{verb} INTO {table} ({columns}) VALUES {', '.join([marks] * len(chunk))}",
            [value for row in chunk for value in row],
        )


def _write_rows(con: duckdb.DuckDBPyConnection, batch: Batch) -> None:
    """Everything a batch writes, one statement per table."""
    games = batch.games
    ids = [g.genesis.game_id if g.genesis else g.game_id for g in games]
    packs = {g.pack_sha256: [g.pack_sha256, g.game_kind, g.pack_id, g.pack_body] for g in games}
    if packs:  # the same pack serves many games: stored once, by its sha256
        _insert(con, "packs", "sha256, game_kind, pack_id, body", list(packs.values()), OR_IGNORE)
    if games:
        seeds = [[i, g.server_seed] for i, g in zip(ids, games, strict=True)]
        _insert(con, "seeds", "game_id, server_seed", seeds)
        seats = [
            [i, seat, name, token]
            for i, g in zip(ids, games, strict=True)
            for seat, (name, token) in enumerate(g.seats)
        ]
        if seats:
            _insert(con, "seats", "game_id, seat, name, token_sha256", seats)
    drafts = [[i, g.draft] for i, g in zip(ids, games, strict=True) if g.genesis is None]
    if drafts:
        _insert(con, "pending_games", "game_id, draft", drafts)
    if batch.entropy:
        _insert(con, "seat_entropy", "game_id, seat, entropy", [list(e) for e in batch.entropy])
    for game_id in batch.started:
        con.execute("DELETE FROM pending_games WHERE game_id = ?", [game_id])
    rows = [g.genesis for g in games if g.genesis is not None] + batch.rows
    if rows:
        _insert(con, "events", ROW_COLUMNS, [_row_values(r) for r in rows])
    if batch.rejections:
        _insert(
            con,
            "rejections",
            ", ".join(f.name for f in fields(Rejection)),
            [list(vars(r).values()) for r in batch.rejections],
        )


def _open(file: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    """Connect to ``file`` (writing: in a 0700 folder made if missing, owner-only files)."""
    _check_path(file, read_only)
    try:
        con = duckdb.connect(str(file), read_only=read_only)
    except duckdb.Error as error:
        raise _open_error(file, error) from error
    try:
        if not read_only:
            con.execute(SCHEMA)
            con.execute(MIGRATIONS)
            _tighten_store_files(file)
    except BaseException as error:
        con.close()
        if isinstance(error, duckdb.Error):
            raise _open_error(file, error) from error
        raise
    return con


def _check_path(file: Path, read_only: bool) -> None:
    """Refuse, in one line, a path DuckDB could not open or write; make a missing folder."""
    try:
        if file.is_dir():
            raise CannotOpenStore(
                f"{file} is a folder, not a database file: pass a file path "
                f"(for example --db {file / 'feastlog.duckdb'})",
                path=str(file),
            )
        if read_only:
            return
        make_private_folder(file.parent)
        if not file.parent.is_dir():
            raise CannotOpenStore(
                f"{file.parent} is a file, not a folder: pass --db with a path in a folder",
                path=str(file),
            )
        if file.exists() and not file.stat().st_mode & stat.S_IWUSR:
            raise CannotOpenStore(
                f"{file} is read-only (mode {mode_text(file.stat().st_mode)}): to serve it, "
                f"make it writable (chmod u+w {file}); offline commands read it as it is",
                path=str(file),
            )
        # os.access, unlike a mode check, also sees a read-only file system.
        if not os.access(file.parent, os.W_OK | os.X_OK):
            raise CannotOpenStore(
                f"cannot write in the folder {file.parent} (DuckDB keeps its write-ahead log "
                "beside the database): make it writable, or pass --db with another path",
                path=str(file),
            )
    except OSError as failed:
        raise CannotOpenStore(
            f"cannot open {file}: {failed.strerror or failed} ({failed.filename})", path=str(file)
        ) from failed


def _tighten_store_files(file: Path) -> None:
    """Make the database, its WAL and its spill folder owner-only, saying so when they were not."""
    for part in (file, Path(f"{file}.wal"), Path(f"{file}.tmp")):
        try:
            notice = tighten(part)
        except OSError as failed:
            raise CannotOpenStore(
                f"{part} can be read by other users and only its owner can change that: "
                f"chmod go-rwx {part} as its owner ({failed.strerror})",
                path=str(file),
            ) from failed
        if notice:
            log.warning(notice)


def _open_error(file: Path, error: duckdb.Error) -> CannotOpenStore:
    """A DuckDB error on opening ``file``, in one line that says what to do."""
    text = (str(error).splitlines() or [type(error).__name__])[0]
    lowered = text.lower()
    if "could not set lock" in lowered or "conflicting lock" in lowered:
        return StoreLocked(
            f"{file} is in use by another feastlog process (DuckDB allows one "
            "writer per file): stop that server, or talk to it with --server",
            path=str(file),
        )
    if "not a valid duckdb database" in lowered:
        empty = file.is_file() and file.stat().st_size == 0
        what = "is empty (0 bytes)" if empty else "is not a DuckDB database file"
        return CannotOpenStore(
            f"{file} {what}: move it away to start a new store there, or pass --db with "
            "the right file",
            path=str(file),
        )
    damaged = {
        "could not read enough bytes": "is truncated (it ends before its last block)",
        "corrupt": "is corrupt (a checksum does not match)",
        "checksum": "is corrupt (a checksum does not match)",
    }
    found = next((what for words, what in damaged.items() if words in lowered), None)
    if found:
        # Replaying the write-ahead log after a crash reads a second file.
        which = f"the write-ahead log {file}.wal" if "replaying wal" in lowered else str(file)
        return CannotOpenStore(
            f"{which} {found}: restore it from a backup, or pass --db with another file",
            path=str(file),
        )
    if "permission denied" in lowered:
        return CannotOpenStore(
            f"cannot open {file}: permission denied: serve it as the user who owns it, or "
            "pass --db with another file",
            path=str(file),
        )
    return CannotOpenStore(f"cannot open {file}: {text}", path=str(file))


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
