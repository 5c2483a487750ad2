"""Every stream's bounds and ends (DESIGN section 11, "Bounded everywhere").

A stream is a server stream of gRPC (WatchGame, WatchAll, WatchTournament, WatchCalls,
StreamReplay, VerifyAllGames) or a server-sent-events connection of the pages (a game's
page, ``/feed/events``).  Whatever its reader does, it holds a bounded part of the server:

- **A bounded queue.**  What waits for one reader is bounded: a feed is a cursor into its
  node's ring of recent rows (``feed.Broadcaster``), shared by every feed, and is ended
  once the ring passes it; a game's watcher reads the game's rows in memory on a wake-up
  of one; a producer that may not wait (the calls' queue, told of each commit as it
  lands) offers to an ``Outlet``, which ends its reader once it is full instead of
  growing.
- **A bounded send.**  A send (a gRPC message, an event) that its reader has not taken
  within ``SEND_SECONDS`` ends the stream: ``FellBehind`` (RESOURCE_EXHAUSTED), and over
  SSE the connection is closed.  Its reader watches again from the last row it handled.
- **A heartbeat.**  An SSE stream sends a comment every ``HEARTBEAT_SECONDS``: a peer that
  has gone is found on a quiet stream too (and gRPC cancels a call whose client went).
- **Ended at once.**  An ended stream's tasks are cancelled and its queue let go then, not
  at its next row; a stream ends as soon as its caller's credential no longer stands
  (``held``): ``Arbiters.revoke_arbiter`` wakes every open stream (``Wakeups``).

The bounds are read when used (``streams.SEND_SECONDS``), so a test may shorten them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Generic, TypeVar

from feastlog.service.app.errors import FellBehind

T = TypeVar("T")

CALLS_QUEUED = 1024  # changes of the calls' queue waiting for one arbiter's WatchCalls
SEND_SECONDS = 30.0  # a send its reader has not taken by then ends its stream
HEARTBEAT_SECONDS = 15.0  # an SSE comment this often, so a peer gone is found


def fell_behind(why: str) -> FellBehind:
    """The refusal that ends a stream whose reader does not keep up, saying how to resume."""
    return FellBehind(
        f"this stream fell behind: {why}; it is ended, and resumes where its reader "
        "stopped: watch again from the last row it handled (its position, or the seq "
        "after it)"
    )


async def sent(sending: Awaitable[None]) -> None:
    """Await one send within ``SEND_SECONDS``; ``FellBehind`` when its reader has not
    taken it by then (the send is given up)."""
    try:
        async with asyncio.timeout(SEND_SECONDS):
            await sending
    except TimeoutError:
        raise fell_behind(f"its reader took nothing for {SEND_SECONDS:g} s") from None


def wake(queue: asyncio.Queue[None]) -> None:
    """Wake a stream that waits on its queue of one: a wake-up already waiting is enough,
    since the stream reads what is new from where it follows (a game's rows)."""
    if queue.empty():
        queue.put_nowait(None)


class Outlet(Generic[T]):
    """One reader's bounded queue, for a producer that may not wait: offered an item while
    ``bound`` wait, the reader is ended (``FellBehind``), its items let go at once."""

    def __init__(self, bound: int) -> None:
        self._bound = bound
        self._items: deque[T] = deque()
        self._ready = asyncio.Event()
        self._ended: Exception | None = None

    def offer(self, item: T) -> None:
        """Queue an item for the reader (nothing, once it has ended)."""
        if self._ended is not None:
            return
        if len(self._items) >= self._bound:
            self.end(fell_behind(f"{self._bound} changes waited for its reader"))
            return
        self._items.append(item)
        self._ready.set()

    def end(self, error: Exception) -> None:
        """End the reader with ``error``, at its next look; what waited is let go now."""
        self._ended = error
        self._items.clear()
        self._ready.set()

    async def next(self) -> T:
        """The next item, when there is one; the error that ended the reader, raised."""
        await self._ready.wait()
        if self._ended is not None:
            raise self._ended
        item = self._items.popleft()
        if not self._items:
            self._ready.clear()
        return item


class Wakeups:
    """How to wake each open stream: a revocation wakes them all, and each asks whether its
    caller's credential still stands (``held``)."""

    def __init__(self) -> None:
        self._open: set[Callable[[], None]] = set()

    @contextlib.contextmanager
    def opened(self, wake_it: Callable[[], None]) -> Iterator[None]:
        """Keep ``wake_it`` while a stream is open."""
        self._open.add(wake_it)
        try:
            yield
        finally:
            self._open.discard(wake_it)

    def wake_all(self) -> None:
        """Wake every open stream."""
        for wake_it in list(self._open):
            wake_it()

    def __len__(self) -> int:
        return len(self._open)


async def held(
    rows: AsyncIterator[T], holding: Callable[[], None], wakeups: Wakeups
) -> AsyncIterator[T]:
    """``rows`` while ``holding`` passes: it is asked before each row is sent and whenever
    a revocation wakes the stream, so a stream ends (with ``holding``'s refusal) the moment
    its credential is revoked on this node, though no row comes; ``rows`` is closed then.
    """
    woken = asyncio.Event()
    coming: asyncio.Future[T] | None = None
    with wakeups.opened(woken.set):
        try:
            while True:
                woken.clear()
                holding()
                if coming is None:
                    coming = asyncio.ensure_future(anext(rows))
                waking = asyncio.ensure_future(woken.wait())
                try:
                    await asyncio.wait((coming, waking), return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waking.cancel()
                if not coming.done():
                    continue  # woken: is the credential still there?
                done, coming = coming, None
                try:
                    row = done.result()
                except StopAsyncIteration:
                    return
                holding()
                yield row
        finally:
            if coming is not None:
                coming.cancel()
                with contextlib.suppress(BaseException):
                    await coming
            await _closed(rows)


@contextlib.asynccontextmanager
async def closing(rows: AsyncIterator[T]) -> AsyncIterator[AsyncIterator[T]]:
    """``rows``, closed where it stands when the block ends, however it ends (its own
    ``finally`` runs then: its tasks cancelled, its queue let go)."""
    try:
        yield rows
    finally:
        await _closed(rows)


async def _closed(rows: AsyncIterator[T]) -> None:
    """Close a stream's source where it stands (its own ``finally`` runs now)."""
    close = getattr(rows, "aclose", None)
    if close is not None:
        await close()
