"""The server's side of the store process: the store as a client of the child.

``ProcessStore`` starts the child and is the writing store; ``reader()`` is the same store
on the read channel.  Each method is a blocking round trip from the thread that calls it,
except ``ProcessStore.commit``, which the event loop sends and awaits itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Awaitable, Callable, Generator, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from feastlog.replay import games
from feastlog.service.incidents import new_incident_id
from feastlog.service.store.errors import CannotOpenStore, StoreUnavailable
from feastlog.service.store.port import STORE_PROCESS
from feastlog.service.store.process.wire import (
    CHANNELS,
    outcome,
    pickled,
    receive,
    receive_soon,
    send,
)

if TYPE_CHECKING:
    from feastlog.replay.proof.signed import Cosignature, TreeHead
    from feastlog.replay.record.rows import Row
    from feastlog.replay.tournament.outcomes import Standing
    from feastlog.service.store import Batch, Listed, PendingGame, Rejection, StoredGame, projection
    from feastlog.service.store.records import Written

log = logging.getLogger("feastlog.store")


class StoreGone(StoreUnavailable):
    """The store's process ended while the server still needed it."""


class Channel:
    """One socket to the child, a request and its reply at a time (any thread may ask)."""

    def __init__(self, sock: socket.socket, path: str) -> None:
        self.sock = sock
        self.path = path
        self._turn = threading.Lock()
        # scans given up by their reader (perhaps while another call waited), dropped in
        # the child with the channel's next request
        self._dropped: deque[int] = deque()

    def ask(self, name: str, *args: Any) -> Any:
        """Call ``name(*args)`` on the child's store and wait for its answer."""
        with self._turn:
            dropped = _drain(self._dropped)
            try:
                send(self.sock, (name, args, dropped))
                reply = receive(self.sock)
            except (OSError, EOFError) as gone:
                raise _gone(self.path, name) from gone
        return outcome(reply)

    def drop(self, scan: int) -> None:
        """Forget a scan not read to its end (without a round trip: from any thread)."""
        self._dropped.append(scan)


def _drain(dropped: deque[int]) -> list[int]:
    """Every scan id waiting to be dropped, taken off the queue."""
    out = []
    with contextlib.suppress(IndexError):
        while True:
            out.append(dropped.popleft())
    return out


def _gone(path: str, name: str) -> StoreGone:
    """The error a call gets when the store's process has ended."""
    incident = new_incident_id()
    log.error("incident %s: the store process of %s ended before %s", incident, path, name)
    return StoreGone(
        f"the game store failed (incident {incident}); try again", incident_id=incident
    )


class StoreClient:
    """The child's store as the server sees it: each method one round trip on a channel.

    ``store.scan(...)`` is a generator here too: the child keeps the scan open and sends
    its games a chunk at a time.
    """

    shared = False  # one writing process per file: the child of this one
    commit: Callable[[Batch], Awaitable[Written]] | None = None  # the reader's: none

    def __init__(self, path: str, read_only: bool, channel: Channel, lookups: Channel) -> None:
        self.path = path
        self.read_only = read_only
        self._channel = channel
        self._lookups = lookups

    def close(self) -> None:
        """Close this connection in the child (nothing to close once the child has ended)."""
        with contextlib.suppress(StoreGone):
            self._channel.ask("close")

    def reader(self) -> StoreClient:
        """The same store for reads on another thread (the same channel, taking turns)."""
        return self

    def write(self, batch: Batch) -> int | None:
        """Commit a batch in one transaction (a blocking round trip); the log position
        of its first appended row."""
        written: Written = self._channel.ask("write", batch)
        return written.first

    def checkpoint(self, least: int) -> int:
        """Fold the write-ahead log into the file if it holds ``least`` bytes or more."""
        return int(self._channel.ask("checkpoint", least))

    def load(self, game_id: str) -> StoredGame | None:
        """A game's rows, seed, pack and seat names; None when there is no such game."""
        return self._channel.ask("load", game_id)

    def rows(self, game_id: str) -> tuple[Row, ...]:
        """A game's rows in seq order."""
        return self._channel.ask("rows", game_id)

    def rows_after(self, game_id: str, seq: int) -> tuple[Row, ...]:
        """A game's rows after ``seq``, in seq order."""
        return self._channel.ask("rows_after", game_id, seq)

    def last_seq(self, game_id: str) -> int:
        """A game's last seq (0 when it has no rows yet)."""
        return self._channel.ask("last_seq", game_id)

    def game_ids(self) -> list[str]:
        """Every game id with rows, oldest first."""
        return self._channel.ask("game_ids")

    def count_games(self, game_kind: str = "") -> tuple[int, int]:
        """(games with rows, rows), of one kind or all."""
        return self._channel.ask("count_games", game_kind)

    def scan(
        self, part: tuple[int, int] | None = None, game_kind: str = ""
    ) -> Generator[StoredGame]:
        """Every game with rows, oldest first, from one ordered, streamed scan."""
        return self._scanned("scan", part, game_kind)

    def scan_numbered(
        self,
        part: tuple[int, int] | None = None,
        game_kind: str = "",
        fetch: int = 2_048,
        share: tuple[int, int] | None = None,
    ) -> Generator[tuple[int, StoredGame]]:
        """(place in the game list, game) for every game with rows, in one streamed scan
        (``fetch``: rows the child's store fetches at a time, its default as the store's)."""
        return self._scanned("scan_numbered", part, game_kind, fetch, share)

    def _scanned(self, method: str, *args: Any) -> Generator[Any]:
        scan = self._channel.ask(method, *args)
        finished = False
        try:
            while True:
                chunk, finished = self._channel.ask("more", scan)
                yield from chunk
                if finished:
                    return
        finally:
            if not finished:  # closed early, or collected: no round trip from a finalizer
                self._channel.drop(scan)

    def pending(self) -> list[PendingGame]:
        """Games waiting for seat entropy, with what each seat has sent so far."""
        return self._channel.ask("pending")

    def pending_game(self, game_id: str) -> PendingGame | None:
        """One game waiting for seat entropy (None once it has started, or if unknown)."""
        return self._channel.ask("pending_game", game_id)

    def seat_of_token(self, digest: str) -> tuple[str, int] | None:
        """(game id, seat) of a seat token's sha256; None if unknown. Any thread may call it."""
        return self._lookups.ask("seat_of_token", digest)

    def arbiter_of_key(self, digest: str) -> str | None:
        """The named arbiter whose key has this sha256, unless revoked. Any thread may call it."""
        return self._lookups.ask("arbiter_of_key", digest)

    def add_arbiter(self, name: str, digest: str, at: str) -> bool:
        """Record a named arbiter's key; False when the name holds a key not revoked."""
        return self._channel.ask("add_arbiter", name, digest, at)

    def revoke_arbiter(self, name: str, at: str) -> bool:
        """Revoke a named arbiter's key; False when there is no such arbiter holding one."""
        return self._channel.ask("revoke_arbiter", name, at)

    def arbiters(self) -> list[tuple[str, str, str]]:
        """Every named arbiter: (name, added at, revoked at or '')."""
        return self._channel.ask("arbiters")

    def rejections(self, game_id: str) -> list[Rejection]:
        """A game's refused commands, oldest first."""
        return self._channel.ask("rejections", game_id)

    def listed(
        self, game_kind: str = "", tournament_id: str = "", before: int = 0, limit: int = 50
    ) -> list[Listed]:
        """Up to ``limit`` games, newest first, listed before place ``before``."""
        return self._channel.ask("listed", game_kind, tournament_id, before, limit)

    def known_games(self, game_ids: Sequence[str]) -> dict[str, str]:
        """Of these games, those stored, each with the hash of its last row ('' if none)."""
        return self._channel.ask("known_games", list(game_ids))

    def tournament_games(self, tournament_id: str) -> int:
        """How many games (running or finished) a tournament has."""
        return self._channel.ask("tournament_games", tournament_id)

    def twins_running(self, game_id: str) -> int:
        """How many other games dealt from this game's server seed have not ended (running,
        or waiting for seat entropy): while one has, a finished game with a supplied seed
        is held back (``replay.record.visibility.Release``)."""
        return self._channel.ask("twins_running", game_id)

    def dealt_from(self, server_seed: bytes) -> list[tuple[str, str, str]]:
        """Every game dealt from this server seed, oldest first: (game id, created at, when
        its seed was revealed, '' while it runs or waits for seat entropy)."""
        return self._channel.ask("dealt_from", server_seed)

    def projection_current(self) -> bool:
        """Whether the outcomes projection is there, of this version."""
        return self._channel.ask("projection_current")

    def stats(self, tournament_id: str = "") -> list[projection.KindStats]:
        """Per game kind figures, SQL over the outcomes projection."""
        return self._channel.ask("stats", tournament_id)

    def standings(self, tournament_id: str) -> tuple[list[Standing], int]:
        """A tournament's standings and its finished games, SQL over the projection."""
        return self._channel.ask("standings", tournament_id)

    def rebuild_projection(self, projected: Iterable[projection.Projected]) -> int:
        """Make the outcomes projection again from these games' rows, in one transaction."""
        return self._channel.ask("rebuild_projection", list(projected))

    def leaves(self, after: int, limit: int = 100_000) -> list[bytes]:
        """The log tree's leaf hashes from position ``after`` on, in order, at most ``limit``."""
        return self._channel.ask("leaves", after, limit)

    def rows_from(self, position: int, limit: int = 1000) -> list[tuple[int, Row]]:
        """The rows from log position ``position`` on, in log order, with their positions."""
        found: list[tuple[int, Row]] = self._channel.ask("rows_from", position, limit)
        return found

    def leaf_position(self, game_id: str, seq: int) -> int | None:
        """A row's position in the log tree (None: no such row)."""
        return self._channel.ask("leaf_position", game_id, seq)

    def add_tree_head(self, head: TreeHead) -> None:
        """Keep a signed tree head."""
        self._channel.ask("add_tree_head", head)

    def tree_heads(self, size: int = -1) -> list[TreeHead]:
        """The signed tree heads kept, by size then time (``size``: of that size only)."""
        return self._channel.ask("tree_heads", size)

    def add_cosignature(self, cosigned: Cosignature) -> None:
        """Keep a witness's cosignature of a head."""
        self._channel.ask("add_cosignature", cosigned)

    def cosignatures(self, size: int) -> list[Cosignature]:
        """The witnesses' cosignatures of heads of ``size``."""
        return self._channel.ask("cosignatures", size)

    def add_server_key(self, public_key: str, at: str) -> None:
        """Note a signing key the server uses (kept for ever, so old receipts verify)."""
        self._channel.ask("add_server_key", public_key, at)

    def server_keys(self) -> list[tuple[str, str]]:
        """Every signing key the server has used: (public key hex, first used), oldest first."""
        return self._channel.ask("server_keys")

    # Seat links: each a round trip on this connection's channel (the writes on ``calls``,
    # where the child takes them one at a time on its writing connection).

    def add_seat_code(self, digest: str, game_id: str, seat: int) -> None:
        """Keep a seat's new one-time code (its sha256) in place of the seat's unused one."""
        self._channel.ask("add_seat_code", digest, game_id, seat)

    def seat_of_code(self, digest: str) -> tuple[str, int] | None:
        """(game id, seat) of an unused code's sha256; None: spent, replaced or never made."""
        return self._channel.ask("seat_of_code", digest)

    def take_seat_code(self, digest: str, game_id: str, session: str, most: int) -> int | None:
        """Spend a code of ``game_id`` and open a session on its seat: the seat, once."""
        return self._channel.ask("take_seat_code", digest, game_id, session, most)

    def seat_of_session(self, digest: str) -> tuple[str, int] | None:
        """(game id, seat) of an open session's sha256; None: ended, dropped or never opened."""
        return self._channel.ask("seat_of_session", digest)

    def end_seat_session(self, digest: str) -> bool:
        """End a session (its sha256); False when it was not open."""
        return self._channel.ask("end_seat_session", digest)

    def adopt_seat_links(
        self, codes: Sequence[tuple[str, str, int]], sessions: Sequence[tuple[str, str, int]]
    ) -> int:
        """Take in codes and sessions kept elsewhere before; how many were new."""
        return self._channel.ask("adopt_seat_links", list(codes), list(sessions))


class ProcessStore(StoreClient):
    """A DuckDB file opened by a child process that serves its methods to this one.

    ``commit`` is the event loop's way to write; every other method is a blocking round
    trip, made from the thread that calls it.
    """

    def __init__(self, path: str, games: Sequence[tuple[str, str]] = ()) -> None:
        pairs = {name: socket.socketpair() for name in CHANNELS}
        theirs = [pairs[name][1] for name in CHANNELS]
        try:
            self._process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    STORE_PROCESS,  # the parent's pid follows: see duckdb/opening._held_by_orphan
                    str(os.getpid()),
                    *(str(s.fileno()) for s in theirs),
                ],
                pass_fds=[s.fileno() for s in theirs],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                # a Ctrl-C at the terminal is the server's to handle: it drains, then closes
                # the store; the child ends when the server says so or dies
                start_new_session=True,
            )
        except OSError as failed:
            for pair in pairs.values():
                pair[0].close()
            raise CannotOpenStore(
                f"cannot open {path}: cannot start the store's process: "
                f"{failed.strerror or failed}",
                path=path,
            ) from failed
        finally:
            for sock in theirs:
                sock.close()
        mine = {name: pairs[name][0] for name in CHANNELS}
        super().__init__(path, False, Channel(mine["calls"], path), Channel(mine["lookups"], path))
        self._commits = mine["commits"]
        self._commits.setblocking(False)  # the event loop's alone
        self._commit_turn: asyncio.Lock | None = None
        self._reads = StoreClient(path, False, Channel(mine["reads"], path), self._lookups)
        self._sockets = list(mine.values())
        try:
            level = logging.getLogger().getEffectiveLevel()
            self._channel.ask("open", path, level, sys.path, list(games))
        except StoreGone:
            code = self._end()
            raise CannotOpenStore(
                f"cannot open {path}: the store's process ended as it started (exit code {code})",
                path=path,
            ) from None
        except BaseException:
            self._end()
            raise

    def reader(self) -> StoreClient:
        """The second connection, on its own channel and thread in the child."""
        return self._reads

    def sign_receipts(self, public_key: str) -> bool:
        """Have the child sign the receipts of the rows it commits, with the server's own
        key (read there as the server read it; refused unless its public half is
        ``public_key``): the serving thread then signs none.  Whether it will (not if the
        child is gone: the next commit says so)."""
        try:
            return bool(self._channel.ask("sign_receipts", public_key))
        except StoreGone:
            return False

    async def commit(self, batch: Batch) -> Written:
        """Commit a batch in one transaction, sent and awaited on the event loop; its
        first row's log position, and the receipt signatures of its rows when the child
        signs them (``sign_receipts``).

        A caller that is cancelled only stops waiting: the round trip ends all the same,
        so the next one finds the channel in step.
        """
        if self._commit_turn is None:
            self._commit_turn = asyncio.Lock()
        return await asyncio.shield(self._commit_alone(batch, self._commit_turn))

    async def _commit_alone(self, batch: Batch, turn: asyncio.Lock) -> Written:
        async with turn:
            loop = asyncio.get_running_loop()
            try:
                await loop.sock_sendall(self._commits, pickled(("write", (batch,), [])))
                reply = await receive_soon(loop, self._commits)
            except (OSError, EOFError) as gone:
                raise _gone(self.path, "write") from gone
        written: Written = outcome(reply)
        return written

    def close(self) -> None:
        """Close the file in the child (checkpointing it) and wait for the child to end."""
        try:
            super().close()
        finally:
            self._end()

    def _end(self) -> int:
        """Close the sockets (the child exits at their end) and wait for it; its exit code."""
        for sock in self._sockets:
            sock.close()
        try:
            return self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            log.error("the store process of %s did not end: killing it", self.path)
            self._process.kill()
            return self._process.wait()


def games_to_register() -> list[tuple[str, str]] | None:
    """The games registered here beyond those shipped, as (module, name) the child imports.

    The store needs every game's projection tables, so the child registers the same games;
    None when one is not a module-level name of the module of its setup function (then
    the store stays in this process).
    """
    found = []
    for kind in games.kinds():
        if kind in games.SHIPPED:
            continue
        engine = games.engine(kind)
        module = sys.modules.get(getattr(engine.prepare, "__module__", ""))
        name = next((n for n, v in vars(module).items() if v is engine), None) if module else None
        if module is None or name is None:
            return None
        found.append((module.__name__, name))
    return found
