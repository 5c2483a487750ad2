"""The server's side of the store process: the store as a client of the child.

``ProcessStore`` starts the child and is the writing store; ``reader()`` is the same store
on the read channel.  Each method is a blocking round trip from the thread that calls it,
except ``ProcessStore.commit``, which the event loop sends and awaits itself.

The client does not write the port's methods one by one: ``StoreClient`` holds those that
need more than a round trip (``close``, ``reader``, ``write`` and, in ``ProcessStore``,
``commit``), and every other method of the port's capabilities (``port.METHODS``) is made
on the class at import, as a forwarder that sends its name and arguments to the child:
on the ``lookups`` channel for seat tokens and arbiter keys (``LOOKUPS``), and as a
generator reading the child's chunks for a scan (``wire.STREAMED``).  The child serves
the same names and refuses any other (``wire.METHODS``), so a method added to a
capability is forwarded with nothing to write here.

For the type checker, the made methods are invisible: a ``__getattr__`` declared only
under ``TYPE_CHECKING`` stands for them, so that a ``StoreClient`` (and ``ProcessStore``)
is an ``EventStore`` to it with no cast.  What each method takes and gives is checked
where the store is used as an ``EventStore`` (the server opens it as one); a test holds
that every method of every capability is forwarded (``tests/store/test_store_forwarding``).
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
from collections.abc import Awaitable, Callable, Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from feastlog.replay import games
from feastlog.service.incidents import new_incident_id
from feastlog.service.store.errors import CannotOpenStore, StoreUnavailable
from feastlog.service.store.port import METHODS, STORE_PROCESS, EventStore
from feastlog.service.store.process.wire import (
    CHANNELS,
    STREAMED,
    outcome,
    pickled,
    receive,
    receive_soon,
    send,
)

if TYPE_CHECKING:
    from feastlog.service.store import Batch
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

    def ask(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        """Call ``name(*args, **kwargs)`` on the child's store and wait for its answer."""
        with self._turn:
            dropped = _drain(self._dropped)
            try:
                send(self.sock, (name, args, kwargs, dropped))
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
    its games a chunk at a time.  The methods that need more than a round trip are
    written here; every other method of the port is forwarded by name (``FORWARDED``).
    """

    shared = False  # one writing process per file: the child of this one
    commit: Callable[[Batch], Awaitable[Written]] | None = None  # the reader's: none

    if TYPE_CHECKING:
        # The forwarded methods are made below, at import, so the type checker cannot see
        # them: it takes them from here, and a ``StoreClient`` is an ``EventStore`` to it
        # (what each method takes and gives is the port's: ``EventStore``'s own types,
        # where the client is used as the store it is).
        def __getattr__(self, name: str) -> Callable[..., Any]: ...

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

    def _scanned(self, method: str, *args: Any, **kwargs: Any) -> Generator[Any]:
        """A scan kept open in the child, read a chunk of games at a time."""
        scan = self._channel.ask(method, *args, **kwargs)
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


# The port's methods the client answers without a plain round trip: written above, or
# (``commit``) ``ProcessStore``'s own.
OWN = frozenset({"close", "reader", "write", "commit"})
# Seat tokens and arbiter keys, asked from any thread (the event loop's first look-up of
# each): on the second channel, so they never wait behind the store thread's calls.
LOOKUPS = frozenset({"seat_of_token", "arbiter_of_key"})
# Every other method of the port: one round trip each (a scan: one, then its chunks).
FORWARDED = tuple(name for name in METHODS if name not in OWN)


def _forwarder(name: str) -> Callable[..., Any]:
    """The client's method ``name``: its arguments sent to the child as they are given
    (the child's store fills in its own defaults), its answer returned; the port's
    docstring for it."""
    channel = "_lookups" if name in LOOKUPS else "_channel"

    if name in STREAMED:

        def forward(self: StoreClient, /, *args: Any, **kwargs: Any) -> Any:
            return self._scanned(name, *map(_crossed, args), **_crossed_all(kwargs))

    else:

        def forward(self: StoreClient, /, *args: Any, **kwargs: Any) -> Any:
            return getattr(self, channel).ask(name, *map(_crossed, args), **_crossed_all(kwargs))

    forward.__name__ = name
    forward.__qualname__ = f"{StoreClient.__qualname__}.{name}"
    forward.__doc__ = getattr(EventStore, name).__doc__
    return forward


def _crossed(argument: Any) -> Any:
    """An argument as it can cross to the child: an iterator (a generator of projected
    games, say) as the list of what it yields, anything else as it is."""
    return list(argument) if isinstance(argument, Iterator) else argument


def _crossed_all(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Keyword arguments as they can cross to the child (``_crossed``)."""
    return {key: _crossed(value) for key, value in kwargs.items()}


for _name in FORWARDED:
    setattr(StoreClient, _name, _forwarder(_name))


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

    def backup_copy(self, partial: str) -> Any:
        """Have the child copy the file, its log and its mark to ``partial`` between two
        commits (on the calls channel, under its commit lock: ``duckdb/backup.py``)."""
        return self._channel.ask("backup_copy", partial)

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
                await loop.sock_sendall(self._commits, pickled(("write", (batch,), {}, [])))
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
