"""What one group commit writes: every table of a batch, then the notifications."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from feastlog.replay.record import Row
from feastlog.service.store import Batch, projection
from feastlog.service.store.postgres.schema import NOTIFY_CHANNEL
from feastlog.service.store.sql import (
    LEAF_COLUMNS,
    REJECTION_COLUMNS,
    ROW_COLUMNS,
    leaf_values,
    row_values,
)
from feastlog.v1 import record_pb2


def _insert(
    cursor: psycopg.Cursor[Any],
    table: str,
    columns: str,
    rows: Sequence[Sequence[object]],
    conflict: str = "",
) -> None:
    """Insert rows with one pipelined statement (psycopg sends them all, then reads)."""
    marks = ", ".join(["%s"] * len(rows[0]))
    query = f"INSERT INTO {table} ({columns}) VALUES ({marks}) {conflict}"
    cursor.executemany(query.encode(), rows)


def write_rows(cursor: psycopg.Cursor[Any], batch: Batch) -> int | None:
    """Everything a batch writes, one statement per table, then the notifications; the
    log position of its first appended row."""
    games = batch.games
    ids = [g.genesis.game_id if g.genesis else g.game_id for g in games]
    packs = {g.pack_sha256: [g.pack_sha256, g.game_kind, g.pack_id, g.pack_body] for g in games}
    if packs:  # the same pack serves many games: stored once, by its sha256
        _insert(
            cursor,
            "packs",
            "sha256, game_kind, pack_id, body",
            list(packs.values()),
            "ON CONFLICT (sha256) DO NOTHING",
        )
    if games:
        _insert(
            cursor,
            "seeds",
            "game_id, server_seed",
            [[i, g.server_seed] for i, g in zip(ids, games, strict=True)],
        )
        seats = [
            [i, seat, name, token]
            for i, g in zip(ids, games, strict=True)
            for seat, (name, token) in enumerate(g.seats)
        ]
        if seats:
            _insert(cursor, "seats", "game_id, seat, name, token_sha256", seats)
        geneses = [
            record_pb2.Genesis.FromString(g.genesis.body if g.genesis else g.draft) for g in games
        ]
        listing = [
            [g.game_id, g.created_at, g.game_kind, g.tournament_id, [s.name for s in g.seats]]
            for g in geneses
        ]
        _insert(cursor, "games", "game_id, created_at, game_kind, tournament_id, players", listing)
    drafts = [[i, g.draft] for i, g in zip(ids, games, strict=True) if g.genesis is None]
    if drafts:
        _insert(cursor, "pending_games", "game_id, draft", drafts)
    if batch.entropy:
        _insert(cursor, "seat_entropy", "game_id, seat, entropy", [list(e) for e in batch.entropy])
    for game_id in batch.started:
        cursor.execute(b"DELETE FROM pending_games WHERE game_id = %s", [game_id])
    rows = batch.appended()
    first = None
    if rows:
        _insert(cursor, "events", ROW_COLUMNS, [row_values(r) for r in rows])
        first = _plant(cursor, rows)
    if batch.rejections:
        _insert(
            cursor,
            "rejections",
            REJECTION_COLUMNS,
            [list(vars(r).values()) for r in batch.rejections],
        )
    if batch.outcomes:
        insert_projection(cursor, batch.outcomes)
    heads: dict[str, int] = {}
    for row in rows:
        heads[row.game_id] = max(heads.get(row.game_id, 0), row.seq)
    if heads:  # delivered at commit, to every node listening (none if it rolls back)
        cursor.executemany(
            b"SELECT pg_notify(%s, %s)",
            [[NOTIFY_CHANNEL, f"{game_id} {seq}"] for game_id, seq in heads.items()],
        )
    return first


def _plant(cursor: psycopg.Cursor[Any], rows: Sequence[Row]) -> int:
    """The rows' places in the log tree, taken in this commit: the tree's size is one row
    that every node's commit updates, so the commits that append take their places one
    after another, in the order they commit, and no two rows ever share one."""
    cursor.execute(b"UPDATE log_tree SET size = size + %s RETURNING size", [len(rows)])
    taken = cursor.fetchone()
    assert taken is not None  # the row is made with the schema
    first = int(taken[0]) - len(rows)
    _insert(cursor, "log_leaves", LEAF_COLUMNS, leaf_values(rows, first))
    return first


def insert_projection(cursor: psycopg.Cursor[Any], projected: projection.Projected) -> None:
    """Insert projection rows, one pipelined statement per table."""
    merged: dict[str, list[list[Any]]] = {}
    for name, rows in projected:
        merged.setdefault(name, []).extend(rows)
    for name, rows in merged.items():
        marks = ", ".join(["%s"] * len(rows[0]))
        cursor.executemany(f"INSERT INTO {name} VALUES ({marks})".encode(), rows)
