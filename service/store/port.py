"""What the service needs of an event store, and how a ``--db`` value picks one.

What a store serves is five capabilities, a Protocol each: the ``Log`` of game records,
the outcomes ``Projections``, ``Access`` (seat tokens, arbiters' keys), the log tree's
``Proof`` and the seat ``Links``.  ``EventStore`` is all of them; ``METHODS`` names each
of their methods once, and the store process forwards and serves exactly those.

The adapters keep the same contract (``tests/store/test_store_contract.py`` runs the same
suite on each):

- ``duckdb.Store``: a DuckDB file, the embedded default (one writing process);
- ``process.ProcessStore``: a server's DuckDB file, opened by a child process of its own;
- ``postgres.PgStore``: a PostgreSQL database (``--db postgresql://…``), which any
  number of feastlog nodes share;
- ``memory.MemoryStore``: this process's memory (``--db memory:``), new and empty at
  each open, for tests and embedded use.

The values they exchange with the service (``Batch``, ``Row``, ``StoredGame``…) are plain
dataclasses; each adapter translates its driver's errors into the store's own
(``StoreConflict`` when a write clashes with what is stored, ``StoreUnavailable`` when
the store failed, ``CannotOpenStore`` when it cannot be opened), once, in its module.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Generator, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol
from urllib.parse import unquote

from feastlog.client.files import POSTGRES_SCHEMES as POSTGRES_SCHEMES
from feastlog.client.files import is_postgres as is_postgres

if TYPE_CHECKING:  # the drivers are loaded only by the adapter a --db value picks
    from feastlog.replay.proof.signed import Cosignature, TreeHead
    from feastlog.replay.record.rows import Row
    from feastlog.replay.tournament.outcomes import Standing
    from feastlog.service.store import Batch, Listed, PendingGame, Rejection, StoredGame, projection
    from feastlog.service.store.records import Written

# The files a DuckDB store keeps beside its database: DuckDB's write-ahead log, and the
# commit mark it is held to (``duckdb/mark.py``).  Nothing else may be written there.
WAL_SUFFIX = ".wal"
MARK_SUFFIX = ".commits"
MEMORY = "memory:"  # the --db value of a store in memory (no file of that name is made)
# How a server's store process is started (``process/``), its parent's pid after it: the
# DuckDB adapter knows by it a dead server's child still holding a file's lock.
STORE_PROCESS = "feastlog.service.store.process.child"


class Log(Protocol):
    """The log of game records: each game's rows, seed, pack and seat names, written a
    batch at a time, and what the service reads of them."""

    path: str  # what to call it in messages (a DSN never shows its password)
    read_only: bool
    # Whether other processes may write to it: then a node's memory may be behind it.
    shared: bool

    def close(self) -> None:
        """Release the file or the connections."""

    def reader(self) -> EventStore:
        """The same store for reads on another thread."""

    def write(self, batch: Batch) -> int | None:
        """Commit a batch in one transaction: all of it or none of it; the log position
        of its first appended row (``Batch.appended``: the rest follow it in order), None
        when it appends none.

        Raises ``StoreConflict`` when a row's (game_id, seq), a sender's command_id in a
        game or another key is taken already: the writer's memory was behind the log.
        """

    @property
    def commit(self) -> Callable[[Batch], Awaitable[Written]] | None:
        """How the event loop commits a batch itself, as ``write`` would: set by a store
        that lives in another process (a message sent and awaited, so that no thread of
        this one has to win the interpreter lock for it); None, and the writer runs
        ``write`` on the store's thread.  Its answer: the first row's log position, and
        the receipt signatures of the rows committed when that process signs them."""

    def checkpoint(self, least: int) -> int:
        """Fold a write-ahead log of ``least`` bytes or more into the store, in a quiet
        moment; the bytes folded (0: nothing done, or nothing the store needs)."""

    def load(self, game_id: str) -> StoredGame | None:
        """A game's rows, seed, pack and seat names; None when there is no such game."""

    def rows(self, game_id: str) -> tuple[Row, ...]:
        """A game's rows in seq order."""

    def rows_after(self, game_id: str, seq: int) -> tuple[Row, ...]:
        """A game's rows after ``seq``, in seq order (what other nodes wrote since)."""

    def last_seq(self, game_id: str) -> int:
        """A game's last seq (0 when it has no rows yet)."""

    def game_ids(self) -> list[str]:
        """Every game id with rows, oldest first."""

    def count_games(self, game_kind: str = "") -> tuple[int, int]:
        """(games with rows, rows), of one kind or all."""

    def scan(
        self, part: tuple[int, int] | None = None, game_kind: str = ""
    ) -> Generator[StoredGame]:
        """Every game with rows, oldest first, from one ordered, streamed scan."""

    def scan_numbered(
        self,
        part: tuple[int, int] | None = None,
        game_kind: str = "",
        fetch: int = 20_000,
        share: tuple[int, int] | None = None,
    ) -> Generator[tuple[int, StoredGame]]:
        """(place in the game list, game) for every game with rows, in one streamed scan.

        ``part=(k, n)`` keeps the games whose place is k modulo n; ``share=(k, m)`` then
        keeps the k-th of m runs of consecutive games holding about as many rows each
        (``sql.share_of``): m scans of a store nobody writes to meanwhile read each game
        once, in m shares of about the same work.
        """

    def pending(self) -> list[PendingGame]:
        """Games waiting for seat entropy, with what each seat has sent so far."""

    def pending_game(self, game_id: str) -> PendingGame | None:
        """One game waiting for seat entropy (None once it has started, or if unknown)."""

    def rejections(self, game_id: str) -> list[Rejection]:
        """A game's refused commands, oldest first."""

    def listed(
        self, game_kind: str = "", tournament_id: str = "", before: int = 0, limit: int = 50
    ) -> list[Listed]:
        """Up to ``limit`` games, newest first, listed before place ``before``."""

    def known_games(self, game_ids: Sequence[str]) -> dict[str, str]:
        """Of these games, those stored, each with the hash of its last row ('' if none)."""

    def tournament_games(self, tournament_id: str) -> int:
        """How many games (running or finished) a tournament has."""

    def twins_running(self, game_id: str) -> int:
        """How many other games dealt from this game's server seed have not ended (running,
        or waiting for seat entropy): while one has, a finished game with a supplied seed
        is held back (``replay.record.visibility.Release``)."""

    def dealt_from(self, server_seed: bytes) -> list[tuple[str, str, str]]:
        """Every game dealt from this server seed, oldest first: (game id, created at, when
        its seed was revealed, '' while it runs or waits for seat entropy)."""


class Projections(Protocol):
    """The outcomes projection: a table per game kind, made from the log's rows, that
    the figures and standings are read from with SQL."""

    def projection_current(self) -> bool:
        """Whether the outcomes projection is there, of this version."""

    def stats(self, tournament_id: str = "") -> list[projection.KindStats]:
        """Per game kind figures, SQL over the outcomes projection."""

    def standings(self, tournament_id: str) -> tuple[list[Standing], int]:
        """A tournament's standings and its finished games, SQL over the projection."""

    def rebuild_projection(self, projected: Iterable[projection.Projected]) -> int:
        """Make the outcomes projection again from every game's rows, in one transaction."""


class Access(Protocol):
    """Who may act: the seats' tokens and the named arbiters' keys, each by its sha256."""

    def seat_of_token(self, digest: str) -> tuple[str, int] | None:
        """(game id, seat) of a seat token's sha256; None if unknown. Any thread may call it."""

    def arbiter_of_key(self, digest: str) -> str | None:
        """The named arbiter whose key has this sha256, unless revoked. Any thread may call it."""

    def add_arbiter(self, name: str, digest: str, at: str) -> bool:
        """Record a named arbiter's key; False when the name holds a key not revoked."""

    def revoke_arbiter(self, name: str, at: str) -> bool:
        """Revoke a named arbiter's key; False when there is no such arbiter holding one."""

    def arbiters(self) -> list[tuple[str, str, str]]:
        """Every named arbiter: (name, added at, revoked at or '')."""


class Proof(Protocol):
    """The log tree: every row's position in one server-wide tree, and the signed heads,
    witnesses' cosignatures and server keys that prove it.

    ``write`` gives every row it appends the next position in one server-wide tree
    before it returns: in the same transaction (one writer), or, on a shared store, just
    after the commit, in a placement that one node at a time makes for every node's rows
    pending then (``postgres/placing.py``), so that two nodes never give two rows one
    position and the nodes' commits do not wait for one another. Every read by position
    (``leaves``, ``rows_from``) holds placed rows only.
    """

    def leaves(self, after: int, limit: int = 100_000) -> list[bytes]:
        """The log tree's leaf hashes from position ``after`` on, in order, at most ``limit``."""

    def leaf_position(self, game_id: str, seq: int) -> int | None:
        """A row's position in the log tree (None: no such row)."""

    def rows_from(self, position: int, limit: int = 1000) -> list[tuple[int, Row]]:
        """The rows from log position ``position`` on, in log order, each with its
        position, at most ``limit`` (the stream of committed rows reads by position)."""

    def add_tree_head(self, head: TreeHead) -> None:
        """Keep a signed tree head."""

    def tree_heads(self, size: int = -1) -> list[TreeHead]:
        """The signed tree heads kept, by size then time (``size``: of that size only)."""

    def add_cosignature(self, cosigned: Cosignature) -> None:
        """Keep a witness's cosignature of a head."""

    def cosignatures(self, size: int) -> list[Cosignature]:
        """The witnesses' cosignatures of heads of ``size``."""

    def add_server_key(self, public_key: str, at: str) -> None:
        """Note a signing key the server uses (kept for ever, so old receipts verify)."""

    def server_keys(self) -> list[tuple[str, str]]:
        """Every signing key the server has used: (public key hex, first used), oldest first."""


class Links(Protocol):
    """Seat links: a seat's one-time codes and the browser sessions they open, each kept
    by its sha256 alone (``service/app/seatlinks.py`` makes them and keeps no copy), so
    that every node of a shared store serves them, and a restart keeps them."""

    def add_seat_code(self, digest: str, game_id: str, seat: int) -> None:
        """Keep a seat's new one-time code (its sha256) in place of the seat's unused one."""

    def seat_of_code(self, digest: str) -> tuple[str, int] | None:
        """(game id, seat) of an unused code's sha256; None: spent, replaced or never made."""

    def take_seat_code(self, digest: str, game_id: str, session: str, most: int) -> int | None:
        """Spend a code of ``game_id`` and open a session (``session``: its sha256) on the
        code's seat, at once: the seat, for the first taker alone (whichever node of a
        shared store it asks); None for a code spent, replaced, never made or another
        game's (that one is left unspent).  Sessions opened before the ``most`` newest
        are dropped."""

    def seat_of_session(self, digest: str) -> tuple[str, int] | None:
        """(game id, seat) of an open session's sha256; None: ended, dropped or never opened."""

    def end_seat_session(self, digest: str) -> bool:
        """End a session (its sha256); False when it was not open."""

    def adopt_seat_links(
        self, codes: Sequence[tuple[str, str, int]], sessions: Sequence[tuple[str, str, int]]
    ) -> int:
        """Take in codes and sessions kept elsewhere before (an older server's file beside
        the database): (sha256, game id, seat) each, sessions oldest first; one already
        kept, or a code for a seat that holds one, is left as it is.  How many were new."""


class EventStore(Log, Projections, Access, Proof, Links, Protocol):
    """An open store of game records: the log, seeds, seat tokens, packs and projection.

    Each capability is a Protocol of its own, so that a module that needs one names it
    (``service/app/seatlinks.py`` takes ``Links``), and the store process's client
    forwards every method of them by name (``methods``).
    """


# What an adapter serves, one Protocol each; ``EventStore`` is all of them.
CAPABILITIES: tuple[type, ...] = (Log, Projections, Access, Proof, Links)


def methods(*protocols: type) -> tuple[str, ...]:
    """The public methods (a property too: ``commit``) that these Protocols declare in
    their own bodies, in the order they are written: not their attributes (``path``…),
    nor what they inherit (so ``methods(EventStore)`` is empty)."""
    return tuple(
        name
        for protocol in protocols
        for name, member in vars(protocol).items()
        if not name.startswith("_") and (inspect.isfunction(member) or isinstance(member, property))
    )


# Every method of the store, once: what the store process forwards (``process/``).
METHODS = methods(*CAPABILITIES)


def is_memory(target: str) -> bool:
    """Whether a ``--db`` value asks for a store in memory rather than a DuckDB file."""
    return target == MEMORY


SECRET_PARAMETERS = ("password", "sslpassword")  # a DSN's query may carry these


def shown(target: str) -> str:
    """A ``--db`` value as it may be printed: a DSN's password left out, before the host
    and in its query (``?password=``), whatever else is wrong with it (a port out of
    range, a broken IPv6 host: it is printed in the message that says so)."""
    if not is_postgres(target):
        return target
    scheme, _, rest = target.partition("://")
    ends = [i for i in (rest.find(c) for c in "/?#") if i >= 0]
    authority, tail = rest[: min(ends, default=len(rest))], rest[min(ends, default=len(rest)) :]
    userinfo, at, host = authority.rpartition("@")
    if at:
        authority = f"{userinfo.partition(':')[0]}@{host}"
    path, question, query = tail.partition("?")
    if question:
        query, hash_mark, fragment = query.partition("#")
        kept = [p for p in query.split("&") if not _is_secret(p)]
        tail = f"{path}?{'&'.join(kept)}{hash_mark}{fragment}" if kept else path
    return f"{scheme}://{authority}{tail}"


def _is_secret(parameter: str) -> bool:
    key, equals, _ = parameter.partition("=")
    return bool(equals) and unquote(key).strip().lower() in SECRET_PARAMETERS


def redacted(text: str, target: str) -> str:
    """``text`` (a driver's message about ``target``) with the DSN's passwords left out:
    psycopg quotes a DSN it cannot parse ('invalid percent-encoded token: "pw%zz"')."""
    if not is_postgres(target):
        return text
    rest = target.partition("://")[2]
    userinfo, at, _ = rest.split("/", 1)[0].rpartition("@")
    found = [userinfo.partition(":")[2]] if at else []
    query = target.partition("?")[2].partition("#")[0]
    found += [p.partition("=")[2] for p in query.split("&") if _is_secret(p)]
    for secret in sorted({v for f in found for v in (f, unquote(f)) if v}, key=len, reverse=True):
        text = text.replace(secret, "…")
    return text


def exists(target: str) -> bool:
    """Whether there is a store to read at ``target`` (a database server answers for itself)."""
    return is_postgres(target) or Path(target).exists()


def open_store(target: str, read_only: bool = False) -> EventStore:
    """The store a ``--db`` value names: a PostgreSQL DSN, ``memory:`` (a new store in this
    process's memory), or else a DuckDB file."""
    if is_postgres(target):
        from feastlog.service.store.postgres import PgStore

        return PgStore(target, read_only=read_only)
    if is_memory(target):
        from feastlog.service.store.memory import MemoryStore

        return MemoryStore(read_only=read_only)
    from feastlog.service.store.duckdb import Store

    return Store(target, read_only=read_only)
