"""One ordered scan of the log through a server-side cursor, grouped into games."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import psycopg

from feastlog.service.store import StoredGame
from feastlog.service.store.sql import ROW_COLUMNS, games_of_scan, rows_by_place_query, share_of


def scan(
    con: psycopg.Connection[Any],
    where: list[str],
    params: list[object],
    fetch: int,
    share: tuple[int, int] | None = None,
) -> Iterator[tuple[int, StoredGame]]:
    """(place, game) from one ordered scan through a server-side cursor (in a transaction);
    ``share``: a run of the games of about as many rows as the others (``share_of``)."""
    packs = {
        str(sha): bytes(body)
        for sha, body in con.execute("SELECT sha256, body FROM packs").fetchall()
    }
    if share is not None:
        counts = con.execute(rows_by_place_query("games", where).encode(), params).fetchall()
        first, end = share_of(counts, share)
        where = [*where, f"coalesce(g.n, 0) >= {int(first)} AND coalesce(g.n, 0) < {int(end)}"]
    columns = ", ".join(f"e.{c.strip()}" for c in ROW_COLUMNS.split(","))
    query = (
        f"SELECT {columns}, coalesce(g.n, 0), CASE WHEN e.seq = 1 THEN s.server_seed END "
        "FROM events e LEFT JOIN games g USING (game_id) "
        "LEFT JOIN seeds s ON s.game_id = e.game_id AND e.seq = 1 "
        f"{'WHERE ' + ' AND '.join(where) if where else ''} "
        "ORDER BY coalesce(g.n, 0), e.game_id, e.seq"
    )
    with con.cursor(name="feastlog_scan") as cursor:
        cursor.execute(query.encode(), params)
        yield from games_of_scan(iter(lambda: cursor.fetchmany(fetch), []), packs)
