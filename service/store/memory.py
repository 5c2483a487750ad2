"""``MemoryStore``: the event store in this process's memory, for tests and embedded use.

Chosen by ``--db memory:`` (``open_store``).  It keeps the whole ``EventStore`` contract
(``tests/store/test_store_contract.py`` runs the same tests on it as on DuckDB and PostgreSQL)
and nothing outlives it: every open is a new, empty store, and no file is made.

- a write is all or nothing: every key is checked before anything changes, and a taken
  one raises ``StoreConflict`` as the database adapters raise it: a (game_id, seq), a
  sender's command_id in a game (PostgreSQL's key), a game's seed, seats, seat entropy,
  a finished game's outcome line;
- everything is kept by game id (rows, seeds, seats, the list line, entropy, refusals),
  so a load, a look-up or an append is a dict's work, never a pass over every game;
- the outcomes projection is kept as the rows ``service/store/projection.py`` makes,
  and standings are ``replay.tournament.outcomes`` over them, so they come out as the SQL ones do.
  A game's headline figure for ``stats`` is SQL the game brings (``figure_of``): it is run
  as it is written, by the standard library's SQLite in memory over that game kind's
  projection rows, made when ``stats`` is asked and dropped after.

Any thread may call it: one lock makes each call see a write whole or not at all.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import logging
import re
import threading
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from feastlog.replay import games
from feastlog.replay.proof.signed import Cosignature, TreeHead, leaf_hash_of
from feastlog.replay.record.rows import Row
from feastlog.replay.tournament.outcomes import Result, Standing, standings
from feastlog.service.incidents import new_incident_id
from feastlog.service.store import projection
from feastlog.service.store.errors import StoreConflict, StoreUnavailable
from feastlog.service.store.port import MEMORY
from feastlog.service.store.records import (
    Batch,
    Listed,
    NewGame,
    PendingGame,
    Rejection,
    StoredGame,
)
from feastlog.service.store.sql import share_of
from feastlog.v1 import record_pb2

log = logging.getLogger("feastlog.store")

# The columns of an outcome_games and an outcome_seats row (projection.outcome_rows).
GAME_ID, KIND, TOURNAMENT, SEATS, ROWS, VOIDED, SCORED, WINNERS, CREATED_AT = range(9)
SEAT, NAME, POINTS, WON = 3, 4, 5, 7


@dataclass
class _Game:
    """Everything kept of one game, under its id."""

    n: int  # its place in the game list
    genesis: record_pb2.Genesis  # or the draft, while it waits for seat entropy
    server_seed: bytes
    seat_names: tuple[str, ...]
    waiting: bytes | None = None  # the draft, while it waits for seat entropy
    rows: list[Row] = field(default_factory=list)  # in seq order
    seqs: set[int] = field(default_factory=set)
    commands: set[tuple[str, str]] = field(default_factory=set)  # (actor, command_id)


class MemoryStore:
    """An event store held in this process's memory (see the module's documentation)."""

    shared = False  # nothing else can reach it
    commit = None  # the writer commits on the store's thread

    def __init__(self, read_only: bool = False) -> None:
        self.path = MEMORY
        self.read_only = read_only
        self._lock = threading.RLock()
        self._games: dict[str, _Game] = {}  # in list order: its keys are oldest first
        self._listed: list[str] = []  # game ids by place in the list (place n at n - 1)
        self._packs: dict[str, bytes] = {}
        self._tokens: dict[str, tuple[str, int]] = {}
        # kept by game id as the databases keep them, whether or not the game is stored
        self._entropy: dict[str, dict[int, bytes]] = {}
        self._rejections: dict[str, list[Rejection]] = {}
        self._dealt: dict[bytes, list[str]] = {}  # game ids by server seed, oldest first
        self._arbiters: dict[str, tuple[str, str, str]] = {}  # name: (key sha256, added, revoked)
        self._projected: dict[str, list[list[Any]]] = {}  # projection table: its rows
        self._ended: dict[str, list[Any]] = {}  # game id: its outcome_games row
        self._seats_ended: dict[str, list[list[Any]]] = {}  # game id: its outcome_seats rows
        self._leaves: list[bytes] = []  # the log tree's leaf hashes, by position
        self._positions: dict[tuple[str, int], int] = {}  # (game id, seq): its position
        self._placed: list[Row] = []  # every row, by position
        self._heads: list[TreeHead] = []
        self._cosignatures: list[Cosignature] = []
        self._keys: dict[str, str] = {}  # public key: first used
        self._links = _SeatLinks()  # seat codes and sessions, by sha256

    def close(self) -> None:
        """Nothing to release: what it held goes with it."""

    def reader(self) -> MemoryStore:
        """The same store: any thread may read it."""
        return self

    def checkpoint(self, least: int) -> int:
        """Nothing to fold: there is no write-ahead log."""
        return 0

    def write(self, batch: Batch) -> int | None:
        """Commit a batch: every key checked first, then all of it written, or none; the
        first appended row's log position."""
        with self._lock:
            first = len(self._leaves) if batch.appended() else None
            self._writable("write")
            made = [_made(g, len(self._listed) + 1 + i) for i, g in enumerate(batch.games)]
            self._check(batch, made)
            for new, (game_id, game) in zip(batch.games, made, strict=True):
                self._games[game_id] = game
                self._listed.append(game_id)
                self._packs.setdefault(new.pack_sha256, new.pack_body)
                self._dealt.setdefault(new.server_seed, []).append(game_id)
                for seat, (_, token) in enumerate(new.seats):
                    self._tokens.setdefault(token, (game_id, seat))
            for game_id, seat, entropy in batch.entropy:
                self._entropy.setdefault(game_id, {})[seat] = entropy
            for game_id in batch.started:
                if game_id in self._games:
                    self._games[game_id].waiting = None
            for row in batch.appended():
                _append(self._games[row.game_id], row)
                self._positions[(row.game_id, row.seq)] = len(self._leaves)
                self._leaves.append(leaf_hash_of(row))
                self._placed.append(row)
            for refused in batch.rejections:
                self._rejections.setdefault(refused.game_id, []).append(refused)
            self._project(batch.outcomes)
            return first

    def leaves(self, after: int, limit: int = 100_000) -> list[bytes]:
        """The log tree's leaf hashes from position ``after`` on, in order, at most ``limit``."""
        with self._lock:
            return self._leaves[after : after + limit]

    def leaf_position(self, game_id: str, seq: int) -> int | None:
        """A row's position in the log tree (None: no such row)."""
        with self._lock:
            return self._positions.get((game_id, seq))

    def rows_from(self, position: int, limit: int = 1000) -> list[tuple[int, Row]]:
        """The rows from log position ``position`` on, in log order, with their positions."""
        with self._lock:
            found = self._placed[position : position + limit]
            return [(position + i, row) for i, row in enumerate(found)]

    def add_tree_head(self, head: TreeHead) -> None:
        """Keep a signed tree head."""
        with self._lock:
            self._writable("add_tree_head")
            self._heads.append(head)

    def tree_heads(self, size: int = -1) -> list[TreeHead]:
        """The signed tree heads kept, by size then time (``size``: of that size only)."""
        with self._lock:
            kept = [h for h in self._heads if size < 0 or h.size == size]
        return sorted(kept, key=lambda h: (h.size, h.signed_at))

    def add_cosignature(self, cosigned: Cosignature) -> None:
        """Keep a witness's cosignature of a head."""
        with self._lock:
            self._writable("add_cosignature")
            self._cosignatures.append(cosigned)

    def cosignatures(self, size: int) -> list[Cosignature]:
        """The witnesses' cosignatures of heads of ``size``."""
        with self._lock:
            kept = [c for c in self._cosignatures if c.size == size]
        return sorted(kept, key=lambda c: c.witnessed_at)

    def add_server_key(self, public_key: str, at: str) -> None:
        """Note a signing key the server uses (kept for ever, so old receipts verify)."""
        with self._lock:
            self._writable("add_server_key")
            self._keys.setdefault(public_key, at)

    def server_keys(self) -> list[tuple[str, str]]:
        """Every signing key the server has used: (public key hex, first used), oldest first."""
        with self._lock:
            return sorted(self._keys.items(), key=lambda k: k[1])

    def _writable(self, method: str) -> None:
        if self.read_only:
            raise _unavailable(method, "the store was opened read-only")

    def _check(self, batch: Batch, made: list[tuple[str, _Game]]) -> None:
        """Raise StoreConflict, before anything is written, if a key of the batch is taken."""
        new_ids = [game_id for game_id, _ in made]
        if _twice(new_ids) or any(g in self._games for g in new_ids):
            raise _conflict("a game id is taken")
        entropy = [(game_id, seat) for game_id, seat, _ in batch.entropy]
        if _twice(entropy) or any(s in self._entropy.get(g, {}) for g, s in entropy):
            raise _conflict("a seat's entropy is taken")
        rows = batch.appended()
        if any(row.game_id not in self._games and row.game_id not in new_ids for row in rows):
            # a database would take them, unlisted and without a seed: a writer that sends
            # them has lost track of which games there are
            raise _unavailable("write", "rows of a game that was never created")
        seqs = [(row.game_id, row.seq) for row in rows]
        if _twice(seqs) or any(s in self._games[g].seqs for g, s in seqs if g in self._games):
            raise _conflict("a (game_id, seq) is taken")
        sent = [(row.game_id, (row.actor, row.command_id)) for row in rows if row.command_id]
        if _twice(sent) or any(c in self._games[g].commands for g, c in sent if g in self._games):
            raise _conflict("a sender's command_id is taken in its game")
        ended = _ended_in(batch.outcomes)
        if _twice(ended) or any(g in self._ended for g in ended):
            raise _conflict("a finished game's outcome is written already")

    def _project(self, projected: projection.Projected) -> None:
        """Keep the outcome rows of games that ended (checked first by ``_check``)."""
        for name, rows in projected:
            self._projected.setdefault(name, []).extend(rows)
            for row in rows:
                if name == "outcome_games":
                    self._ended[row[GAME_ID]] = row
                elif name == "outcome_seats":
                    self._seats_ended.setdefault(row[GAME_ID], []).append(row)

    def load(self, game_id: str) -> StoredGame | None:
        """A game's rows, seed, pack and seat names; None when there is no such game."""
        with self._lock:
            game = self._games.get(game_id)
            if game is None or not game.rows:
                return None
            pack = self._packs.get(_genesis_of(game.rows[0]).pack_sha256, b"")
            return StoredGame(tuple(game.rows), game.server_seed, pack, game.seat_names)

    def rows(self, game_id: str) -> tuple[Row, ...]:
        """A game's rows in seq order."""
        with self._lock:
            game = self._games.get(game_id)
            return tuple(game.rows) if game else ()

    def rows_after(self, game_id: str, seq: int) -> tuple[Row, ...]:
        """A game's rows after ``seq``, in seq order."""
        return tuple(row for row in self.rows(game_id) if row.seq > seq)

    def last_seq(self, game_id: str) -> int:
        """A game's last seq (0 when it has no rows yet)."""
        with self._lock:
            game = self._games.get(game_id)
            return game.rows[-1].seq if game and game.rows else 0

    def game_ids(self) -> list[str]:
        """Every game id with rows, oldest first (by its genesis row's time)."""
        with self._lock:
            found = self._games.items()
            begun = [(g.rows[0].recorded_at, i) for i, g in found if g.rows and g.rows[0].seq == 1]
        return [game_id for _, game_id in sorted(begun)]

    def count_games(self, game_kind: str = "") -> tuple[int, int]:
        """(games with rows, rows), of one kind or all."""
        with self._lock:
            counts = [len(g.rows) for g in self._of_kind(game_kind) if g.rows]
        return len(counts), sum(counts)

    def _of_kind(self, game_kind: str) -> Iterable[_Game]:
        found = self._games.values()
        return (g for g in found if g.genesis.game_kind == game_kind) if game_kind else found

    def scan(
        self, part: tuple[int, int] | None = None, game_kind: str = ""
    ) -> Generator[StoredGame]:
        """Every game with rows, oldest first, as they were when the scan began."""
        for _, stored in self.scan_numbered(part, game_kind):
            yield stored

    def scan_numbered(
        self,
        part: tuple[int, int] | None = None,
        game_kind: str = "",
        fetch: int = 20_000,
        share: tuple[int, int] | None = None,
    ) -> Generator[tuple[int, StoredGame]]:
        """(place in the game list, game) for every game with rows, as they were when the
        scan began; ``part=(k, n)`` keeps the games whose place is k modulo n, ``share``
        a run of them (``sql.share_of``)."""
        with self._lock:
            found = [
                (g.n, tuple(g.rows), g.server_seed)
                for g in self._of_kind(game_kind)
                if g.rows and (part is None or g.n % part[1] == part[0])
            ]
            packs = dict(self._packs)
        if share is not None:
            counts = sorted((n, len(rows)) for n, rows, _ in found)
            first, end = share_of(counts, share)
            found = [game for game in found if first <= game[0] < end]
        for n, rows, seed in found:
            yield n, StoredGame.scanned(rows, seed if rows[0].seq == 1 else b"", packs)

    def pending(self) -> list[PendingGame]:
        """Games waiting for seat entropy, with what each seat has sent so far."""
        with self._lock:
            waiting = sorted(i for i, g in self._games.items() if g.waiting is not None)
            return [p for p in map(self.pending_game, waiting) if p is not None]

    def pending_game(self, game_id: str) -> PendingGame | None:
        """One game waiting for seat entropy (None once it has started, or if unknown)."""
        with self._lock:
            game = self._games.get(game_id)
            if game is None or game.waiting is None:
                return None
            pack = self._packs.get(game.genesis.pack_sha256, b"")
            sent = dict(self._entropy.get(game_id, {}))
            return PendingGame(game_id, game.waiting, game.server_seed, pack, sent)

    def seat_of_token(self, digest: str) -> tuple[str, int] | None:
        """(game id, seat) of a seat token's sha256; None if unknown."""
        with self._lock:
            return self._tokens.get(digest)

    def arbiter_of_key(self, digest: str) -> str | None:
        """The named arbiter whose key has this sha256, unless revoked; None if unknown."""
        with self._lock:
            found = self._arbiters.items()
            return next((n for n, (key, _, out) in found if key == digest and not out), None)

    def add_arbiter(self, name: str, digest: str, at: str) -> bool:
        """Record a named arbiter's key; False when the name holds a key not revoked."""
        with self._lock:
            self._writable("add_arbiter")
            found = self._arbiters.get(name)
            if found is not None and not found[2]:
                return False
            self._arbiters[name] = (digest, at, "")
            return True

    def revoke_arbiter(self, name: str, at: str) -> bool:
        """Revoke a named arbiter's key; False when there is no such arbiter holding one."""
        with self._lock:
            self._writable("revoke_arbiter")
            found = self._arbiters.get(name)
            if found is None or found[2]:
                return False
            self._arbiters[name] = (found[0], found[1], at)
            return True

    def arbiters(self) -> list[tuple[str, str, str]]:
        """Every named arbiter: (name, added at, revoked at or '')."""
        with self._lock:
            return [
                (n, added, revoked) for n, (_, added, revoked) in sorted(self._arbiters.items())
            ]

    def rejections(self, game_id: str) -> list[Rejection]:
        """A game's refused commands, oldest first."""
        with self._lock:
            return sorted(self._rejections.get(game_id, []), key=lambda r: r.recorded_at)

    def listed(
        self, game_kind: str = "", tournament_id: str = "", before: int = 0, limit: int = 50
    ) -> list[Listed]:
        """Up to ``limit`` games, newest first, listed before place ``before`` (0: from the top).

        A finished game comes with its number of rows (from the projection).
        """
        with self._lock:
            end = min(before - 1, len(self._listed)) if before else len(self._listed)
            found: list[Listed] = []
            for game_id in reversed(self._listed[: max(end, 0)]):
                if len(found) >= limit:
                    break
                line = self._line(game_id)
                if game_kind in ("", line.game_kind) and tournament_id in ("", line.tournament_id):
                    found.append(line)
            return found

    def _line(self, game_id: str) -> Listed:
        game = self._games[game_id]
        genesis, ended = game.genesis, self._ended.get(game_id)
        return Listed(
            game.n,
            game_id,
            genesis.game_kind,
            tuple(s.name for s in genesis.seats),
            genesis.created_at,
            genesis.tournament_id,
            None if ended is None else int(ended[ROWS]),
        )

    def known_games(self, game_ids: Sequence[str]) -> dict[str, str]:
        """Of these games, those stored, each with the hash of its last row ('' if none)."""
        with self._lock:
            found = {g: self._games[g] for g in game_ids if g in self._games}
            return {g: game.rows[-1].hash if game.rows else "" for g, game in found.items()}

    def tournament_games(self, tournament_id: str) -> int:
        """How many games (running or finished) a tournament has."""
        with self._lock:
            return sum(g.genesis.tournament_id == tournament_id for g in self._games.values())

    def twins_running(self, game_id: str) -> int:
        """How many other games dealt from this game's server seed have not ended (running,
        or waiting for seat entropy): while one has, a finished game with a supplied seed
        is held back (``replay.record.visibility.Release``)."""
        with self._lock:
            game = self._games.get(game_id)
            dealt = self._dealt.get(game.server_seed, []) if game else []
            return sum(g != game_id and g not in self._ended for g in dealt)

    def dealt_from(self, server_seed: bytes) -> list[tuple[str, str, str]]:
        """Every game dealt from this server seed, oldest first: (game id, created at, when
        its seed was revealed, '' while it runs or waits for seat entropy)."""
        with self._lock:
            found = [(g, self._games[g]) for g in self._dealt.get(server_seed, [])]
            return [(g, game.genesis.created_at, _revealed_at(game.rows)) for g, game in found]

    def projection_current(self) -> bool:
        """Always: the outcomes projection is written with the rows that end each game."""
        return True

    def stats(self, tournament_id: str = "") -> list[projection.KindStats]:
        """Per game kind: games scored, the win rate by seat position, the game's figure."""
        with self._lock:
            scored = [
                g
                for g in self._ended.values()
                if g[SCORED] and tournament_id in ("", g[TOURNAMENT])
            ]
            kinds = sorted({g[KIND] for g in scored})
            won: dict[tuple[str, int], list[bool]] = {}
            for game in scored:
                for seat in self._seats_ended.get(game[GAME_ID], []):
                    won.setdefault((game[KIND], seat[SEAT]), []).append(bool(seat[WON]))
            out = []
            for kind in kinds:
                label, query = projection.figure_of(kind)
                by_seat = tuple(sum(w) / len(w) for (k, _), w in sorted(won.items()) if k == kind)
                played = sum(g[KIND] == kind for g in scored)
                figure = self._figure(kind, query, tournament_id) if label else None
                out.append(projection.KindStats(kind, played, by_seat, label, figure))
            return out

    def _figure(self, kind: str, query: str, tournament_id: str) -> float | None:
        """A kind's headline figure: its SQL as the DuckDB store runs it, over its rows."""
        import sqlite3  # only when stats are asked: nothing else of this store needs SQL

        tables = ["outcome_games", "outcome_seats"] + [
            t.name for t in games.engine(kind).projection.tables
        ]
        columns = projection.tables()
        if tournament_id:
            query += (" AND" if "WHERE" in query else " WHERE") + (
                " game_id IN (SELECT game_id FROM outcome_games WHERE tournament_id = $t)"
            )
        with contextlib.closing(sqlite3.connect(":memory:")) as con:
            for name in tables:
                named = _column_names(columns[name])
                con.execute(f"CREATE TABLE {name} ({', '.join(named)})")
                rows = [[_plain(v) for v in row] for row in self._projected.get(name, [])]
                if rows:
                    marks = ", ".join("?" * len(named))
                    con.executemany(f"INSERT INTO {name} VALUES ({marks})", rows)
            found = con.execute(query, {"t": tournament_id} if tournament_id else {}).fetchone()
        return None if found is None or found[0] is None else float(found[0])

    def standings(self, tournament_id: str) -> tuple[list[Standing], int]:
        """A tournament's standings from its finished games (``replay.tournament.outcomes``), and
        how many games that is: void games count as played with no points and no wins."""
        with self._lock:
            ended = [g for g in self._ended.values() if g[TOURNAMENT] == tournament_id]
            results = [self._result(g) for g in ended]
        return standings(results), len(ended)

    def _result(self, game: list[Any]) -> Result:
        """A finished game's result as its outcome rows hold it."""
        seats = sorted(self._seats_ended.get(game[GAME_ID], []), key=lambda s: s[SEAT])
        names = [s[NAME] for s in seats]
        points = [int(s[POINTS]) for s in seats]
        winners = [i for i, s in enumerate(seats) if s[WON]]
        return Result(game[GAME_ID], names, points, winners, void=not game[SCORED])

    def rebuild_projection(self, projected: Iterable[projection.Projected]) -> int:
        """Make the outcomes projection again from every game's rows, all at once."""
        every = [p for p in projected if p]
        with self._lock:
            self._writable("rebuild_projection")
            if _twice([g for found in every for g in _ended_in(found)]):
                raise _conflict("a finished game's outcome comes twice")
            self._projected, self._ended, self._seats_ended = {}, {}, {}
            for found in every:
                self._project(found)
        return len(every)

    # Seat links: codes and sessions by their sha256, under the store's lock.

    def add_seat_code(self, digest: str, game_id: str, seat: int) -> None:
        """Keep a seat's new one-time code (its sha256) in place of the seat's unused one."""
        with self._lock:
            self._writable("add_seat_code")
            links = self._links
            links.codes.pop(links.by_seat.get((game_id, seat), ""), None)
            links.codes[digest] = (game_id, seat)
            links.by_seat[(game_id, seat)] = digest

    def seat_of_code(self, digest: str) -> tuple[str, int] | None:
        """(game id, seat) of an unused code's sha256; None: spent, replaced or never made."""
        with self._lock:
            return self._links.codes.get(digest)

    def take_seat_code(self, digest: str, game_id: str, session: str, most: int) -> int | None:
        """Spend a code of ``game_id`` and open a session on its seat: the seat, once."""
        with self._lock:
            self._writable("take_seat_code")
            links = self._links
            found = links.codes.get(digest)
            if found is None or found[0] != game_id:
                return None
            del links.codes[digest]
            del links.by_seat[found]
            links.open(session, found, most)
            return found[1]

    def seat_of_session(self, digest: str) -> tuple[str, int] | None:
        """(game id, seat) of an open session's sha256; None: ended, dropped or never opened."""
        with self._lock:
            found = self._links.sessions.get(digest)
            return found[:2] if found is not None else None

    def end_seat_session(self, digest: str) -> bool:
        """End a session (its sha256); False when it was not open."""
        with self._lock:
            self._writable("end_seat_session")
            return self._links.sessions.pop(digest, None) is not None

    def adopt_seat_links(
        self, codes: Sequence[tuple[str, str, int]], sessions: Sequence[tuple[str, str, int]]
    ) -> int:
        """Take in codes and sessions kept elsewhere before; how many were new."""
        with self._lock:
            self._writable("adopt_seat_links")
            links, new = self._links, 0
            for digest, game_id, seat in codes:
                if digest not in links.codes and (game_id, seat) not in links.by_seat:
                    links.codes[digest] = (game_id, seat)
                    links.by_seat[(game_id, seat)] = digest
                    new += 1
            for digest, game_id, seat in sessions:
                if digest not in links.sessions:
                    links.open(digest, (game_id, seat))
                    new += 1
            return new


@dataclass
class _SeatLinks:
    """The unused seat codes and the open sessions, by their sha256."""

    codes: dict[str, tuple[str, int]] = field(default_factory=dict)
    by_seat: dict[tuple[str, int], str] = field(default_factory=dict)  # a seat's unused code
    sessions: dict[str, tuple[str, int, int]] = field(default_factory=dict)  # (game, seat, n)
    opened: int = 0  # sessions opened so far: the next one's number

    def open(self, digest: str, seat: tuple[str, int], most: int | None = None) -> None:
        """Open a session; those opened before the ``most`` newest go."""
        self.opened += 1
        self.sessions[digest] = (*seat, self.opened)
        while most is not None and self.sessions:
            oldest = next(iter(self.sessions))
            if self.sessions[oldest][2] > self.opened - most:
                break
            del self.sessions[oldest]


def _made(new: NewGame, n: int) -> tuple[str, _Game]:
    """A new game as kept, listed at place ``n``."""
    genesis = record_pb2.Genesis.FromString(new.genesis.body if new.genesis else new.draft)
    game_id = new.genesis.game_id if new.genesis else new.game_id
    names = tuple(name for name, _ in new.seats)
    waiting = new.draft if new.genesis is None else None
    return game_id, _Game(n, genesis, new.server_seed, names, waiting=waiting)


def _genesis_of(row: Row) -> record_pb2.Genesis:
    return record_pb2.Genesis.FromString(row.body)


def _revealed_at(rows: Sequence[Row]) -> str:
    """When a game's seed was revealed ('' while it runs)."""
    return next((r.recorded_at for r in reversed(rows) if r.kind == "seed_reveal"), "")


def _column_names(columns: str) -> list[str]:
    """The names of a projection table's columns, from their DDL (``name TYPE, ...``)."""
    return [part.split()[0] for part in re.split(r",(?![^(]*\))", columns)]


def _plain(value: Any) -> Any:
    """A projection value as SQLite takes it: lists and objects as JSON text."""
    return json.dumps(value) if isinstance(value, list | tuple | dict) else value


def _append(game: _Game, row: Row) -> None:
    """Keep a row under its game, in seq order."""
    if game.rows and row.seq < game.rows[-1].seq:
        bisect.insort(game.rows, row, key=lambda r: r.seq)
    else:
        game.rows.append(row)
    game.seqs.add(row.seq)
    if row.command_id:
        game.commands.add((row.actor, row.command_id))


def _ended_in(projected: projection.Projected) -> list[str]:
    """The games whose outcome line these projection rows hold."""
    return [r[GAME_ID] for name, rows in projected if name == "outcome_games" for r in rows]


def _twice(keys: Sequence[object]) -> bool:
    """Whether a key comes twice among ``keys`` (a write that clashes with itself)."""
    return len(set(keys)) < len(keys)


def _conflict(what: str) -> StoreConflict:
    """The error the database adapters raise when a write clashes with what is stored."""
    incident = _logged("write", what)
    return StoreConflict(
        f"the game store refused a write that was out of date (incident {incident}); try again",
        incident_id=incident,
    )


def _unavailable(method: str, what: str) -> StoreUnavailable:
    """The error of a write the store cannot take."""
    incident = _logged(method, what)
    return StoreUnavailable(
        f"the game store failed to write (incident {incident}); try again", incident_id=incident
    )


def _logged(method: str, what: str) -> str:
    """Log a refused write under a new incident id, as the database adapters do; the id."""
    incident = new_incident_id()
    log.error("incident %s: the store refused %s: %s", incident, method, what)
    return incident
