"""The PostgreSQL event store: one log that any number of feastlog nodes share.

Chosen by ``--db postgresql://USER:PASSWORD@HOST:PORT/DATABASE``. The tables are those of
the DuckDB store (``service/store.py``), in a schema of their own, ``feastlog``, owned
by the role feastlog connects as:

- ``events`` is keyed by (game_id, seq), and a unique index on (game_id, actor,
  command_id) for non-empty ids holds each sender's command ids once per game. These
  keys, not any node's memory, are what keep two nodes from forking a game or
  appending a command twice: a write that clashes raises ``StoreConflict``, and the
  service reloads the game and answers as the command's semantics say;
- ``games`` numbers games with an identity column, so nodes never hand out the same place;
- the outcomes projection (``service/projection.py``) is written in the same transaction
  as the row that ends each game.

Secrets (server seeds, seat-token hashes, sealed commands before the reveal) stay
feastlog's: the schema and every table are owner-only. Opening the store for writing
revokes every privilege PUBLIC or another role holds on them, with a warning naming what
was taken back (superusers can read everything; see docs/scaling.md for the setup).

Connections come from a pool (psycopg_pool), so the store may be used from any thread.
Bulk readers read ``events`` in one ordered scan through a server-side cursor. Driver
errors are translated here, once.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import fields
from fractions import Fraction
from typing import Any, ParamSpec, TypeVar

import psycopg
from psycopg import sql
from psycopg_pool import ConnectionPool

from feastlog.v1 import record_pb2
from replay.record import Row
from replay.standings import Standing
from service import projection
from service.incidents import new_incident_id
from service.store import (
    Batch,
    CannotOpenStore,
    Listed,
    PendingGame,
    Rejection,
    StoreConflict,
    StoredGame,
    StoreUnavailable,
)
from service.store.outcomes import WIN_PARTS
from service.store.schema import ROW_COLUMNS, row_of, row_values
from service.store_api import shown

P = ParamSpec("P")
R = TypeVar("R")

log = logging.getLogger("feastlog.store")

SCHEMA_NAME = "feastlog"
POOL_SIZE = 8
CONNECT_TIMEOUT = 10  # seconds to reach the server at start
NOTIFY_CHANNEL = "feastlog_rows"  # payload "GAME_ID SEQ": the last seq a commit wrote

TABLES = """
CREATE TABLE IF NOT EXISTS events (
    game_id text NOT NULL,
    seq bigint NOT NULL,
    kind text NOT NULL,
    actor text NOT NULL,
    command_id text NOT NULL,
    body bytea NOT NULL,
    recorded_at text NOT NULL,
    prev_hash text NOT NULL,
    hash text NOT NULL,
    state_hash text NOT NULL,
    commitment text NOT NULL DEFAULT '',
    PRIMARY KEY (game_id, seq)
);
CREATE UNIQUE INDEX IF NOT EXISTS events_command_ids
    ON events (game_id, actor, command_id) WHERE command_id <> '';
CREATE TABLE IF NOT EXISTS rejections (
    game_id text NOT NULL,
    after_seq bigint NOT NULL,
    actor text NOT NULL,
    command_id text NOT NULL,
    body bytea NOT NULL,
    status text NOT NULL,
    reason text NOT NULL,
    rule_id text NOT NULL,
    message text NOT NULL,
    recorded_at text NOT NULL
);
CREATE INDEX IF NOT EXISTS rejections_by_game ON rejections (game_id);
CREATE TABLE IF NOT EXISTS seats (
    game_id text NOT NULL,
    seat integer NOT NULL,
    name text NOT NULL,
    token_sha256 text NOT NULL,
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX IF NOT EXISTS seats_by_token ON seats (token_sha256);
CREATE TABLE IF NOT EXISTS seeds (
    game_id text PRIMARY KEY,
    server_seed bytea NOT NULL
);
CREATE TABLE IF NOT EXISTS pending_games (
    game_id text PRIMARY KEY,
    draft bytea NOT NULL
);
CREATE TABLE IF NOT EXISTS seat_entropy (
    game_id text NOT NULL,
    seat integer NOT NULL,
    entropy bytea NOT NULL,
    PRIMARY KEY (game_id, seat)
);
CREATE TABLE IF NOT EXISTS packs (
    sha256 text PRIMARY KEY,
    game_kind text NOT NULL,
    pack_id text NOT NULL,
    body bytea NOT NULL
);
CREATE TABLE IF NOT EXISTS games (
    game_id text PRIMARY KEY,
    n bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    created_at text NOT NULL,
    game_kind text NOT NULL,
    tournament_id text NOT NULL,
    players text[] NOT NULL
);
CREATE INDEX IF NOT EXISTS games_by_tournament ON games (tournament_id);
CREATE TABLE IF NOT EXISTS meta (
    key text PRIMARY KEY,
    value text NOT NULL
);
"""

REJECTION_COLUMNS = ", ".join(f.name for f in fields(Rejection))

# DuckDB's column types as PostgreSQL spells them (the projection's DDL is DuckDB's).
_TYPES = {"VARCHAR": "text", "BLOB": "bytea", "JSON": "jsonb", "INTEGER": "integer"}


def projection_schema() -> str:
    """The outcomes projection's tables in PostgreSQL's types."""
    ddl = projection.schema()
    return re.sub(r"\b(VARCHAR|BLOB|JSON|INTEGER)\b", lambda m: _TYPES[m.group(1)], ddl)


def translated(method: Callable[P, R]) -> Callable[P, R]:
    """Translate psycopg's errors into the store's own, once, here.

    The cause goes to the server log under an incident id; the error the client may see
    carries only the id. A unique violation is a ``StoreConflict``: the writer's memory
    was behind what another node (or an earlier, unanswered commit) stored.
    """

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except psycopg.Error as error:
            raise _store_error(method.__name__, error) from error

    return wrapper


def _store_error(where: str, error: psycopg.Error) -> StoreUnavailable:
    """A psycopg error as the store's own, logged under a new incident id."""
    incident = new_incident_id()
    first = (str(error).splitlines() or [type(error).__name__])[0]
    log.error("incident %s: the store failed in %s: %s: %s", incident, where, type(error), first)
    if isinstance(error, psycopg.errors.UniqueViolation):
        return StoreConflict(
            f"the game store refused a write that was out of date (incident {incident}); try again",
            incident_id=incident,
        )
    if where != "write":
        message = f"the game store failed to read (incident {incident}); try again"
    else:
        message = (
            f"the game store failed to write (incident {incident}); try again: "
            "a command sent again with its command_id is recorded once"
        )
    return StoreUnavailable(message, incident_id=incident)


class PgStore:
    """A PostgreSQL database holding game records, shared by every node that opens it."""

    def __init__(self, dsn: str, read_only: bool = False, pool_size: int = POOL_SIZE) -> None:
        self.path = shown(dsn)
        self.dsn = dsn  # for the connection that listens to other nodes' commits
        self.read_only = read_only
        self.shared = True
        self._closed = False
        with _first_connection(dsn, self.path) as con:
            try:
                if read_only:
                    _check_schema(con, self.path)
                else:
                    _prepare(con, self.path)
            except psycopg.Error as error:
                raise _open_error(self.path, error) from error

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
            raise _open_error(self.path, error) from error

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

    @translated
    def write(self, batch: Batch) -> None:
        """Commit a batch in one transaction: all of it or none of it.

        The commit tells every node listening on ``feastlog_rows`` which games moved on.
        """
        with self.pool.connection() as con, con.transaction(), con.cursor() as cursor:
            _write_rows(cursor, batch)

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
        where, params = "", []
        if game_kind:
            where = "WHERE game_id IN (SELECT game_id FROM games WHERE game_kind = %s)"
            params = [game_kind]
        found = self._one(f"SELECT count(DISTINCT game_id), count(*) FROM events {where}", params)
        return (int(found[0]), int(found[1])) if found else (0, 0)

    def scan(
        self, part: tuple[int, int] | None = None, game_kind: str = ""
    ) -> Generator[StoredGame]:
        """Every game with rows, oldest first, from one ordered, streamed scan of the log."""
        for _, stored in self.scan_numbered(part, game_kind):
            yield stored

    def scan_numbered(
        self, part: tuple[int, int] | None = None, game_kind: str = "", fetch: int = 20_000
    ) -> Generator[tuple[int, StoredGame]]:
        """(place in the game list, game) for every game with rows, in one streamed scan.

        A server-side cursor in one read transaction: the rows come ``fetch`` at a time,
        all of one snapshot. ``part=(k, n)`` keeps the games whose place is k modulo n.
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
                yield from _scan(con, where, params, fetch)
        except psycopg.Error as error:
            raise _store_error("scan", error) from error

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
    def rejections(self, game_id: str) -> list[Rejection]:
        """A game's refused commands, oldest first."""
        found = self._all(
            f"SELECT {REJECTION_COLUMNS} FROM rejections WHERE game_id = %s ORDER BY recorded_at",
            [game_id],
        )
        return [
            Rejection(r[0], int(r[1]), r[2], r[3], bytes(r[4]), r[5], r[6], r[7], r[8], r[9])
            for r in found
        ]

    @translated
    def listed(
        self, game_kind: str = "", tournament_id: str = "", before: int = 0, limit: int = 50
    ) -> list[Listed]:
        """Up to ``limit`` games, newest first, listed before place ``before`` (0: from the top).

        A finished game comes with its number of rows (from the projection).
        """
        where: list[str] = ["TRUE"]
        params: list[object] = []
        if before:
            where.append("l.n < %s")
            params.append(before)
        if game_kind:
            where.append("l.game_kind = %s")
            params.append(game_kind)
        if tournament_id:
            where.append("l.tournament_id = %s")
            params.append(tournament_id)
        found = self._all(
            "WITH page AS (SELECT * FROM games l WHERE "
            + " AND ".join(where)
            + " ORDER BY l.n DESC LIMIT %s) "
            "SELECT p.n, p.game_id, p.game_kind, p.players, p.created_at, p.tournament_id, "
            "o.rows FROM page p LEFT JOIN outcome_games o USING (game_id) ORDER BY p.n DESC",
            [*params, limit],
        )
        return [
            Listed(int(n), g, k, tuple(players), at, t, None if rows is None else int(rows))
            for n, g, k, players, at, t, rows in found
        ]

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
    def projection_current(self) -> bool:
        """Whether the outcomes projection is there, of this version."""
        with self.pool.connection() as con:
            return _projection_current(con)

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
                label, query = projection.FIGURES.get(kind, ("", "SELECT NULL"))
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
        parts = WIN_PARTS
        found = self._all(
            f"SELECT s.name, count(*), sum(CASE WHEN g.scored AND s.won "
            f"THEN {parts} / cardinality(g.winners) ELSE 0 END), "
            "sum(CASE WHEN g.scored THEN s.points ELSE 0 END) "
            "FROM outcome_seats s JOIN outcome_games g USING (game_id) "
            "WHERE g.tournament_id = %s GROUP BY s.name",
            [tournament_id],
        )
        games = self._one(
            "SELECT count(*) FROM outcome_games WHERE tournament_id = %s", [tournament_id]
        )
        lines = [
            Standing(str(name), int(played), Fraction(int(wins), parts), int(points))
            for name, played, wins, points in found
        ]
        lines.sort(key=lambda s: (-s.wins, -s.points, s.name))
        return lines, int(games[0]) if games else 0

    @translated
    def rebuild_projection(self, projected: Iterable[projection.Projected]) -> int:
        """Make the outcomes projection again from these games' rows, in one transaction.

        The games must be every finished game of the log: while nodes are writing, use
        ``rebuild_projection_from_log``, which holds writers off while it reads.
        """
        with self.pool.connection() as con, con.transaction():
            return _refill_projection(con, projected)

    @translated
    def rebuild_projection_from_log(self) -> int:
        """Make the outcomes projection again from the log, in one transaction."""
        with self.pool.connection() as con, con.transaction():
            return _rebuild_from_log(con)


@contextmanager
def _first_connection(dsn: str, shown_as: str) -> Iterator[psycopg.Connection[Any]]:
    """One connection to set the schema up; a failure to connect is one line."""
    try:
        con = psycopg.connect(dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
    except psycopg.Error as error:
        raise _open_error(shown_as, error) from error
    try:
        yield con
    finally:
        con.close()


def _prepare(con: psycopg.Connection[Any], shown_as: str) -> None:
    """Make what is missing, protect it, bring the projection up to date: one transaction.

    An advisory lock makes nodes that start together do this one after the other.
    """
    with con.transaction():
        con.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [f"{SCHEMA_NAME}-schema"])
        _create(con)
        _protect(con)
        if not _projection_current(con):
            if con.execute("SELECT 1 FROM events LIMIT 1").fetchone():
                log.warning("%s: rebuilding the outcomes projection from the log", shown_as)
            _rebuild_from_log(con)


def _create(con: psycopg.Connection[Any]) -> None:
    """The schema and its tables, made where missing (in the caller's transaction)."""
    schema = sql.Identifier(SCHEMA_NAME)
    owner = con.execute(
        "SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = %s",
        [SCHEMA_NAME],
    ).fetchone()
    me = con.execute("SELECT current_user").fetchone()
    if owner and me and owner[0] != me[0]:
        raise CannotOpenStore(
            f"the schema {SCHEMA_NAME} belongs to the role {owner[0]}, not {me[0]}: "
            f"connect as {owner[0]} (only the role feastlog uses may own its tables)",
            path=SCHEMA_NAME,
        )
    con.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(schema))
    con.execute(sql.SQL("SET search_path TO {}").format(schema))
    con.execute(TABLES.encode())
    con.execute(projection_schema().encode())


def _protect(con: psycopg.Connection[Any]) -> None:
    """Take back every privilege on feastlog's schema and tables held by anyone but its owner."""
    others = con.execute(
        "SELECT DISTINCT CASE a.grantee WHEN 0 THEN 'PUBLIC' "
        "ELSE pg_get_userbyid(a.grantee) END, "
        "c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace, "
        "aclexplode(c.relacl) a WHERE n.nspname = %s AND a.grantee <> c.relowner "
        "UNION SELECT DISTINCT CASE a.grantee WHEN 0 THEN 'PUBLIC' "
        "ELSE pg_get_userbyid(a.grantee) END, '(the schema)' FROM pg_namespace n, "
        "aclexplode(n.nspacl) a WHERE n.nspname = %s AND a.grantee <> n.nspowner",
        [SCHEMA_NAME, SCHEMA_NAME],
    ).fetchall()
    grantees = sorted({str(g) for g, _ in others} | {"PUBLIC"})
    schema = sql.Identifier(SCHEMA_NAME)
    for grantee in grantees:
        who = sql.SQL("PUBLIC") if grantee == "PUBLIC" else sql.Identifier(grantee)
        con.execute(sql.SQL("REVOKE ALL ON SCHEMA {} FROM {}").format(schema, who))
        for what in ("TABLES", "SEQUENCES"):
            con.execute(
                sql.SQL("REVOKE ALL ON ALL {} IN SCHEMA {} FROM {}").format(
                    sql.SQL(what), schema, who
                )
            )
    if others:
        held = ", ".join(sorted({f"{g} on {t}" for g, t in others}))
        log.warning(
            "schema %s: privileges of others taken back (its tables hold server seeds "
            "and sealed commands): %s",
            SCHEMA_NAME,
            held,
        )


def _check_schema(con: psycopg.Connection[Any], shown_as: str) -> None:
    """Refuse, in one line, a database that holds no feastlog tables (reading only)."""
    found = con.execute(
        "SELECT count(*) FROM pg_tables WHERE schemaname = %s AND tablename = 'events'",
        [SCHEMA_NAME],
    ).fetchone()
    if not found or not found[0]:
        raise CannotOpenStore(
            f"{shown_as} holds no feastlog games (no table {SCHEMA_NAME}.events): "
            "serve it once with feastlog serve --db, or pass --db with the right database",
            path=shown_as,
        )


def _projection_current(con: psycopg.Connection[Any]) -> bool:
    """Whether the projection tables are there, of this version."""
    found = con.execute("SELECT value FROM meta WHERE key = 'projection'").fetchone()
    return found is not None and found[0] == projection.VERSION


def _refill_projection(
    con: psycopg.Connection[Any], projected: Iterable[projection.Projected]
) -> int:
    """Drop and make the projection tables, fill them; returns the games projected."""
    for name in projection.tables():
        con.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(name)))
    con.execute(projection_schema().encode())
    count = 0
    with con.cursor() as cursor:
        for rows in projected:
            if rows:
                _insert_projection(cursor, rows)
                count += 1
    con.execute(
        "INSERT INTO meta VALUES ('projection', %s) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [projection.VERSION],
    )
    return count


def _rebuild_from_log(con: psycopg.Connection[Any]) -> int:
    """The projection again from one scan of the log, writers held off until it commits.

    SHARE mode on ``events`` lets reads on but makes every commit wait, so no game ends
    between the scan and the new tables (its outcome rows would be lost).
    """
    con.execute("LOCK TABLE events IN SHARE MODE")
    games = [projection.rows_of_stored(g) for _, g in _scan(con, [], [], 20_000)]
    return _refill_projection(con, games)


def _scan(
    con: psycopg.Connection[Any], where: list[str], params: list[object], fetch: int
) -> Iterator[tuple[int, StoredGame]]:
    """(place, game) from one ordered scan through a server-side cursor (in a transaction)."""
    packs = {
        str(sha): bytes(body)
        for sha, body in con.execute("SELECT sha256, body FROM packs").fetchall()
    }
    columns = ", ".join(f"e.{c.strip()}" for c in ROW_COLUMNS.split(","))
    query = (
        f"SELECT {columns}, coalesce(g.n, 0), CASE WHEN e.seq = 1 THEN s.server_seed END "
        "FROM events e LEFT JOIN games g USING (game_id) "
        "LEFT JOIN seeds s ON s.game_id = e.game_id AND e.seq = 1 "
        f"{'WHERE ' + ' AND '.join(where) if where else ''} "
        "ORDER BY coalesce(g.n, 0), e.game_id, e.seq"
    )
    with con.cursor(name="feastlog_scan") as cursor:
        cursor.itersize = fetch
        cursor.execute(query.encode(), params)
        yield from _games_of(cursor, packs)


def _open_error(shown_as: str, error: psycopg.Error) -> CannotOpenStore:
    """A psycopg error on opening the store, in one line that says what to do."""
    text = (str(error).strip().splitlines() or [type(error).__name__])[0]
    lowered = text.lower()
    if "password authentication failed" in lowered or "no password supplied" in lowered:
        hint = "check the user and password in the DSN"
    elif "does not exist" in lowered:
        hint = "create it first (see docs/scaling.md), or pass --db with the right one"
    elif "permission denied" in lowered:
        hint = "connect as the role that owns feastlog's schema"
    elif "connection refused" in lowered or "timeout" in lowered:
        hint = "is PostgreSQL running there?"
    else:
        hint = "check the DSN and the server"
    return CannotOpenStore(f"cannot open {shown_as}: {text}: {hint}", path=shown_as)


def _games_of(
    cursor: psycopg.Cursor[Any], packs: dict[str, bytes]
) -> Iterator[tuple[int, StoredGame]]:
    """Group a scan's rows into games: (place in the game list, game)."""
    rows: list[Row] = []
    seed, n = b"", 0
    for values in cursor:
        row = row_of(values[:-2])
        if rows and row.game_id != rows[0].game_id:
            yield n, _stored(rows, seed, packs)
            rows = []
        if not rows:
            n = int(values[-2])
            seed = bytes(values[-1]) if values[-1] is not None else b""
        rows.append(row)
    if rows:
        yield n, _stored(rows, seed, packs)


def _stored(rows: list[Row], seed: bytes, packs: dict[str, bytes]) -> StoredGame:
    """A scanned game: its rows, seed, pack and seat names (from its genesis)."""
    genesis = record_pb2.Genesis.FromString(rows[0].body) if rows[0].seq == 1 else None
    pack = packs.get(genesis.pack_sha256, b"") if genesis else b""
    names = tuple(s.name for s in genesis.seats) if genesis else ()
    return StoredGame(tuple(rows), seed, pack, names)


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


def _write_rows(cursor: psycopg.Cursor[Any], batch: Batch) -> None:
    """Everything a batch writes, one statement per table, then the notifications."""
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
    rows = [g.genesis for g in games if g.genesis is not None] + batch.rows
    if rows:
        _insert(cursor, "events", ROW_COLUMNS, [row_values(r) for r in rows])
    if batch.rejections:
        _insert(
            cursor,
            "rejections",
            REJECTION_COLUMNS,
            [list(vars(r).values()) for r in batch.rejections],
        )
    if batch.outcomes:
        _insert_projection(cursor, batch.outcomes)
    heads: dict[str, int] = {}
    for row in rows:
        heads[row.game_id] = max(heads.get(row.game_id, 0), row.seq)
    if heads:  # delivered at commit, to every node listening (none if it rolls back)
        cursor.executemany(
            b"SELECT pg_notify(%s, %s)",
            [[NOTIFY_CHANNEL, f"{game_id} {seq}"] for game_id, seq in heads.items()],
        )


def _insert_projection(cursor: psycopg.Cursor[Any], projected: projection.Projected) -> None:
    """Insert projection rows, one pipelined statement per table."""
    merged: dict[str, list[list[Any]]] = {}
    for name, rows in projected:
        merged.setdefault(name, []).extend(rows)
    for name, rows in merged.items():
        marks = ", ".join(["%s"] * len(rows[0]))
        cursor.executemany(f"INSERT INTO {name} VALUES ({marks})".encode(), rows)
