"""Following a shared log: rows other nodes commit, as they commit them.

On PostgreSQL every placement of committed rows in the log tree (``placing.py``, just
after their commit) notifies the channel ``feastlog_rows`` with, for each game it placed,
``GAME_ID LAST_SEQ``: a notice comes once the rows can be read by position, never before
(a commit itself notifies nothing). A ``Follower`` listens on a connection of its own, in
a thread of its own, and hands each notification to the event loop, where it wakes the
stream's catch-up (``Application.other_nodes_committed`` → ``Database.catch_up``: the
rows from the stream's position on, in log order), so a watcher on one node streams
commands accepted by another, and a node's memory is current before its next command
arrives (a command that finds memory behind still cannot fork the game: the database's
keys refuse it, and the game is reloaded).

When the listening connection is lost, the follower reconnects and then says so
(``on_gap``): notifications sent meanwhile are lost, so every live game may be behind.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable

import psycopg

from feastlog.replay.games.text import plain_number
from feastlog.service.store.postgres import NOTIFY_CHANNEL

log = logging.getLogger("feastlog.follow")

RECONNECT_SECONDS = 1.0
POLL_SECONDS = 0.5  # how soon a stopped follower notices


def parse(payload: str) -> tuple[str, int] | None:
    """(game id, last seq) of a notification; None for one this version does not know."""
    game_id, _, seq = payload.partition(" ")
    last_seq = plain_number(seq)
    return (game_id, last_seq) if game_id and last_seq is not None else None


class Follower:
    """LISTEN on ``feastlog_rows``; each notification goes to ``on_rows`` on the event loop."""

    def __init__(
        self,
        dsn: str,
        loop: asyncio.AbstractEventLoop,
        on_rows: Callable[[str, int], None],
        on_gap: Callable[[], None],
    ) -> None:
        self.dsn = dsn
        self.loop = loop
        self.on_rows = on_rows
        self.on_gap = on_gap
        self._stop = threading.Event()
        self.listening = threading.Event()
        self._thread = threading.Thread(target=self._run, name="feastlog-follow", daemon=True)

    def start(self) -> None:
        """Start listening (returns at once; ``listening`` is set once it is)."""
        self._thread.start()

    def stop(self) -> None:
        """Stop listening and wait for the thread."""
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        first = True
        while not self._stop.is_set():
            try:
                with psycopg.connect(self.dsn, autocommit=True, connect_timeout=10) as con:
                    con.execute(f"LISTEN {NOTIFY_CHANNEL}".encode())
                    self.listening.set()
                    if not first:  # what was sent while no one listened is lost
                        self.loop.call_soon_threadsafe(self.on_gap)
                    first = False
                    while not self._stop.is_set():
                        for note in con.notifies(timeout=POLL_SECONDS):
                            found = parse(note.payload)
                            if found is not None:
                                self.loop.call_soon_threadsafe(self.on_rows, *found)
            except psycopg.Error as error:
                self.listening.clear()
                log.warning("following the shared log: %s; reconnecting", error)
                self._stop.wait(RECONNECT_SECONDS)
            except RuntimeError:  # the event loop closed under us: the server is stopping
                return
