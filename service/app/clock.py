"""The service's own time, injectable: what a row's ``recorded_at`` says, and the waits
a game's clock timer makes (``service/app/table.py``).  The fold never reads it: a
clocked game's clocks are folded from the times recorded in its rows (replay/table/clocks.py).

``SystemClock`` is the server's; ``ManualClock`` is moved by a test, from any thread, so
that clocks are tested through a real server without sleeping.
"""

from __future__ import annotations

import asyncio
import datetime
import threading
from typing import Protocol

from feastlog.replay.table.clocks import time_ms
from feastlog.service.utc import utc_now as utc_now

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def text_of(ms: int) -> str:
    """RFC 3339 UTC with microseconds, from milliseconds since 1970."""
    when = EPOCH + datetime.timedelta(milliseconds=ms)
    return when.isoformat(timespec="microseconds").replace("+00:00", "Z")


class Clock(Protocol):
    """The time the service records, and a wait until a moment."""

    def now(self) -> str:
        """The time now, RFC 3339 UTC with microseconds."""

    async def until(self, at_ms: int) -> None:
        """Return once the time is ``at_ms`` (milliseconds since 1970) or later."""


class SystemClock:
    """The machine's time."""

    def now(self) -> str:
        """The time now, RFC 3339 UTC with microseconds."""
        return utc_now()

    async def until(self, at_ms: int) -> None:
        """Sleep until ``at_ms``."""
        while (left := at_ms - time_ms(self.now())) > 0:
            await asyncio.sleep(left / 1000)


class ManualClock:
    """A time that moves only when a test moves it (``advance``), from any thread."""

    def __init__(self, start: str = "2026-06-01T12:00:00.000000Z") -> None:
        self.ms = time_ms(start)
        self._lock = threading.Lock()
        self._waiting: list[tuple[int, asyncio.AbstractEventLoop, asyncio.Future[None]]] = []

    def now(self) -> str:
        """The time the test set."""
        with self._lock:
            return text_of(self.ms)

    async def until(self, at_ms: int) -> None:
        """Wait until the test has moved the time to ``at_ms``."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if self.ms >= at_ms:
                return
            self._waiting.append((at_ms, loop, future))
        await future

    def advance(self, seconds: float) -> None:
        """Move the time on, and wake every wait that is due."""
        with self._lock:
            self.ms += round(seconds * 1000)
            due = [w for w in self._waiting if w[0] <= self.ms]
            self._waiting = [w for w in self._waiting if w[0] > self.ms]
        for _, loop, future in due:
            loop.call_soon_threadsafe(_wake, future)


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
