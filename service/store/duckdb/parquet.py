"""The analysts' tables (docs/data.md) gathered in an in-memory DuckDB and written by
DuckDB's own Parquet writer, one file a table.

What goes in, and what is public, is decided by ``service/app/parquet.py``; this module
holds the tables' columns and runs the SQL.
"""

from __future__ import annotations

import errno
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb

from feastlog.service.store.duckdb.schema import insert
from feastlog.service.store.projection import GENERIC_TABLES, tables

GAMES = (
    "game_id VARCHAR, game_kind VARCHAR, ruleset_version VARCHAR, record_version INTEGER, "
    "tournament_id VARCHAR, seats INTEGER, players VARCHAR[], created_at VARCHAR, "
    "status VARCHAR, public BOOLEAN, rows INTEGER, moves INTEGER, ended_at VARCHAR, "
    "server_seed VARCHAR, voided BOOLEAN, scored BOOLEAN, winners INTEGER[], points INTEGER[]"
)
# The generic tables, by the name of their file (``<name>.parquet``).
TABLES: dict[str, str] = {
    "games": GAMES,
    "rows": "game_id VARCHAR, seq BIGINT, kind VARCHAR, actor VARCHAR, seat INTEGER, "
    "recorded_at VARCHAR, prev_hash VARCHAR, hash VARCHAR, state_hash VARCHAR, "
    "commitment VARCHAR",
    "commands": "game_id VARCHAR, game_kind VARCHAR, seq BIGINT, actor VARCHAR, seat INTEGER, "
    "family VARCHAR, action VARCHAR, command VARCHAR, recorded_at VARCHAR",
    "refusals": "game_id VARCHAR, game_kind VARCHAR, after_seq BIGINT, actor VARCHAR, "
    "seat INTEGER, status VARCHAR, reason VARCHAR, rule_id VARCHAR, message VARCHAR, "
    "recorded_at VARCHAR",
    "outcomes": GENERIC_TABLES["outcome_seats"],
}
# A tournament's published tables: joined into ``games`` as it is written.
ROUNDS = "game_id VARCHAR, round INTEGER, table_number INTEGER"
PREFIX = "outcome_"  # a game kind's projection table ``outcome_bids`` is the file bids
ORDER = {  # the order each file's rows are written in (the rest: ORDER BY ALL)
    "rows": "game_id, seq",
    "commands": "game_id, seq",
    "refusals": "game_id, recorded_at, after_seq",
    "outcomes": "game_id, seat",
}
# Where round and table go among the games' columns: after tournament_id.
_TOURNAMENT_AT = 5


def kind_tables() -> dict[str, tuple[str, str]]:
    """Each game kind's projection tables: file name -> (projection table, columns)."""
    return {
        name.removeprefix(PREFIX): (name, columns)
        for name, columns in tables().items()
        if name not in GENERIC_TABLES
    }


def table_names() -> list[str]:
    """Every table written, in the order of docs/data.md."""
    return [*TABLES, *kind_tables()]


def _games_query() -> str:
    """The games as written: a tournament's round and table from its publish rows."""
    names = [c.split()[0] for c in GAMES.split(", ")]
    before = ", ".join(f"g.{c}" for c in names[:_TOURNAMENT_AT])
    after = ", ".join(f"g.{c}" for c in names[_TOURNAMENT_AT:])
    return (
        f"SELECT {before}, r.round, r.table_number, {after} FROM games g "
        "LEFT JOIN (SELECT game_id, max(round) AS round, max(table_number) AS table_number "
        "FROM rounds GROUP BY game_id) r USING (game_id) ORDER BY g.created_at, g.game_id"
    )


class Gathered:
    """The tables in an in-memory DuckDB, fed rows table by table."""

    def __init__(self) -> None:
        self.con = duckdb.connect(":memory:")
        columns = {**TABLES, "rounds": ROUNDS, **{n: c for n, (_, c) in kind_tables().items()}}
        for name, typed in columns.items():
            self.con.execute(f"CREATE TABLE {name} ({typed})")

    def add(self, found: dict[str, list[list[Any]]]) -> None:
        """Insert rows, one statement a table (``found``: table name -> rows)."""
        for name, rows in found.items():
            if rows:
                insert(self.con, name, "", rows)

    def held_back(self, game_ids: Sequence[str]) -> None:
        """Take out what is hidden of finished games held back: their commands, seed and
        per-kind tables (their result stays: it is public as soon as they end)."""
        if not game_ids:
            return
        ids = [list(game_ids)]
        where = "game_id IN (SELECT unnest($1::VARCHAR[]))"
        self.con.execute(
            f"UPDATE games SET status = 'held', public = false, server_seed = NULL WHERE {where}",
            ids,
        )
        for name in ["commands", "refusals", *kind_tables()]:
            self.con.execute(f"DELETE FROM {name} WHERE {where}", ids)

    def write(self, folder: Path) -> dict[str, int]:
        """Each table to ``folder/<name>.parquet`` through DuckDB's Parquet writer; the rows
        each holds."""
        counts = {}
        for name in table_names():
            target = str(folder / f"{name}.parquet").replace("'", "''")
            query = (
                _games_query()
                if name == "games"
                else f"SELECT * FROM {name} ORDER BY {ORDER.get(name, 'ALL')}"
            )
            try:
                self.con.execute(f"COPY ({query}) TO '{target}' (FORMAT PARQUET, COMPRESSION ZSTD)")
            except duckdb.IOException as bad:  # a folder it cannot write in: as open() says
                raise OSError(errno.EIO, str(bad).splitlines()[0], str(folder)) from bad
            found = self.con.execute(f"SELECT count(*) FROM {name}").fetchone()
            counts[name] = int(found[0]) if found else 0
        return counts

    def close(self) -> None:
        """Let the memory go."""
        self.con.close()
