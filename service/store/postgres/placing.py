"""Placing committed rows in the log tree: after their commit, in batches, by whichever
node holds the placement lock.

A commit writes its rows with no place (``writes.py``: one row of ``log_pending`` for the
commit, its rows' keys and leaves in order) and touches no row that another node's commit
writes too, so the commits of several nodes do not wait for one another. A placement
(``place``) takes a transaction-scoped advisory lock (one fixed key for the log), takes
every pending commit it can see (each committed before it looked), orders them by their
number, gives their rows the positions from the tree's size on (a commit's rows
together, in the batch's order), writes their ``log_leaves``, moves the size on,
notifies ``feastlog_rows`` with each game's last seq placed, and commits.

A commit that finds the lock free, without waiting for it, is a placement itself
(``place_in_commit``: its own rows and every other commit pending, in its transaction),
so that one node alone commits once, as when positions were taken in the commit. A
commit that finds the lock held (another node placing) goes on without it, and the node
places right after its commit, in a short transaction of its own, waiting for the lock
there (``position_of``). One placement covers every node's commits pending at that
moment, so under load the placements batch across nodes; a node whose rows another
node placed first finds them placed and reads their positions.

A game's rows are placed in seq order: the commit of seq n + 1 is written once seq n
was committed, so it takes a later number, and it cannot be seen pending before seq n
is. A row is placed before the writer answers its waiters (``PgStore.write`` returns
its position), so a row acknowledged has its position already, and it never changes.
A node that dies between its commit and its placement leaves its rows pending: the
next placement of any node places them, and so does every start (``opening.prepare``).
Trees, heads, proofs and ``rows_from`` read ``log_leaves`` alone: they never hold a row
not placed yet.

This is the shape of Tessera's integrator (entries sequenced first, integrated into the
tree by one process at a time, in batches) and of the notification log of the
eventsourcing library, whose positions are given in one place, in order.
"""

from __future__ import annotations

from typing import Any

import psycopg

from feastlog.replay.record.rows import Row
from feastlog.service.store.postgres.schema import NOTIFY_CHANNEL, SCHEMA_NAME
from feastlog.service.store.sql import LEAF_COLUMNS, position_query

PLACEMENT_LOCK = f"{SCHEMA_NAME}-placement"  # hashed to the advisory lock's key


def place_in_commit(cursor: psycopg.Cursor[Any], first: Row) -> int | None:
    """The position of the commit being written (its first row ``first``), placed in its
    own transaction when no placement is under way (the lock taken without waiting), with
    every commit pending then; None when another node holds the lock: the commit goes on
    without waiting, and its rows are placed after it (``position_of``).

    With one node, or nodes not committing at the same moment, a commit is its own
    placement (one transaction, one flush to disk, as when positions were taken in the
    commit); when nodes commit at once, only the one holding the lock waits for no one,
    and the placement after the others' commits takes all of theirs at once.
    """
    cursor.execute(b"SELECT pg_try_advisory_xact_lock(hashtext(%s))", [PLACEMENT_LOCK])
    got = cursor.fetchone()
    if not got or not got[0]:
        return None
    return place(cursor, locked=True).get((first.game_id, first.seq))


def place(cursor: psycopg.Cursor[Any], locked: bool = False) -> dict[tuple[str, int], int]:
    """One placement, in the caller's transaction (the lock is held until it ends;
    ``locked``: taken already): every commit pending that this transaction sees, its own
    among them, placed. Answers the position of each commit's first row, by its (game id,
    seq)."""
    if not locked:
        cursor.execute(b"SELECT pg_advisory_xact_lock(hashtext(%s))", [PLACEMENT_LOCK])
    # under the lock, a statement that sees every commit finished before it began; a
    # commit finished after it waits for the next placement (its own node's, at least)
    cursor.execute(b"DELETE FROM log_pending RETURNING n, game_ids, seqs, leaf_hashes")
    pending = sorted(cursor.fetchall())
    if not pending:
        return {}
    count = sum(len(seqs) for _, _, seqs, _ in pending)
    cursor.execute(b"UPDATE log_tree SET size = size + %s RETURNING size", [count])
    size = cursor.fetchone()
    assert size is not None  # the row is made with the schema
    at = int(size[0]) - count
    firsts: dict[tuple[str, int], int] = {}
    leaves: list[list[object]] = []
    heads: dict[str, int] = {}
    for _, game_ids, seqs, hashes in pending:
        firsts[str(game_ids[0]), int(seqs[0])] = at
        for game_id, seq, leaf in zip(game_ids, seqs, hashes, strict=True):
            leaves.append([at, game_id, int(seq), bytes(leaf)])
            heads[game_id] = max(heads.get(game_id, 0), int(seq))
            at += 1
    cursor.executemany(
        f"INSERT INTO log_leaves ({LEAF_COLUMNS}) VALUES (%s, %s, %s, %s)".encode(), leaves
    )
    # delivered when the placement commits, to every node listening: their streams read
    # the rows by position from then on
    cursor.executemany(
        b"SELECT pg_notify(%s, %s)",
        [[NOTIFY_CHANNEL, f"{game_id} {seq}"] for game_id, seq in heads.items()],
    )
    return firsts


def position_of(con: psycopg.Connection[Any], first: Row) -> int:
    """Place what is pending, then answer the position of the commit whose first row is
    ``first`` (committed before this was called): placed here, or by a placement of
    another node that saw it first."""
    with con.transaction(), con.cursor() as cursor:
        placed = place(cursor)
        found = placed.get((first.game_id, first.seq))
        if found is not None:
            return found
        cursor.execute(position_query("%s").encode(), [first.game_id, first.seq])
        kept = cursor.fetchone()
    if kept is None:  # cannot be: the commit ended before this placement looked
        raise psycopg.DataError(f"row {first.seq} of {first.game_id} has no place after placing")
    return int(kept[0])
