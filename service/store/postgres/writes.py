"""What one group commit writes: every table of a batch, its rows waiting for their
places in the log tree (``placing.py`` gives them, after the commit)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from feastlog.replay.proof.signed import leaf_hash_of
from feastlog.replay.record.rows import Row
from feastlog.service.store import Batch, projection
from feastlog.service.store.sql import REJECTION_COLUMNS, ROW_COLUMNS, row_values
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


def write_rows(cursor: psycopg.Cursor[Any], batch: Batch) -> list[Row]:
    """Everything a batch writes, one statement per table; the rows it appends
    (``Batch.appended``), which wait in ``log_pending`` for their places.

    Nothing here touches a row another node's commit writes too, and nothing notifies
    (a notifying commit takes PostgreSQL's one queue lock until it ends): commits of
    several nodes go on side by side, and the placement (in the commit when no other
    node is placing, else after it) tells the nodes."""
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
    if rows:
        _insert(cursor, "events", ROW_COLUMNS, [row_values(r) for r in rows])
        _wait_for_places(cursor, rows)
    if batch.rejections:
        _insert(
            cursor,
            "rejections",
            REJECTION_COLUMNS,
            [list(vars(r).values()) for r in batch.rejections],
        )
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
