"""What one group commit writes: every table of a batch, its rows waiting for their
places in the log tree (``placing.py`` gives them, after the commit)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from feastlog.replay.proof.signed import leaf_hash_of
from feastlog.replay.record.rows import Row
from feastlog.service.store import Batch, projection
from feastlog.service.store.sql import (
    DRAFT_COLUMNS,
    ENTROPY_COLUMNS,
    PACK_COLUMNS,
    REJECTION_COLUMNS,
    ROW_COLUMNS,
    SEAT_COLUMNS,
    SEED_COLUMNS,
    inserts_of,
    row_values,
)


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


def write_rows(cursor: psycopg.Cursor[Any], batch: Batch) -> list[Row]:
    """Everything a batch writes, one statement per table; the rows it appends
    (``Batch.appended``), which wait in ``log_pending`` for their places.

    Nothing here touches a row another node's commit writes too, and nothing notifies
    (a notifying commit takes PostgreSQL's one queue lock until it ends): commits of
    several nodes go on side by side, and the placement (in the commit when no other
    node is placing, else after it) tells the nodes."""
    new = inserts_of(batch)
    if new.packs:
        _insert(cursor, "packs", PACK_COLUMNS, new.packs, "ON CONFLICT (sha256) DO NOTHING")
    if new.seeds:
        _insert(cursor, "seeds", SEED_COLUMNS, new.seeds)
    if new.seats:
        _insert(cursor, "seats", SEAT_COLUMNS, new.seats)
    if new.geneses:
        listing = [
            [g.game_id, g.created_at, g.game_kind, g.tournament_id, [s.name for s in g.seats]]
            for g in new.geneses
        ]
        _insert(cursor, "games", "game_id, created_at, game_kind, tournament_id, players", listing)
    if new.drafts:
        _insert(cursor, "pending_games", DRAFT_COLUMNS, new.drafts)
    if new.entropy:
        _insert(cursor, "seat_entropy", ENTROPY_COLUMNS, new.entropy)
    for game_id in batch.started:
        cursor.execute(b"DELETE FROM pending_games WHERE game_id = %s", [game_id])
    rows = batch.appended()
    if rows:
        _insert(cursor, "events", ROW_COLUMNS, [row_values(r) for r in rows])
        _wait_for_places(cursor, rows)
    if new.rejections:
        _insert(cursor, "rejections", REJECTION_COLUMNS, new.rejections)
    if batch.outcomes:
        insert_projection(cursor, batch.outcomes)
    return rows


def _wait_for_places(cursor: psycopg.Cursor[Any], rows: Sequence[Row]) -> None:
    """The commit's rows, in order, with their leaves, as one row of ``log_pending``: its
    number (an identity, taken without waiting for anyone) orders it among the commits
    one placement finds, and the commit's rows stay together, in the batch's order."""
    cursor.execute(
        b"INSERT INTO log_pending (game_ids, seqs, leaf_hashes) VALUES (%s, %s, %s)",
        [[r.game_id for r in rows], [r.seq for r in rows], [leaf_hash_of(r) for r in rows]],
    )


def insert_projection(cursor: psycopg.Cursor[Any], projected: projection.Projected) -> None:
    """Insert projection rows, one pipelined statement per table."""
    merged: dict[str, list[list[Any]]] = {}
    for name, rows in projected:
        merged.setdefault(name, []).extend(rows)
    for name, rows in merged.items():
        marks = ", ".join(["%s"] * len(rows[0]))
        cursor.executemany(f"INSERT INTO {name} VALUES ({marks})".encode(), rows)
