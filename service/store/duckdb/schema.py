"""The store's tables, as DuckDB DDL, and how a commit's statements are written down (the
columns and queries both SQL adapters share are ``service/store/sql.py``'s)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from feastlog.service.store.sql import ROW_COLUMNS
from feastlog.v1 import record_pb2

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
CREATE TABLE IF NOT EXISTS games (
    game_id VARCHAR PRIMARY KEY,
    n BIGINT NOT NULL,
    created_at VARCHAR NOT NULL,
    game_kind VARCHAR NOT NULL,
    tournament_id VARCHAR NOT NULL,
    players VARCHAR[] NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    key VARCHAR PRIMARY KEY,
    value VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS arbiters (
    name VARCHAR PRIMARY KEY,
    key_sha256 VARCHAR NOT NULL,
    added_at VARCHAR NOT NULL,
    revoked_at VARCHAR NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS tree_heads (
    size BIGINT NOT NULL,
    root VARCHAR NOT NULL,
    signed_at VARCHAR NOT NULL,
    public_key VARCHAR NOT NULL,
    signature VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS cosignatures (
    size BIGINT NOT NULL,
    root VARCHAR NOT NULL,
    signed_at VARCHAR NOT NULL,
    server_key VARCHAR NOT NULL,
    witness_key VARCHAR NOT NULL,
    witnessed_at VARCHAR NOT NULL,
    signature VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS server_keys (
    public_key VARCHAR PRIMARY KEY,
    first_used VARCHAR NOT NULL
);
"""
# Seat links (``EventStore.add_seat_code``…): a seat's unused one-time code and the
# browser sessions codes opened, each by its sha256 alone; ``n`` numbers the sessions in
# the order they were opened (the oldest go first past the bound).
SEAT_LINKS = """
CREATE TABLE IF NOT EXISTS seat_codes (
    code_sha256 VARCHAR PRIMARY KEY,
    game_id VARCHAR NOT NULL,
    seat INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS seat_sessions (
    session_sha256 VARCHAR PRIMARY KEY,
    game_id VARCHAR NOT NULL,
    seat INTEGER NOT NULL,
    n BIGINT NOT NULL
);
"""
INDEXES = """
CREATE INDEX IF NOT EXISTS events_by_game ON events (game_id);
CREATE INDEX IF NOT EXISTS seats_by_token ON seats (token_sha256);
"""

# Files written before record format 2 have no commitment column: it is added in place,
# empty for their rows (format 1 has no commitments), and nothing else changes.
MIGRATIONS = """
ALTER TABLE events ADD COLUMN IF NOT EXISTS commitment VARCHAR DEFAULT '';
ALTER TABLE events ADD COLUMN IF NOT EXISTS tree_position BIGINT;
"""

# Reading a file opened read-only that predates the column: every row is format 1.
FORMAT_1_COLUMNS = ROW_COLUMNS.replace("commitment", "'' AS commitment")


ORDER_OF_OLD_FILES = (
    "(SELECT game_id, row_number() OVER (ORDER BY recorded_at, game_id) AS n, "
    "'' AS game_kind FROM events WHERE seq = 1)"
)
GAMES_COLUMNS = "game_id, n, created_at, game_kind, tournament_id, players"


def listing(geneses: Sequence[record_pb2.Genesis], first: int) -> list[list[object]]:
    """Game-list lines for new games, numbered from ``first``."""
    return [
        [
            g.game_id,
            first + i,
            g.created_at,
            g.game_kind,
            g.tournament_id,
            [s.name for s in g.seats],
        ]
        for i, g in enumerate(geneses)
    ]


@dataclass(frozen=True)
class Appended:
    """Rows to append to a table (``columns`` empty: every column, in order)."""

    table: str
    columns: tuple[str, ...]
    rows: Sequence[Sequence[object]]


class Statements:
    """Statements written down in order, to be run later (a batch's, in its commit).

    A plain insert is written down as ``Appended`` rows, which the store hands to DuckDB's
    appender (``Store.write``); every other statement as its SQL and parameters.
    """

    def __init__(self) -> None:
        self.written: list[tuple[str, list[Any]] | Appended] = []

    def execute(self, sql: str, params: Sequence[object] = ()) -> None:
        """Write down one statement and its parameters."""
        self.written.append((sql, list(params)))

    def append(self, table: str, columns: str, rows: Sequence[Sequence[object]]) -> None:
        """Write down rows to append to ``table``."""
        named = tuple(c.strip() for c in columns.split(",")) if columns else ()
        self.written.append(Appended(table, named, rows))


def insert(
    con: duckdb.DuckDBPyConnection | Statements,
    table: str,
    columns: str,
    rows: Sequence[Sequence[object]],
    verb: str = "INSERT",
) -> None:
    """Insert rows in one statement: each column as a list, unnested.

    Never executemany (DuckDB runs it row by row, its slowest path) nor long VALUES
    lists (binding thousands of parameters costs more than the insert): a few list
    parameters carry any number of rows.  ``columns`` empty: every column, in order.
    Written down for a commit (``Statements``), a plain insert is appended rows instead.
    """
    if isinstance(con, Statements) and verb == "INSERT":
        con.append(table, columns, rows)
        return
    values = [list(column) for column in zip(*rows, strict=True)]
    picks = ", ".join(f"unnest(${i + 1})" for i in range(len(values)))
    named = f" ({columns})" if columns else ""
    con.execute(f"{verb} INTO {table}{named} SELECT {picks}", values)
