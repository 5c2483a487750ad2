"""The ``Store``: one open DuckDB file of game records (see ``service.store``)."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Generator, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb

from feastlog.replay.proof.merkle import leaf_hash
from feastlog.replay.proof.signed import Cosignature, TreeHead, leaf_of
from feastlog.replay.record.rows import Row
from feastlog.replay.tournament.outcomes import Standing
from feastlog.service.files import hold_private_umask, release_private_umask
from feastlog.service.store import projection
from feastlog.service.store.duckdb import mark, outcomes
from feastlog.service.store.duckdb.errors import open_error, read_at_start, transaction, translated
from feastlog.service.store.duckdb.opening import connect
from feastlog.service.store.duckdb.schema import (
    FORMAT_1_COLUMNS,
    GAMES_COLUMNS,
    OR_IGNORE,
    ORDER_OF_OLD_FILES,
    Appended,
    Statements,
    insert,
    listing,
)
from feastlog.service.store.errors import CannotOpenStore
from feastlog.service.store.projection import KindStats, figure_of
from feastlog.service.store.records import Batch, Listed, PendingGame, Rejection, StoredGame
from feastlog.service.store.sql import (
    COSIGNATURE_COLUMNS,
    DEALT_FROM,
    DRAFT_COLUMNS,
    ENTROPY_COLUMNS,
    HEAD_COLUMNS,
    KEY_COLUMNS,
    PACK_COLUMNS,
    REJECTION_COLUMNS,
    REVEALED_AT,
    ROW_COLUMNS,
    SEAT_COLUMNS,
    SEED_COLUMNS,
    TOURNAMENT_ENDED,
    TWINS_RUNNING,
    TWINS_RUNNING_BY_LOG,
    WIN_PARTS,
    cosignature_of,
    cosignature_values,
    count_query,
    counted,
    games_of_scan,
    head_of,
    head_values,
    inserts_of,
    list_query,
    listed_of,
    rejections_of,
    row_of,
    row_values,
    rows_by_place_query,
    rows_from_query,
    share_of,
    standings_of,
    standings_query,
    unnumbered,
)
from feastlog.v1 import record_pb2

log = logging.getLogger("feastlog.store")

# Rows a scan fetches at a time: DuckDB's vector. Its tuples are still in the caches when
# the scan builds its rows from them (20,000 at a time cost a fifth more a row).
FETCH = 2_048


class Store:
    """An open DuckDB file holding game records."""

    shared = False  # one writing process per file: this one
    commit = None  # the writer commits on the store's thread
    # A file opened read-only: its tables and the events table's columns, read once (no
    # process can write the file while it is open, and this one does not).  Asked table
    # by table, the catalog took 7 ms of every opening and scan (22 ms in all).
    _fixed: tuple[frozenset[str], frozenset[str]] | None = None
    _read_only_file = False

    def __init__(self, path: str, read_only: bool = False, threads: int = 0) -> None:
        """Open ``path``; ``threads`` caps DuckDB's worker threads (0: one per core)."""
        self.path = path
        self._writing = not read_only
        self._mark: mark.Mark | None = None
        if self._writing and Path(path).is_file():
            # Opened for writing, DuckDB replays its log and may truncate it: the file as
            # it would open is held to its mark first, read-only, touching nothing.
            with closing(connect(Path(path), read_only=True)) as before:
                mark.check(path, before)
        if self._writing:
            # DuckDB makes the WAL and spill files itself, at any time while it is open.
            hold_private_umask()
        try:
            self.con = connect(Path(path), read_only, threads)
        except BaseException:
            self._release_umask()
            raise
        self.read_only = read_only
        self._read_only_file = read_only
        if read_only:
            try:
                mark.check(path, self.con)  # before the tables: a lost log may hold them all
            except CannotOpenStore:
                self.con.close()
                raise
        if read_only and not self._has_table("events"):
            # a DuckDB file feastlog never wrote (or a copy without its .wal): refused whole
            # here, rather than as a failed read of each table a command reaches for
            self.con.close()
            raise CannotOpenStore(
                f"{path} is not a feastlog database: it has no events table (a copy of a "
                "served file needs its .wal beside it)",
                path=path,
            )
        try:
            self.row_columns = ROW_COLUMNS if self._has_commitments() else FORMAT_1_COLUMNS
            if not read_only:
                self._upgrade()
            self._next_n = self._count_listed() + 1
            self._tree_tables = self._has_table("tree_heads")
            self._placed = self._has_positions()
            self._next_leaf = self._count_leaves()
            if not read_only:
                self._mark = mark.Mark(path, mark.held_by(self.con))
            # point look-ups from the event loop (seat tokens) use their own connection
            self._lookups = self.con.cursor()
            self._appenders: dict[tuple[str, tuple[str, ...]], duckdb.Appender] = {}
            self._appenders_of: object = self.con
        except duckdb.Error as error:  # the first reads are where a damaged file shows
            self.con.close()
            self._release_umask()
            raise open_error(Path(path), error) from error
        except CannotOpenStore:
            self.con.close()
            self._release_umask()
            raise

    def _has_commitments(self) -> bool:
        """Whether the events table has its commitment column (a read-only older file has not)."""
        return self._has_column("commitment")

    def _has_column(self, name: str) -> bool:
        """Whether the events table has column ``name``."""
        if self._read_only_file:
            return name in self._catalog()[1]
        found = self.con.execute(
            "SELECT count(*) FROM duckdb_columns() WHERE table_name = 'events' AND column_name = ?",
            [name],
        ).fetchone()
        return bool(found and found[0])

    def _catalog(self) -> tuple[frozenset[str], frozenset[str]]:
        """A read-only file's tables and the events table's columns, read once."""
        if self._fixed is None:
            tables = self.con.execute("SELECT table_name FROM duckdb_tables()").fetchall()
            columns = self.con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE table_name = 'events'"
            ).fetchall()
            self._fixed = (frozenset(t[0] for t in tables), frozenset(c[0] for c in columns))
        return self._fixed

    def close(self) -> None:
        """Close the file, its write-ahead log folded into it first.

        DuckDB checkpoints on its own at close only when this connection wrote: a log it
        replayed at open and nothing since would stay beside the file.
        """
        self._appenders.clear()
        try:
            if self._mark is not None:
                if mark.wal_path(self.path).exists():
                    translated(lambda: self.con.execute("CHECKPOINT"))()
                self._remark()
                self._mark.close()
                self._mark = None
        finally:
            self._lookups.close()
            self.con.close()
            self._release_umask()

    def backup_copy(self, partial: str) -> Any:
        """Copy the file, its log and its mark to ``partial`` (``duckdb/backup.py``): on
        the store's thread, so that no commit or checkpoint runs meanwhile."""
        from feastlog.service.store.duckdb.backup import copy_files

        return copy_files(self.path, Path(partial))

    def _release_umask(self) -> None:
        if self._writing:
            self._writing = False
            release_private_umask()

    def _has_table(self, name: str) -> bool:
        if self._read_only_file:
            return name in self._catalog()[0]
        found = self.con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [name]
        ).fetchone()
        return bool(found and found[0])

    def _meta(self, key: str) -> str | None:
        if not self._has_table("meta"):
            return None
        found = self.con.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
        return str(found[0]) if found else None

    def _set_meta(self, key: str, value: str) -> None:
        self.con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [key, value])

    def _count_listed(self) -> int:
        if not self._has_table("games"):
            return 0
        found = self.con.execute("SELECT coalesce(max(n), 0) FROM games").fetchone()
        return int(found[0]) if found else 0

    def _has_positions(self) -> bool:
        """Whether the events table has its tree_position column (a read-only older file
        has not)."""
        return self._has_column("tree_position")

    def _count_leaves(self) -> int:
        """The log tree's size: the next row's position."""
        if not self._has_positions():  # a read-only file from before the tree
            return 0
        found = self.con.execute("SELECT coalesce(max(tree_position) + 1, 0) FROM events")
        size = found.fetchone()
        return int(size[0]) if size else 0

    def _upgrade(self) -> None:
        """Fill what a file written by an earlier version lacks: the game list, the projection,
        the log tree's leaves.

        A new file needs nothing; an older one is brought up to date once, here.
        """
        if self._meta("games_listed") is None:
            self._list_stored_games()
            self._set_meta("games_listed", "1")
        if self._count_leaves() == 0:
            self._plant_tree()
        if self._meta("projection") != projection.VERSION:
            has_games = self.con.execute("SELECT count(*) FROM events").fetchone()
            if has_games and has_games[0]:
                log.warning("%s: rebuilding the outcomes projection from the log", self.path)
                self.rebuild_projection(projection.rows_of_stored(g) for g in self.scan())
            self._set_meta("projection", projection.VERSION)

    def _plant_tree(self) -> None:
        """Give every row of a file written before the log tree its place: oldest game
        first, each game's rows in seq order."""
        found = self.con.execute("SELECT count(*) FROM events").fetchone()
        if found and found[0]:
            log.warning("%s: planting the log tree over %d stored rows", self.path, found[0])
            self.con.execute(
                "UPDATE events SET tree_position = planted.position FROM (SELECT e.game_id, "
                "e.seq, row_number() OVER (ORDER BY g.n, e.seq) - 1 AS position FROM events e "
                "JOIN games g USING (game_id)) planted "
                "WHERE events.game_id = planted.game_id AND events.seq = planted.seq"
            )

    def _list_stored_games(self) -> None:
        """List the games of a file written before the game list existed, oldest first."""
        found = self.con.execute(
            "SELECT game_id, body FROM events WHERE seq = 1 UNION ALL "
            "SELECT game_id, draft FROM pending_games"
        ).fetchall()
        geneses = [record_pb2.Genesis.FromString(bytes(body)) for _, body in found]
        geneses.sort(key=lambda g: (g.created_at, g.game_id))
        self.con.execute("DELETE FROM games")
        if geneses:
            insert(self.con, "games", GAMES_COLUMNS, listing(geneses, 1))

    @translated
    def write(self, batch: Batch) -> int | None:
        """Commit a batch in one transaction: all of it or none of it; the log position of
        its first appended row.

        A batch that is one statement (a group commit of commands, the usual batch) is
        that statement alone, which DuckDB commits as its own transaction: each statement
        costs the writer a wait for the interpreter while the event loop is busy, so
        BEGIN and COMMIT around it would cost two more.  So each row carries its place in
        the log tree in a column of its own (``tree_position``, from ``_next_leaf``,
        counted again after a failed commit, whose answer may be all that was lost): the
        tree costs a commit no statement.  Rows go in through DuckDB's appender, one per
        table kept open (``_append``).
        """
        statements = Statements()
        rows = batch.appended()
        listed = _write_rows(statements, batch, rows, self._next_n, self._next_leaf)
        self.con.complete()  # an appender refuses a connection with a result still open
        try:
            if len(statements.written) == 1:
                self._run(statements.written[0])
            else:
                with transaction(self.con):
                    for statement in statements.written:
                        self._run(statement)
        except BaseException:
            # a commit whose answer was lost may be in the file: count the tree again
            with contextlib.suppress(Exception):
                self._next_leaf = self._count_leaves()
            raise
        first = self._next_leaf if rows else None
        self._next_n += listed
        self._next_leaf += len(rows)
        if self._mark is not None:
            tally = self._mark.tally.after(rows, listed, len(batch.rejections), len(batch.entropy))
            self._mark.write(tally)
        return first

    def _run(self, statement: tuple[str, list[Any]] | Appended) -> None:
        if isinstance(statement, Appended):
            self._append(statement)
        else:
            self.con.execute(*statement)

    def _append(self, rows: Appended) -> None:
        """Append rows to a table in one statement, through the table's appender.

        An appender skips the SQL a multi-row insert is parsed, bound and planned from
        each time: a group commit of one to twenty rows costs the store about 20% less
        CPU (1.05-1.26 ms against 1.30-1.64 ms, ``README``).  A flush that fails (a
        duplicate seq, a bad value) writes none of its rows; the rows are dropped from
        the appender either way, so the next commit starts clean.
        """
        if self._appenders_of is not self.con:  # appenders belong to their connection
            self._appenders, self._appenders_of = {}, self.con
        key = (rows.table, rows.columns)
        appender = self._appenders.get(key)
        if appender is None:
            named = list(rows.columns) or None
            appender = self._appenders[key] = self.con.appender(rows.table, columns=named)
        try:
            appender.append_rows(rows.rows)
            appender.flush()
        except BaseException:
            appender.clear()
            raise

    @translated
    def checkpoint(self, least: int) -> int:
        """Fold the write-ahead log into the file when it holds ``least`` bytes or more.

        Returns the bytes the log held (0: nothing done).  The server calls it in quiet
        moments, so that the commit that passes DuckDB's own threshold seldom has to.
        """
        if self.read_only:
            return 0
        try:
            held = os.path.getsize(f"{self.path}.wal")
        except OSError:  # no log: nothing written since the last checkpoint
            return 0
        if held == 0 or held < least:
            return 0
        self.con.execute("CHECKPOINT")
        self._remark()
        return held

    def _remark(self) -> None:
        """Mark the files as a write other than a batch has left them."""
        if self._mark is not None:
            self._mark.write(self._mark.tally)

    @translated
    def game_ids(self) -> list[str]:
        """Every game id, oldest first."""
        found = self.con.execute(
            "SELECT game_id FROM events WHERE seq = 1 ORDER BY recorded_at, game_id"
        ).fetchall()
        return [r[0] for r in found]

    @translated
    def rows(self, game_id: str) -> tuple[Row, ...]:
        """A game's rows in seq order."""
        found = self.con.execute(
            f"SELECT {self.row_columns} FROM events WHERE game_id = ? ORDER BY seq", [game_id]
        ).fetchall()
        return tuple(row_of(r) for r in found)

    @translated
    def rows_after(self, game_id: str, seq: int) -> tuple[Row, ...]:
        """A game's rows after ``seq``, in seq order."""
        found = self.con.execute(
            f"SELECT {self.row_columns} FROM events WHERE game_id = ? AND seq > ? ORDER BY seq",
            [game_id, seq],
        ).fetchall()
        return tuple(row_of(r) for r in found)

    @translated
    def load(self, game_id: str) -> StoredGame | None:
        """A game's rows, seed, pack and seat names; None when there is no such game."""
        rows = self.rows(game_id)
        if not rows:
            return None
        seed = self.con.execute(
            "SELECT server_seed FROM seeds WHERE game_id = ?", [game_id]
        ).fetchone()
        pack = self.con.execute(
            "SELECT body FROM packs WHERE sha256 = ?", [_pack_sha_of(rows[0])]
        ).fetchone()
        names = self.con.execute(
            "SELECT name FROM seats WHERE game_id = ? ORDER BY seat", [game_id]
        ).fetchall()
        return StoredGame(
            rows,
            bytes(seed[0]) if seed else b"",
            bytes(pack[0]) if pack else b"",
            tuple(n[0] for n in names),
        )

    @translated
    def count_games(self, game_kind: str = "") -> tuple[int, int]:
        """(games with rows, rows) in the file, of one kind or all."""
        return counted(self.con.execute(*count_query("?", game_kind)).fetchone())

    def scan(
        self, part: tuple[int, int] | None = None, game_kind: str = ""
    ) -> Generator[StoredGame]:
        """Every game with rows, oldest first, from one ordered, streamed scan of the log."""
        return unnumbered(self.scan_numbered(part, game_kind))

    def scan_numbered(
        self,
        part: tuple[int, int] | None = None,
        game_kind: str = "",
        fetch: int = FETCH,
        share: tuple[int, int] | None = None,
    ) -> Generator[tuple[int, StoredGame]]:
        """(place in the game list, game) for every game with rows, in one streamed scan.

        ``part=(k, n)`` keeps the games whose place in the game list is k modulo n;
        ``share=(k, m)`` the k-th of m runs of them of about as many rows each, so m
        workers each scan their own share of the work.
        """
        packs = {sha: bytes(body) for sha, body in self._read("SELECT sha256, body FROM packs")}
        where: list[str] = []
        params: list[object] = []
        if part is not None:
            where.append(f"coalesce(g.n, hash(e.game_id)) % {int(part[1])} = {int(part[0])}")
        if game_kind:
            where.append("g.game_kind = ?")
            params.append(game_kind)
        # a read-only file from before the game list: games in the order they began
        listed = "games" if self._has_table("games") else ORDER_OF_OLD_FILES
        if share is not None:
            counts = self._read(rows_by_place_query(listed, where), params)
            first, end = share_of(counts, share)
            where.append(f"coalesce(g.n, 0) >= {first} AND coalesce(g.n, 0) < {end}")
        columns = ", ".join(
            c if c.startswith("'") else f"e.{c}"
            for c in map(str.strip, self.row_columns.split(","))
        )
        cursor = self.con.cursor()
        try:
            _run(
                cursor,
                # a game whose rows were written around the game list still comes, first
                f"SELECT {columns}, coalesce(g.n, 0), CASE WHEN e.seq = 1 THEN s.server_seed END "
                f"FROM events e LEFT JOIN {listed} g USING (game_id) "
                "LEFT JOIN seeds s ON s.game_id = e.game_id AND e.seq = 1 "
                f"{'WHERE ' + ' AND '.join(where) if where else ''} "
                "ORDER BY coalesce(g.n, 0), e.game_id, e.seq",
                params,
            )
            yield from games_of_scan(_chunks(cursor, fetch), packs)
        finally:
            cursor.close()

    def bodies(self, fetch: int = FETCH) -> Generator[tuple[str, bytes]]:
        """(kind, body) of every row in game and seq order, and nothing else: the plain
        scan a benchmark holds ``scan`` and the audit to (``feastlog bench-audit``)."""
        cursor = self.con.cursor()
        try:
            _run(cursor, "SELECT kind, body FROM events ORDER BY game_id, seq", [])
            for chunk in _chunks(cursor, fetch):
                yield from chunk
        finally:
            cursor.close()

    @translated
    def _read(self, sql: str, params: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        return self.con.execute(sql, list(params)).fetchall()

    @read_at_start
    def pending(self) -> list[PendingGame]:
        """Games waiting for seat entropy, with what each seat has sent so far."""
        found = self.con.execute(
            "SELECT p.game_id, p.draft, s.server_seed FROM pending_games p "
            "JOIN seeds s USING (game_id) ORDER BY p.game_id"
        ).fetchall()
        out = []
        for game_id, draft, seed in found:
            sha = record_pb2.Genesis.FromString(bytes(draft)).pack_sha256
            pack = self.con.execute("SELECT body FROM packs WHERE sha256 = ?", [sha]).fetchone()
            sent = self.con.execute(
                "SELECT seat, entropy FROM seat_entropy WHERE game_id = ?", [game_id]
            ).fetchall()
            out.append(
                PendingGame(
                    game_id,
                    bytes(draft),
                    bytes(seed),
                    bytes(pack[0]) if pack else b"",
                    {int(seat): bytes(e) for seat, e in sent},
                )
            )
        return out

    @translated
    def pending_game(self, game_id: str) -> PendingGame | None:
        """One game waiting for seat entropy (None once it has started, or if unknown)."""
        return next((p for p in self.pending() if p.game_id == game_id), None)

    @translated
    def seat_of_token(self, digest: str) -> tuple[str, int] | None:
        """(game id, seat) of a seat token's sha256, looked up by index; None if unknown.

        Safe to call from another thread than the store's: it has its own connection.
        """
        # read to the end (fetchall), so no lookup is left open to hold up a checkpoint
        found = self._lookups.execute(
            "SELECT game_id, seat FROM seats WHERE token_sha256 = ? LIMIT 1", [digest]
        ).fetchall()
        return (str(found[0][0]), int(found[0][1])) if found else None

    def arbiter_of_key(self, digest: str) -> str | None:
        """The name of the arbiter whose key has this sha256, unless revoked; None if unknown.

        Safe to call from another thread than the store's: it has its own connection.
        """
        if self.read_only and not self._has_table("arbiters"):
            return None
        found = self._lookups.execute(  # read to the end, as ``seat_of_token``'s
            "SELECT name FROM arbiters WHERE key_sha256 = ? AND revoked_at = '' LIMIT 1", [digest]
        ).fetchall()
        return str(found[0][0]) if found else None

    @translated
    def add_arbiter(self, name: str, digest: str, at: str) -> bool:
        """Record a named arbiter's key; False when the name holds a key not revoked."""
        found = self.con.execute(
            "SELECT revoked_at FROM arbiters WHERE name = ?", [name]
        ).fetchone()
        if found is not None and found[0] == "":
            return False
        with self._arbiters_changing((name, at)):
            self.con.execute(
                "INSERT OR REPLACE INTO arbiters VALUES (?, ?, ?, '')", [name, digest, at]
            )
        return True

    @translated
    def revoke_arbiter(self, name: str, at: str) -> bool:
        """Revoke a named arbiter's key; False when there is no such arbiter holding one."""
        found = self.con.execute(
            "SELECT count(*) FROM arbiters WHERE name = ? AND revoked_at = ''", [name]
        ).fetchone()
        if not found or not found[0]:
            return False
        with self._arbiters_changing((name, "", at)):
            self.con.execute("UPDATE arbiters SET revoked_at = ? WHERE name = ?", [at, name])
        return True

    @contextlib.contextmanager
    def _arbiters_changing(self, change: tuple[str, ...]) -> Iterator[None]:
        """Mark the arbiters as either before or after ``change`` while it commits."""
        if self._mark is None:
            yield
            return
        before = self._mark.tally
        after = mark.arbiters_digest(self.con, change)
        self._mark.write(replace(before, arbiters=(*before.arbiters[:1], after)))
        try:
            yield
        except BaseException:
            self._mark.write(before)
            raise
        self._mark.write(replace(before, arbiters=(after,)))

    @translated
    def arbiters(self) -> list[tuple[str, str, str]]:
        """Every named arbiter: (name, added at, revoked at or '')."""
        if not self._has_table("arbiters"):
            return []
        found = self.con.execute(
            "SELECT name, added_at, revoked_at FROM arbiters ORDER BY name"
        ).fetchall()
        return [(str(n), str(a), str(r)) for n, a, r in found]

    @translated
    def rejections(self, game_id: str) -> list[Rejection]:
        """A game's refused commands, oldest first."""
        found = self.con.execute(
            "SELECT * FROM rejections WHERE game_id = ? ORDER BY recorded_at", [game_id]
        ).fetchall()
        return rejections_of(found)

    @translated
    def listed(
        self, game_kind: str = "", tournament_id: str = "", before: int = 0, limit: int = 50
    ) -> list[Listed]:
        """Up to ``limit`` games, newest first, listed before place ``before`` (0: from the top).

        A finished game comes with its number of rows (from the projection).
        """
        sql, params = list_query("?", game_kind, tournament_id, before, limit)
        return listed_of(self.con.execute(sql, params).fetchall())

    @translated
    def last_seq(self, game_id: str) -> int:
        """A game's last seq (0 when it has no rows yet), looked up by index."""
        found = self.con.execute(
            "SELECT coalesce(max(seq), 0) FROM events WHERE game_id = ?", [game_id]
        ).fetchone()
        return int(found[0]) if found else 0

    @translated
    def known_games(self, game_ids: Sequence[str]) -> dict[str, str]:
        """Of these games, those in the file, each with the hash of its last row ('' if none)."""
        found = self.con.execute(
            "SELECT l.game_id, coalesce(arg_max(e.hash, e.seq), '') FROM games l "
            "LEFT JOIN events e USING (game_id) "
            "WHERE l.game_id IN (SELECT unnest($1::VARCHAR[])) GROUP BY l.game_id",
            [list(game_ids)],
        ).fetchall()
        return {str(g): str(h) for g, h in found}

    @translated
    def tournament_games(self, tournament_id: str) -> int:
        """How many games (running or finished) a tournament has."""
        found = self.con.execute(
            "SELECT count(*) FROM games WHERE tournament_id = ?", [tournament_id]
        ).fetchone()
        return int(found[0]) if found else 0

    @translated
    def twins_running(self, game_id: str) -> int:
        """How many other games dealt from this game's server seed have not ended (running,
        or waiting for seat entropy): while one has, a finished game with a supplied seed
        is held back (``replay.record.visibility.Release``)."""
        query = TWINS_RUNNING if self.projection_current() else TWINS_RUNNING_BY_LOG
        found = self.con.execute(query, [game_id]).fetchone()
        return int(found[0]) if found else 0

    @translated
    def dealt_from(self, server_seed: bytes) -> list[tuple[str, str, str]]:
        """Every game dealt from this server seed, oldest first: (game id, created at, when
        its seed was revealed, '' while it runs or waits for seat entropy)."""
        found = self.con.execute(DEALT_FROM, [server_seed]).fetchall()
        ended = (self.con.execute(REVEALED_AT, [g]).fetchone() for g, _ in found)
        return [(g, at, str(e[0]) if e else "") for (g, at), e in zip(found, ended, strict=True)]

    def projection_current(self) -> bool:
        """Whether this file's outcomes projection is there, of this version."""
        return self._meta("projection") == projection.VERSION

    @translated
    def stats(self, tournament_id: str = "") -> list[projection.KindStats]:
        """Per game kind: games scored, the win rate by seat position, a game-specific figure
        (SQL over the outcomes projection)."""
        con = self._projected()
        where = "WHERE scored" + (" AND tournament_id = $t" if tournament_id else "")
        params = {"t": tournament_id} if tournament_id else {}
        kinds = con.execute(
            f"SELECT game_kind, count(*) FROM outcome_games {where} GROUP BY 1 ORDER BY 1", params
        ).fetchall()
        rates = con.execute(
            "SELECT s.game_kind, s.seat, avg(CASE WHEN s.won THEN 1.0 ELSE 0.0 END) "
            f"FROM outcome_seats s SEMI JOIN (SELECT game_id FROM outcome_games {where}) g "
            "USING (game_id) GROUP BY 1, 2 ORDER BY 1, 2",
            params,
        ).fetchall()
        out = []
        for kind, played in kinds:
            label, query = figure_of(kind)
            if tournament_id and label:
                query += (" AND" if "WHERE" in query else " WHERE") + (
                    " game_id IN (SELECT game_id FROM outcome_games WHERE tournament_id = $t)"
                )
            value = con.execute(query, params if label else {}).fetchone()
            figure = None if value is None or value[0] is None else float(value[0])
            by_seat = tuple(float(r[2]) for r in rates if r[0] == kind)
            out.append(KindStats(kind, int(played), by_seat, label, figure))
        return out

    @translated
    def standings(self, tournament_id: str) -> tuple[list[Standing], int]:
        """A tournament's standings from its finished games, and how many games that is (SQL
        over the projection).

        Void games (and games closed before their end) count as played with no points and
        no wins; a forfeited seat never wins; players are matched by name.
        """
        con = self._projected()
        query = standings_query(f"{WIN_PARTS} // len(g.winners)")
        found = con.execute(query, [tournament_id]).fetchall()
        return standings_of(found, con.execute(TOURNAMENT_ENDED, [tournament_id]).fetchone())

    def _projected(self) -> duckdb.DuckDBPyConnection:
        """A connection holding the current projection: this file's, or (for a file
        opened read-only that predates it) one made in memory from one scan of the log."""
        if self.projection_current():
            return self.con
        log.warning("%s has no current outcomes projection: building one in memory", self.path)
        memory = duckdb.connect(":memory:")
        outcomes.rebuild(memory, (projection.rows_of_stored(g) for g in self.scan()))
        return memory

    @translated
    def adopt_projection(self, paths: Sequence[str]) -> int:
        """Take the projection tables built in ``paths`` as this file's, in one transaction."""
        with transaction(self.con):
            count = outcomes.adopt(self.con, paths)
            self._set_meta("projection", projection.VERSION)
        self._remark()
        return count

    @translated
    def leaves(self, after: int, limit: int = 100_000) -> list[bytes]:
        """The log tree's leaf hashes from position ``after`` on, at most ``limit``."""
        if not self._placed:
            return []
        found = self._read(
            "SELECT game_id, seq, hash FROM events WHERE tree_position >= ? "
            "ORDER BY tree_position LIMIT ?",
            [after, limit],
        )
        return [leaf_hash(leaf_of(g, int(q), h)) for g, q, h in found]

    @translated
    def leaf_position(self, game_id: str, seq: int) -> int | None:
        """A row's position in the log tree (None: no such row)."""
        query = "SELECT tree_position FROM events WHERE game_id = ? AND seq = ?"
        found = self._read(query, [game_id, seq]) if self._placed else []
        return int(found[0][0]) if found and found[0][0] is not None else None

    @translated
    def rows_from(self, position: int, limit: int = 1000) -> list[tuple[int, Row]]:
        """The rows from log position ``position`` on, in log order, with their positions."""
        if not self._placed:
            return []
        found = self._read(rows_from_query("events", "tree_position", "?"), [position, limit])
        return [(int(r[0]), row_of(r[1:])) for r in found]

    @translated
    def add_tree_head(self, head: TreeHead) -> None:
        """Keep a signed tree head."""
        self.con.execute(
            f"INSERT INTO tree_heads ({HEAD_COLUMNS}) VALUES (?, ?, ?, ?, ?)", head_values(head)
        )

    @translated
    def tree_heads(self, size: int = -1) -> list[TreeHead]:
        """The signed tree heads kept, by size then time (``size``: of that size only)."""
        if not self._has_tree():
            return []
        where, params = ("WHERE size = ?", [size]) if size >= 0 else ("", [])
        found = self._read(
            f"SELECT {HEAD_COLUMNS} FROM tree_heads {where} ORDER BY size, signed_at", params
        )
        return [head_of(r) for r in found]

    @translated
    def add_cosignature(self, cosigned: Cosignature) -> None:
        """Keep a witness's cosignature of a head."""
        marks = ", ".join("?" * 7)
        self.con.execute(
            f"INSERT INTO cosignatures ({COSIGNATURE_COLUMNS}) VALUES ({marks})",
            cosignature_values(cosigned),
        )

    @translated
    def cosignatures(self, size: int) -> list[Cosignature]:
        """The witnesses' cosignatures of heads of ``size``."""
        if not self._has_tree():
            return []
        found = self._read(
            f"SELECT {COSIGNATURE_COLUMNS} FROM cosignatures WHERE size = ? ORDER BY witnessed_at",
            [size],
        )
        return [cosignature_of(r) for r in found]

    @translated
    def add_server_key(self, public_key: str, at: str) -> None:
        """Note a signing key the server uses (kept for ever, so old receipts verify)."""
        self.con.execute(
            f"INSERT OR IGNORE INTO server_keys ({KEY_COLUMNS}) VALUES (?, ?)", [public_key, at]
        )

    @translated
    def server_keys(self) -> list[tuple[str, str]]:
        """Every signing key the server has used: (public key hex, first used), oldest first."""
        if not self._has_tree():
            return []
        found = self._read(f"SELECT {KEY_COLUMNS} FROM server_keys ORDER BY first_used")
        return [(str(k), str(t)) for k, t in found]

    def _has_tree(self) -> bool:
        """Whether the file has the log tree's tables (a read-only older file has not)."""
        return self._tree_tables

    def reader(self) -> Store:
        """The same file through another connection, for reads on another thread."""
        other = object.__new__(Store)
        other.con = self.con.cursor()
        other._lookups = other.con.cursor()
        other._appenders, other._appenders_of = {}, other.con
        other.path, other.read_only, other._next_n = self.path, True, self._next_n
        other.row_columns = self.row_columns
        other._tree_tables, other._next_leaf = self._tree_tables, self._next_leaf
        other._placed = self._placed
        other._writing = False  # the umask is held by the store that opened the file
        other._mark = None  # and the mark written by it
        return other

    @translated
    def rebuild_projection(self, projected: Iterable[projection.Projected]) -> int:
        """Make the outcomes projection again from every game's rows, in one transaction."""
        with transaction(self.con):
            count = outcomes.rebuild(self.con, projected)
            self._set_meta("projection", projection.VERSION)
        self._remark()
        return count

    # Seat links: codes and sessions by their sha256.  The writes run where every write
    # runs (the store's thread, or the child's writing connection), one at a time, so a
    # code's delete and its session's insert in one transaction spend it once.

    @translated
    def add_seat_code(self, digest: str, game_id: str, seat: int) -> None:
        """Keep a seat's new one-time code (its sha256) in place of the seat's unused one."""
        with transaction(self.con):
            self.con.execute(
                "DELETE FROM seat_codes WHERE game_id = ? AND seat = ?", [game_id, seat]
            )
            self.con.execute("INSERT INTO seat_codes VALUES (?, ?, ?)", [digest, game_id, seat])

    @translated
    def seat_of_code(self, digest: str) -> tuple[str, int] | None:
        """(game id, seat) of an unused code's sha256; None: spent, replaced or never made."""
        return self._seat_of("seat_codes", "code_sha256", digest)

    @translated
    def take_seat_code(self, digest: str, game_id: str, session: str, most: int) -> int | None:
        """Spend a code of ``game_id`` and open a session on its seat, in one transaction:
        the seat, once; None for a code spent, replaced, never made or another game's."""
        with transaction(self.con):
            taken = self.con.execute(
                "DELETE FROM seat_codes WHERE code_sha256 = ? AND game_id = ? RETURNING seat",
                [digest, game_id],
            ).fetchall()
            if not taken:
                return None
            seat = int(taken[0][0])
            found = self.con.execute("SELECT coalesce(max(n), 0) + 1 FROM seat_sessions")
            n = int(found.fetchall()[0][0])
            self.con.execute(
                "INSERT INTO seat_sessions VALUES (?, ?, ?, ?)", [session, game_id, seat, n]
            )
            self.con.execute("DELETE FROM seat_sessions WHERE n <= ?", [n - most])
        return seat

    @translated
    def seat_of_session(self, digest: str) -> tuple[str, int] | None:
        """(game id, seat) of an open session's sha256; None: ended, dropped or never opened."""
        return self._seat_of("seat_sessions", "session_sha256", digest)

    def _seat_of(self, table: str, column: str, digest: str) -> tuple[str, int] | None:
        if self._read_only_file and not self._has_table(table):  # a file before seat links
            return None
        found = self.con.execute(
            f"SELECT game_id, seat FROM {table} WHERE {column} = ?", [digest]
        ).fetchall()
        return (str(found[0][0]), int(found[0][1])) if found else None

    @translated
    def end_seat_session(self, digest: str) -> bool:
        """End a session (its sha256); False when it was not open."""
        found = self.con.execute(
            "DELETE FROM seat_sessions WHERE session_sha256 = ? RETURNING seat", [digest]
        ).fetchall()
        return bool(found)

    @translated
    def adopt_seat_links(
        self, codes: Sequence[tuple[str, str, int]], sessions: Sequence[tuple[str, str, int]]
    ) -> int:
        """Take in codes and sessions kept elsewhere before, in one transaction; how many
        were new (one already kept, or a code for a seat that holds one, is left)."""
        new = 0
        with transaction(self.con):
            for digest, game_id, seat in codes:
                held = self.con.execute(
                    "SELECT count(*) FROM seat_codes WHERE code_sha256 = ? "
                    "OR (game_id = ? AND seat = ?)",
                    [digest, game_id, seat],
                ).fetchall()
                if not held[0][0]:
                    self.con.execute(
                        "INSERT INTO seat_codes VALUES (?, ?, ?)", [digest, game_id, seat]
                    )
                    new += 1
            for digest, game_id, seat in sessions:
                added = self.con.execute(
                    "INSERT OR IGNORE INTO seat_sessions SELECT ?, ?, ?, "
                    "coalesce(max(n), 0) + 1 FROM seat_sessions RETURNING seat",
                    [digest, game_id, seat],
                ).fetchall()
                new += len(added)
        return new


def _run(cursor: duckdb.DuckDBPyConnection, sql: str, params: Sequence[object]) -> None:
    """Start a query on a cursor, with the store's error translation."""
    translated(lambda: cursor.execute(sql, list(params)))()


def _chunks(cursor: duckdb.DuckDBPyConnection, count: int) -> Iterator[list[tuple[Any, ...]]]:
    """The rows of a streamed query, fetched ``count`` at a time: each fetch's list."""
    fetch = translated(lambda: cursor.fetchmany(count))
    while chunk := fetch():
        yield chunk


def _write_rows(
    con: Statements, batch: Batch, rows: Sequence[Row], next_n: int, first_leaf: int
) -> int:
    """Everything a batch writes (``rows``: the rows it appends, their places in the log
    tree from ``first_leaf``), one statement per table; returns the games listed."""
    new = inserts_of(batch)
    if new.packs:
        insert(con, "packs", PACK_COLUMNS, new.packs, OR_IGNORE)
    if new.seeds:
        insert(con, "seeds", SEED_COLUMNS, new.seeds)
    if new.seats:
        insert(con, "seats", SEAT_COLUMNS, new.seats)
    if new.geneses:
        insert(con, "games", GAMES_COLUMNS, listing(new.geneses, next_n))
    if new.drafts:
        insert(con, "pending_games", DRAFT_COLUMNS, new.drafts)
    if new.entropy:
        insert(con, "seat_entropy", ENTROPY_COLUMNS, new.entropy)
    for game_id in batch.started:
        con.execute("DELETE FROM pending_games WHERE game_id = ?", [game_id])
    if rows:
        placed = [[*row_values(r), first_leaf + i] for i, r in enumerate(rows)]
        insert(con, "events", f"{ROW_COLUMNS}, tree_position", placed)
    if new.rejections:
        insert(con, "rejections", REJECTION_COLUMNS, new.rejections)
    if batch.outcomes:
        outcomes.insert(con, batch.outcomes)
    return len(new.geneses)


def _pack_sha_of(genesis_row: Row) -> str:
    return record_pb2.Genesis.FromString(genesis_row.body).pack_sha256
