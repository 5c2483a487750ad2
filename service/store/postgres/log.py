"""``PgStore``: the PostgreSQL event store (see the package's documentation)."""

from __future__ import annotations

import logging
import time
from collections.abc import Generator, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool

from feastlog.replay.proof.signed import Cosignature, TreeHead
from feastlog.replay.record.rows import Row
from feastlog.replay.tournament.outcomes import Standing
from feastlog.service.store import Listed, PendingGame, Rejection, StoredGame, projection
from feastlog.service.store.port import shown
from feastlog.service.store.postgres.errors import open_error, store_error, translated
from feastlog.service.store.postgres.opening import (
    CONNECT_TIMEOUT,
    check_schema,
    first_connection,
    prepare,
    projection_current,
    rebuild_from_log,
    refill_projection,
)
from feastlog.service.store.postgres.placing import place_in_commit, position_of
from feastlog.service.store.postgres.scans import scan
from feastlog.service.store.postgres.schema import SCHEMA_NAME
from feastlog.service.store.postgres.writes import write_rows
from feastlog.service.store.records import Batch
from feastlog.service.store.sql import (
    COSIGNATURE_COLUMNS,
    DEALT_FROM,
    HEAD_COLUMNS,
    KEY_COLUMNS,
    REJECTION_COLUMNS,
    REVEALED_AT,
    ROW_COLUMNS,
    TOURNAMENT_ENDED,
    TWINS_RUNNING,
    TWINS_RUNNING_BY_LOG,
    WIN_PARTS,
    cosignature_of,
    cosignature_values,
    count_query,
    counted,
    head_of,
    head_values,
    leaves_query,
    list_query,
    listed_of,
    position_query,
    rejections_of,
    row_of,
    rows_from_query,
    standings_of,
    standings_query,
    unnumbered,
)
from feastlog.v1 import record_pb2

POOL_SIZE = 8
# Pauses before placing committed rows again after a placement failed (about 30 s in all).
PLACE_AGAIN = (0.05, 0.2, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0)

log = logging.getLogger("feastlog.store")


class PgStore:
    """A PostgreSQL database holding game records, shared by every node that opens it."""

    commit = None  # the writer commits on the store's thread (psycopg lets go of the lock)

    def __init__(self, dsn: str, read_only: bool = False, pool_size: int = POOL_SIZE) -> None:
        self.path = shown(dsn)
        self.dsn = dsn  # for the connection that listens to other nodes' commits
        self.read_only = read_only
        self.shared = True
        self._closed = False
        with first_connection(dsn, self.path) as con:
            try:
                if read_only:
                    check_schema(con, self.path)
                else:
                    prepare(con, self.path)
            except psycopg.Error as error:
                raise open_error(self.path, error, dsn) from error

        def configure(con: psycopg.Connection[Any]) -> None:
            con.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(SCHEMA_NAME)))
            if read_only:
                con.execute("SET default_transaction_read_only = on")

        self.pool = ConnectionPool(
            dsn,
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True, "connect_timeout": CONNECT_TIMEOUT},
            configure=configure,
            open=False,
            name="feastlog",
        )
        try:
            self.pool.open(wait=True, timeout=CONNECT_TIMEOUT)
        except psycopg.Error as error:
            self.pool.close()
            raise open_error(self.path, error) from error

    def close(self) -> None:
        """Return every connection (a second close does nothing)."""
        if not self._closed:
            self._closed = True
            self.pool.close()

    def reader(self) -> PgStore:
        """The same store: its pool serves any thread."""
        return self

    @contextmanager
    def _cursor(self) -> Iterator[psycopg.Cursor[Any]]:
        with self.pool.connection() as con, con.cursor() as cursor:
            yield cursor

    def _all(self, query: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        with self._cursor() as cursor:
            cursor.execute(query.encode(), params)
            return cursor.fetchall()

    def _one(self, query: str, params: Sequence[object] = ()) -> tuple[Any, ...] | None:
        found = self._all(query, params)
        return found[0] if found else None

    def checkpoint(self, least: int) -> int:
        """Nothing to do: PostgreSQL runs its own checkpoints, off the commit path."""
        return 0

    @translated
    def write(self, batch: Batch) -> int | None:
        """Commit a batch in one transaction: all of it or none of it; place its rows in
        the log tree (``placing.py``: with every other node's rows pending, in the commit
        when no other node is placing, else in a short transaction right after it) and
        answer the log position of its first appended row.

        The placement tells every node listening on ``feastlog_rows`` which games moved on.
        """
        with self.pool.connection() as con:
            with con.transaction(), con.cursor() as cursor:
                rows = write_rows(cursor, batch)
                placed = place_in_commit(cursor, rows[0]) if rows else None
            if not rows:
                return None
            if placed is not None:
                return placed
            try:
                return position_of(con, rows[0])
            except psycopg.Error as error:
                failed = error
        return self._placed_again(rows[0], failed)

    def _placed_again(self, first: Row, failed: psycopg.Error) -> int:
        """The position of rows committed whose placement failed, placing them again on
        other connections for a while (the commit holds: its waiters are answered only
        once the rows have their place); past that, the store failed, and the rows wait
        for the next placement of any node, or the next start."""
        for pause in PLACE_AGAIN:
            log.warning(
                "placing committed rows in the log tree failed (%s); again in %g s",
                type(failed).__name__,
                pause,
            )
            time.sleep(pause)
            try:
                with self.pool.connection() as con:
                    return position_of(con, first)
            except psycopg.Error as error:
                failed = error
        raise failed

    @translated
    def game_ids(self) -> list[str]:
        """Every game id with rows, oldest first."""
        found = self._all("SELECT game_id FROM events WHERE seq = 1 ORDER BY recorded_at, game_id")
        return [str(r[0]) for r in found]

    @translated
    def rows(self, game_id: str) -> tuple[Row, ...]:
        """A game's rows in seq order."""
        found = self._all(
            f"SELECT {ROW_COLUMNS} FROM events WHERE game_id = %s ORDER BY seq", [game_id]
        )
        return tuple(row_of(r) for r in found)

    @translated
    def rows_after(self, game_id: str, seq: int) -> tuple[Row, ...]:
        """A game's rows after ``seq``, in seq order (what another node wrote since)."""
        found = self._all(
            f"SELECT {ROW_COLUMNS} FROM events WHERE game_id = %s AND seq > %s ORDER BY seq",
            [game_id, seq],
        )
        return tuple(row_of(r) for r in found)

    @translated
    def load(self, game_id: str) -> StoredGame | None:
        """A game's rows, seed, pack and seat names; None when there is no such game.

        One transaction, so the rows and the seed are of the same moment.
        """
        with self.pool.connection() as con, con.transaction(), con.cursor() as cursor:
            cursor.execute(
                f"SELECT {ROW_COLUMNS} FROM events WHERE game_id = %s ORDER BY seq".encode(),
                [game_id],
            )
            rows = tuple(row_of(r) for r in cursor.fetchall())
            if not rows:
                return None
            cursor.execute(b"SELECT server_seed FROM seeds WHERE game_id = %s", [game_id])
            seed = cursor.fetchone()
            sha = record_pb2.Genesis.FromString(rows[0].body).pack_sha256
            cursor.execute(b"SELECT body FROM packs WHERE sha256 = %s", [sha])
            pack = cursor.fetchone()
            cursor.execute(b"SELECT name FROM seats WHERE game_id = %s ORDER BY seat", [game_id])
            names = tuple(str(n[0]) for n in cursor.fetchall())
        return StoredGame(
            rows, bytes(seed[0]) if seed else b"", bytes(pack[0]) if pack else b"", names
        )

    @translated
    def count_games(self, game_kind: str = "") -> tuple[int, int]:
        """(games with rows, rows), of one kind or all."""
        return counted(self._one(*count_query("%s", game_kind)))

    def scan(
        self, part: tuple[int, int] | None = None, game_kind: str = ""
    ) -> Generator[StoredGame]:
        """Every game with rows, oldest first, from one ordered, streamed scan of the log."""
        return unnumbered(self.scan_numbered(part, game_kind))

    def scan_numbered(
        self,
        part: tuple[int, int] | None = None,
        game_kind: str = "",
        fetch: int = 20_000,
        share: tuple[int, int] | None = None,
    ) -> Generator[tuple[int, StoredGame]]:
        """(place in the game list, game) for every game with rows, in one streamed scan.

        A server-side cursor in one read transaction: the rows come ``fetch`` at a time,
        all of one snapshot. ``part=(k, n)`` keeps the games whose place is k modulo n,
        ``share=(k, m)`` the k-th of m runs of them of about as many rows each (counted
        in the same snapshot; the scans of other transactions may count other rows).
        """
        where: list[str] = []
        params: list[object] = []
        if part is not None:
            where.append("coalesce(g.n, 0) %% %s = %s")
            params += [int(part[1]), int(part[0])]
        if game_kind:
            where.append("g.game_kind = %s")
            params.append(game_kind)
        try:
            with self.pool.connection() as con, con.transaction():
                yield from scan(con, where, params, fetch, share)
        except psycopg.Error as error:
            raise store_error("scan", error) from error

    @translated
    def pending(self) -> list[PendingGame]:
        """Games waiting for seat entropy, with what each seat has sent so far."""
        found = self._all(
            "SELECT p.game_id, p.draft, s.server_seed FROM pending_games p "
            "JOIN seeds s USING (game_id) ORDER BY p.game_id"
        )
        return [self._pending_game(str(g), bytes(d), bytes(s)) for g, d, s in found]

    @translated
    def pending_game(self, game_id: str) -> PendingGame | None:
        """One game waiting for seat entropy (None once it has started, or if unknown)."""
        found = self._one(
            "SELECT p.draft, s.server_seed FROM pending_games p JOIN seeds s USING (game_id) "
            "WHERE p.game_id = %s",
            [game_id],
        )
        return self._pending_game(game_id, bytes(found[0]), bytes(found[1])) if found else None

    def _pending_game(self, game_id: str, draft: bytes, seed: bytes) -> PendingGame:
        sha = record_pb2.Genesis.FromString(draft).pack_sha256
        pack = self._one("SELECT body FROM packs WHERE sha256 = %s", [sha])
        sent = self._all("SELECT seat, entropy FROM seat_entropy WHERE game_id = %s", [game_id])
        return PendingGame(
            game_id,
            draft,
            seed,
            bytes(pack[0]) if pack else b"",
            {int(seat): bytes(e) for seat, e in sent},
        )

    @translated
    def seat_of_token(self, digest: str) -> tuple[str, int] | None:
        """(game id, seat) of a seat token's sha256, looked up by index; None if unknown."""
        found = self._one(
            "SELECT game_id, seat FROM seats WHERE token_sha256 = %s LIMIT 1", [digest]
        )
        return (str(found[0]), int(found[1])) if found else None

    @translated
    def arbiter_of_key(self, digest: str) -> str | None:
        """The name of the arbiter whose key has this sha256, unless revoked; None if unknown."""
        found = self._one(
            "SELECT name FROM arbiters WHERE key_sha256 = %s AND revoked_at = '' LIMIT 1",
            [digest],
        )
        return str(found[0]) if found else None

    @translated
    def add_arbiter(self, name: str, digest: str, at: str) -> bool:
        """Record a named arbiter's key; False when the name holds a key not revoked.

        One statement, so two nodes adding the same name at once cannot both succeed.
        """
        with self.pool.connection() as con, con.transaction(), con.cursor() as cursor:
            cursor.execute(
                b"INSERT INTO arbiters VALUES (%s, %s, %s, '') ON CONFLICT (name) DO UPDATE "
                b"SET key_sha256 = excluded.key_sha256, added_at = excluded.added_at, "
                b"revoked_at = '' WHERE arbiters.revoked_at <> '' RETURNING name",
                [name, digest, at],
            )
            return cursor.fetchone() is not None

    @translated
    def revoke_arbiter(self, name: str, at: str) -> bool:
        """Revoke a named arbiter's key; False when there is no such arbiter holding one."""
        with self.pool.connection() as con, con.transaction(), con.cursor() as cursor:
            cursor.execute(
                b"UPDATE arbiters SET revoked_at = %s WHERE name = %s AND revoked_at = '' "
                b"RETURNING name",
                [at, name],
            )
            return cursor.fetchone() is not None

    @translated
    def arbiters(self) -> list[tuple[str, str, str]]:
        """Every named arbiter: (name, added at, revoked at or '')."""
        found = self._all("SELECT name, added_at, revoked_at FROM arbiters ORDER BY name")
        return [(str(n), str(a), str(r)) for n, a, r in found]

    @translated
    def rejections(self, game_id: str) -> list[Rejection]:
        """A game's refused commands, oldest first."""
        found = self._all(
            f"SELECT {REJECTION_COLUMNS} FROM rejections WHERE game_id = %s ORDER BY recorded_at",
            [game_id],
        )
        return rejections_of(found)

    @translated
    def listed(
        self, game_kind: str = "", tournament_id: str = "", before: int = 0, limit: int = 50
    ) -> list[Listed]:
        """Up to ``limit`` games, newest first, listed before place ``before`` (0: from the top).

        A finished game comes with its number of rows (from the projection).
        """
        sql, params = list_query("%s", game_kind, tournament_id, before, limit)
        return listed_of(self._all(sql, params))

    @translated
    def last_seq(self, game_id: str) -> int:
        """A game's last seq (0 when it has no rows yet), looked up by index."""
        found = self._one("SELECT coalesce(max(seq), 0) FROM events WHERE game_id = %s", [game_id])
        return int(found[0]) if found else 0

    @translated
    def known_games(self, game_ids: Sequence[str]) -> dict[str, str]:
        """Of these games, those stored, each with the hash of its last row ('' if none)."""
        found = self._all(
            "SELECT l.game_id, coalesce((SELECT e.hash FROM events e WHERE e.game_id = l.game_id "
            "ORDER BY e.seq DESC LIMIT 1), '') FROM games l WHERE l.game_id = ANY(%s)",
            [list(game_ids)],
        )
        return {str(g): str(h) for g, h in found}

    @translated
    def tournament_games(self, tournament_id: str) -> int:
        """How many games (running or finished) a tournament has."""
        found = self._one("SELECT count(*) FROM games WHERE tournament_id = %s", [tournament_id])
        return int(found[0]) if found else 0

    @translated
    def twins_running(self, game_id: str) -> int:
        """How many other games dealt from this game's server seed have not ended (running,
        or waiting for seat entropy): while one has, a finished game with a supplied seed
        is held back (``replay.record.visibility.Release``)."""
        query = TWINS_RUNNING if self.projection_current() else TWINS_RUNNING_BY_LOG
        found = self._one(query.replace("?", "%s"), [game_id])
        return int(found[0]) if found else 0

    @translated
    def dealt_from(self, server_seed: bytes) -> list[tuple[str, str, str]]:
        """Every game dealt from this server seed, oldest first: (game id, created at, when
        its seed was revealed, '' while it runs or waits for seat entropy)."""
        found = self._all(DEALT_FROM.replace("?", "%s"), [server_seed])
        dealt = []
        for game_id, created_at in found:
            ended = self._one(REVEALED_AT.replace("?", "%s"), [game_id])
            dealt.append((str(game_id), str(created_at), str(ended[0]) if ended else ""))
        return dealt

    @translated
    def projection_current(self) -> bool:
        """Whether the outcomes projection is there, of this version."""
        with self.pool.connection() as con:
            return projection_current(con)

    @translated
    def stats(self, tournament_id: str = "") -> list[projection.KindStats]:
        """Per game kind: games scored, the win rate by seat position, a game-specific figure."""
        where = "WHERE scored" + (" AND tournament_id = %(t)s" if tournament_id else "")
        params = {"t": tournament_id}
        with self._cursor() as cursor:
            kinds = cursor.execute(
                f"SELECT game_kind, count(*) FROM outcome_games {where} "
                "GROUP BY 1 ORDER BY 1".encode(),
                params,
            ).fetchall()
            rates = cursor.execute(
                "SELECT s.game_kind, s.seat, avg(CASE WHEN s.won THEN 1.0 ELSE 0.0 END) "
                f"FROM outcome_seats s WHERE s.game_id IN (SELECT game_id FROM outcome_games "
                f"{where}) GROUP BY 1, 2 ORDER BY 1, 2".encode(),
                params,
            ).fetchall()
            out = []
            for kind, played in kinds:
                label, query = projection.figure_of(kind)
                if tournament_id and label:
                    query += (" AND" if "WHERE" in query else " WHERE") + (
                        " game_id IN (SELECT game_id FROM outcome_games "
                        "WHERE tournament_id = %(t)s)"
                    )
                value = cursor.execute(query.encode(), params if label else {}).fetchone()
                figure = None if value is None or value[0] is None else float(value[0])
                by_seat = tuple(float(r[2]) for r in rates if r[0] == kind)
                out.append(projection.KindStats(kind, int(played), by_seat, label, figure))
        return out

    @translated
    def standings(self, tournament_id: str) -> tuple[list[Standing], int]:
        """A tournament's standings from its finished games, and how many games that is.

        The same reading as the DuckDB store's: void games count as played with no points.
        """
        query = standings_query(f"{WIN_PARTS} / cardinality(g.winners)")
        found = self._all(query.replace("?", "%s"), [tournament_id])
        return standings_of(found, self._one(TOURNAMENT_ENDED.replace("?", "%s"), [tournament_id]))

    @translated
    def rebuild_projection(self, projected: Iterable[projection.Projected]) -> int:
        """Make the outcomes projection again from these games' rows, in one transaction.

        The games must be every finished game of the log: while nodes are writing, use
        ``rebuild_projection_from_log``, which holds writers off while it reads.
        """
        with self.pool.connection() as con, con.transaction():
            return refill_projection(con, projected)

    @translated
    def rebuild_projection_from_log(self) -> int:
        """Make the outcomes projection again from the log, in one transaction."""
        with self.pool.connection() as con, con.transaction():
            return rebuild_from_log(con)

    @translated
    def leaves(self, after: int, limit: int = 100_000) -> list[bytes]:
        """The log tree's leaf hashes from position ``after`` on, in order, at most ``limit``."""
        return [bytes(r[0]) for r in self._all(leaves_query("%s"), [after, limit])]

    @translated
    def leaf_position(self, game_id: str, seq: int) -> int | None:
        """A row's position in the log tree (None: no such row)."""
        found = self._one(position_query("%s"), [game_id, seq])
        return int(found[0]) if found else None

    @translated
    def rows_from(self, position: int, limit: int = 1000) -> list[tuple[int, Row]]:
        """The rows from log position ``position`` on, in log order, with their positions."""
        query = rows_from_query("log_leaves", "position", "%s")
        return [(int(r[0]), row_of(r[1:])) for r in self._all(query, [position, limit])]

    @translated
    def add_tree_head(self, head: TreeHead) -> None:
        """Keep a signed tree head."""
        with self._cursor() as cursor:
            cursor.execute(
                f"INSERT INTO tree_heads ({HEAD_COLUMNS}) VALUES (%s, %s, %s, %s, %s)".encode(),
                head_values(head),
            )

    @translated
    def tree_heads(self, size: int = -1) -> list[TreeHead]:
        """The signed tree heads kept, by size then time (``size``: of that size only)."""
        where, params = ("WHERE size = %s", [size]) if size >= 0 else ("", [])
        query = f"SELECT {HEAD_COLUMNS} FROM tree_heads {where} ORDER BY size, signed_at"
        return [head_of(r) for r in self._all(query, params)]

    @translated
    def add_cosignature(self, cosigned: Cosignature) -> None:
        """Keep a witness's cosignature of a head."""
        marks = ", ".join(["%s"] * 7)
        with self._cursor() as cursor:
            cursor.execute(
                f"INSERT INTO cosignatures ({COSIGNATURE_COLUMNS}) VALUES ({marks})".encode(),
                cosignature_values(cosigned),
            )

    @translated
    def cosignatures(self, size: int) -> list[Cosignature]:
        """The witnesses' cosignatures of heads of ``size``."""
        query = (
            f"SELECT {COSIGNATURE_COLUMNS} FROM cosignatures WHERE size = %s ORDER BY witnessed_at"
        )
        return [cosignature_of(r) for r in self._all(query, [size])]

    @translated
    def add_server_key(self, public_key: str, at: str) -> None:
        """Note a signing key the server uses (kept for ever, so old receipts verify)."""
        with self._cursor() as cursor:
            cursor.execute(
                f"INSERT INTO server_keys ({KEY_COLUMNS}) VALUES (%s, %s) "
                "ON CONFLICT (public_key) DO NOTHING".encode(),
                [public_key, at],
            )

    @translated
    def server_keys(self) -> list[tuple[str, str]]:
        """Every signing key the server has used: (public key hex, first used), oldest first."""
        found = self._all(f"SELECT {KEY_COLUMNS} FROM server_keys ORDER BY first_used")
        return [(str(k), str(t)) for k, t in found]

    # Seat links: codes and sessions by their sha256, shared by every node.  Each write is
    # one statement, or one transaction, so that nodes racing for a code or a seat agree.

    @translated
    def add_seat_code(self, digest: str, game_id: str, seat: int) -> None:
        """Keep a seat's new one-time code (its sha256) in place of the seat's unused one:
        one statement, so two nodes making links for one seat at once leave one code."""
        with self._cursor() as cursor:
            cursor.execute(
                b"INSERT INTO seat_codes VALUES (%s, %s, %s) ON CONFLICT (game_id, seat) "
                b"DO UPDATE SET code_sha256 = excluded.code_sha256",
                [digest, game_id, seat],
            )

    @translated
    def seat_of_code(self, digest: str) -> tuple[str, int] | None:
        """(game id, seat) of an unused code's sha256; None: spent, replaced or never made."""
        found = self._one("SELECT game_id, seat FROM seat_codes WHERE code_sha256 = %s", [digest])
        return (str(found[0]), int(found[1])) if found else None

    @translated
    def take_seat_code(self, digest: str, game_id: str, session: str, most: int) -> int | None:
        """Spend a code of ``game_id`` and open a session on its seat: the code's delete
        and the session's insert are one statement, so of two nodes taking one code at
        once exactly one finds it (the other's delete waits for the first to commit, then
        finds no row).  Sessions opened before the ``most`` newest go in the same
        transaction."""
        with self.pool.connection() as con, con.transaction(), con.cursor() as cursor:
            cursor.execute(
                b"WITH taken AS (DELETE FROM seat_codes WHERE code_sha256 = %s AND game_id = %s "
                b"RETURNING game_id, seat) INSERT INTO seat_sessions (session_sha256, game_id, "
                b"seat) SELECT %s, game_id, seat FROM taken RETURNING seat, n",
                [digest, game_id, session],
            )
            found = cursor.fetchone()
            if found is None:
                return None
            cursor.execute(b"DELETE FROM seat_sessions WHERE n <= %s", [int(found[1]) - most])
        return int(found[0])

    @translated
    def seat_of_session(self, digest: str) -> tuple[str, int] | None:
        """(game id, seat) of an open session's sha256; None: ended, dropped or never opened."""
        found = self._one(
            "SELECT game_id, seat FROM seat_sessions WHERE session_sha256 = %s", [digest]
        )
        return (str(found[0]), int(found[1])) if found else None

    @translated
    def end_seat_session(self, digest: str) -> bool:
        """End a session (its sha256); False when it was not open."""
        with self._cursor() as cursor:
            cursor.execute(
                b"DELETE FROM seat_sessions WHERE session_sha256 = %s RETURNING seat", [digest]
            )
            return cursor.fetchone() is not None

    @translated
    def adopt_seat_links(
        self, codes: Sequence[tuple[str, str, int]], sessions: Sequence[tuple[str, str, int]]
    ) -> int:
        """Take in codes and sessions kept elsewhere before, in one transaction; how many
        were new (one already kept, or a code for a seat that holds one, is left)."""
        new = 0
        with self.pool.connection() as con, con.transaction(), con.cursor() as cursor:
            for digest, game_id, seat in codes:
                cursor.execute(
                    b"INSERT INTO seat_codes VALUES (%s, %s, %s) ON CONFLICT DO NOTHING "
                    b"RETURNING seat",
                    [digest, game_id, seat],
                )
                new += cursor.fetchone() is not None
            for digest, game_id, seat in sessions:
                cursor.execute(  # not ON CONFLICT: that would take a number all the same
                    b"INSERT INTO seat_sessions (session_sha256, game_id, seat) "
                    b"SELECT %s, %s, %s WHERE NOT EXISTS (SELECT 1 FROM seat_sessions "
                    b"WHERE session_sha256 = %s) RETURNING seat",
                    [digest, game_id, seat, digest],
                )
                new += cursor.fetchone() is not None
        return new
