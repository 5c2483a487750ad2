"""The store's tables, as DuckDB DDL, and a row's columns (see ``service.store``)."""

from __future__ import annotations

from collections.abc import Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from feastlog.replay.record import Row
from feastlog.service.store.records import Listed, Rejection, StoredGame
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
"""
INDEXES = """
CREATE INDEX IF NOT EXISTS events_by_game ON events (game_id);
CREATE INDEX IF NOT EXISTS seats_by_token ON seats (token_sha256);
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


def row_values(row: Row) -> list[object]:
    """A row as the values of the ``events`` columns."""
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


def row_of(values: tuple[Any, ...]) -> Row:
    """A row from the values of the ``events`` columns."""
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


def games_of_scan(
    scanned: Iterable[tuple[Any, ...]], packs: dict[str, bytes]
) -> Iterator[tuple[int, StoredGame]]:
    """Group one ordered scan into games: (place in the game list, game), for both stores.

    Each scanned tuple is the ``events`` columns, then the game's place in the game list,
    then its server seed (on its first row only).
    """
    rows: list[Row] = []
    seed, n = b"", 0
    for values in scanned:
        row = row_of(values[:-2])
        if rows and row.game_id != rows[0].game_id:
            yield n, StoredGame.scanned(rows, seed, packs)
            rows = []
        if not rows:
            n = int(values[-2])
            seed = bytes(values[-1]) if values[-1] is not None else b""
        rows.append(row)
    if rows:
        yield n, StoredGame.scanned(rows, seed, packs)


def count_query(mark: str, game_kind: str) -> tuple[str, list[object]]:
    """The query counting (games with rows, rows) for both stores (``mark``: the driver's
    parameter mark), of one kind or all."""
    if not game_kind:
        return "SELECT count(DISTINCT game_id), count(*) FROM events", []
    return (
        "SELECT count(DISTINCT game_id), count(*) FROM events "
        f"WHERE game_id IN (SELECT game_id FROM games WHERE game_kind = {mark})",
        [game_kind],
    )


def counted(found: Sequence[Any] | None) -> tuple[int, int]:
    """(games with rows, rows) from the counting query's row."""
    return (int(found[0]), int(found[1])) if found else (0, 0)


def unnumbered(numbered: Iterable[tuple[int, StoredGame]]) -> Generator[StoredGame]:
    """The games of a numbered scan without their places (``scan`` of both stores)."""
    for _, stored in numbered:
        yield stored


def list_query(
    mark: str, game_kind: str, tournament_id: str, before: int, limit: int
) -> tuple[str, list[object]]:
    """The game list's query for both stores (``mark``: the driver's parameter mark),
    newest first, before place ``before``, with the rows of finished games."""
    where: list[str] = ["TRUE"]
    params: list[object] = []
    for present, condition, value in (
        (before, "l.n < ", before),
        (game_kind, "l.game_kind = ", game_kind),
        (tournament_id, "l.tournament_id = ", tournament_id),
    ):
        if present:
            where.append(condition + mark)
            params.append(value)
    sql = (
        f"WITH page AS (SELECT * FROM games l WHERE {' AND '.join(where)} "
        f"ORDER BY l.n DESC LIMIT {mark}) "
        "SELECT p.n, p.game_id, p.game_kind, p.players, p.created_at, p.tournament_id, "
        "o.rows FROM page p LEFT JOIN outcome_games o USING (game_id) ORDER BY p.n DESC"
    )
    return sql, [*params, limit]


# Games dealt from the same server seed as game ? (a supplied seed: duplicate tables) that
# have not ended: no outcome (written in the commit that ends a game), running or waiting
# for seat entropy.  A store whose projection is not current asks the log instead (no seed
# reveal row), which reads the whole events table.
_TWINS = (
    "SELECT count(*) FROM seeds s JOIN seeds m ON s.server_seed = m.server_seed "
    "AND s.game_id <> m.game_id WHERE m.game_id = ? AND NOT EXISTS "
)
TWINS_RUNNING = _TWINS + "(SELECT 1 FROM outcome_games o WHERE o.game_id = s.game_id)"
TWINS_RUNNING_BY_LOG = (
    _TWINS + "(SELECT 1 FROM events e WHERE e.game_id = s.game_id AND e.kind = 'seed_reveal')"
)


# Every game dealt from server seed ?, oldest first, and when one's seed was revealed (its
# end: a point lookup by game, so a season's events are never scanned for it).
DEALT_FROM = (
    "SELECT s.game_id, l.created_at FROM seeds s JOIN games l ON l.game_id = s.game_id "
    "WHERE s.server_seed = ? ORDER BY l.n"
)
REVEALED_AT = "SELECT recorded_at FROM events WHERE game_id = ? AND kind = 'seed_reveal'"


def listed_of(found: Iterable[tuple[Any, ...]]) -> list[Listed]:
    """The game list's lines from the listing query's rows."""
    return [
        Listed(int(n), g, k, tuple(players), at, t, None if rows is None else int(rows))
        for n, g, k, players, at, t, rows in found
    ]


def rejections_of(found: Iterable[Sequence[Any]]) -> list[Rejection]:
    """Refused commands from the ``rejections`` columns, in their order."""
    return [
        Rejection(r[0], int(r[1]), r[2], r[3], bytes(r[4]), r[5], r[6], r[7], r[8], r[9])
        for r in found
    ]
