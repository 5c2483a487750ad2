"""A test-only fault: the operator rewrites an acknowledged row of a DuckDB file and makes
everything after it agree, as whoever holds the file and the seeds can: the chain resealed
from that row on (and with the rows' hashes their leaves in the log tree), so that the
file audits clean and the tree is consistent with its rows; the heads kept over the
changed rows are deleted, so the server signs new ones.  Only what left the server before
(receipts, heads a witness holds) can tell."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import duckdb

from feastlog.replay.record.rows import FORMAT_2, Row, seal
from feastlog.service.store.sql import ROW_COLUMNS, row_of


def rewrite_row(db: Path, game_id: str, seq: int, body: bool = False) -> Row:
    """Rewrite row ``seq`` of a game, reseal every row from it on and recompute their
    leaves; the new row.  By default its time changes (the fold never reads it, so the
    record still audits clean: only receipts and heads can tell); with ``body`` it takes
    another seat's command bytes (the next command row's from another seat)."""
    with duckdb.connect(str(db)) as con:
        rows = [
            row_of(r)
            for r in con.execute(
                f"SELECT {ROW_COLUMNS} FROM events WHERE game_id = ? ORDER BY seq", [game_id]
            ).fetchall()
        ]
        seed_row = con.execute(
            "SELECT server_seed FROM seeds WHERE game_id = ?", [game_id]
        ).fetchone()
        assert seed_row is not None
        seed = bytes(seed_row[0])
        target = rows[seq - 1]
        if body:
            other = next(
                r
                for r in rows[seq:]
                if r.kind == "command" and r.actor != target.actor and r.body != target.body
            )
            changed = [replace(target, body=other.body)]
        else:
            changed = [replace(target, recorded_at="2000-01-01T00:00:00.000000Z")]
        changed[0] = seal(changed[0], rows[seq - 2].hash, FORMAT_2, seed)
        for row in rows[seq:]:
            changed.append(seal(row, changed[-1].hash, FORMAT_2, seed))
        for row in changed:
            con.execute(
                "UPDATE events SET body = ?, recorded_at = ?, prev_hash = ?, hash = ?, "
                "commitment = ? WHERE game_id = ? AND seq = ?",
                [
                    row.body,
                    row.recorded_at,
                    row.prev_hash,
                    row.hash,
                    row.commitment,
                    game_id,
                    row.seq,
                ],
            )
        # and the heads that would give it away: every head over the changed rows
        first = con.execute(
            "SELECT tree_position FROM events WHERE game_id = ? AND seq = ?", [game_id, seq]
        ).fetchone()
        assert first is not None
        con.execute("DELETE FROM tree_heads WHERE size > ?", [first[0]])
        con.execute("DELETE FROM cosignatures WHERE size > ?", [first[0]])
        con.execute("CHECKPOINT")
    return changed[0]
