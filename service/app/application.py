"""The application on a running server: the features, composed.

Each feature is a module of its own, given what it needs when it is made: the games
(``games.py``: create, join, submit, rule, watch, seat links' codes), the replays and
audits (``reads.py``, over the live games as ``games.LiveRecords``), the proof
(``proving.py``, over the server's log tree), the table (``table.py``: calls, clocks),
the tournaments (``tournament.py``), the named arbiters (``arbiters.py``), the seat
links (``seatlinks.py``) and the feed (``feed.py``).  ``Application`` makes them, and
subscribes to the stream of committed rows what acts after a commit, memory first;
it decides nothing itself.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from feastlog.service.app.arbiters import Arbiters
from feastlog.service.app.auth import Credentials
from feastlog.service.app.clock import Clock, SystemClock
from feastlog.service.app.entropy import WaitingRoom
from feastlog.service.app.feed import Broadcaster
from feastlog.service.app.games import Games, LiveRecords, ToTheEnd
from feastlog.service.app.limits import Refolds, RefusalBudget
from feastlog.service.app.live import LiveGames
from feastlog.service.app.logtree import LogTree
from feastlog.service.app.notary import Notary
from feastlog.service.app.proving import Proving
from feastlog.service.app.reads import Replays
from feastlog.service.app.seatlinks import SeatLinks
from feastlog.service.app.streams import Wakeups
from feastlog.service.app.table import AtTable, Serving
from feastlog.service.app.tournament import Tournaments
from feastlog.service.store import Batch
from feastlog.service.store.writer import Database

log = logging.getLogger("feastlog")


class Application:
    """Every feature of this server, composed (see the module doc)."""

    def __init__(
        self,
        db: Database,
        credentials: Credentials,
        notary: Notary | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.db = db
        self.notary = notary  # None: nothing is signed (no receipts, no heads)
        # the rows' times, the clocks' timers and the heads' interval; a test sets a
        # ManualClock (here, or later: a wait already begun ends on the clock it began on)
        self.clock: Clock = clock or SystemClock()
        now = self._clock
        # the server's tree: it signs heads, on the application's clock
        self.signing = LogTree(db.read, db, notary, clock=now)
        self.credentials = credentials
        self.live = LiveGames(db)
        self.room = WaitingRoom()
        self.refolds = Refolds()
        self.finishing = ToTheEnd()
        self.wakeups = Wakeups()  # every open stream's, for a revocation to end it at once
        self.source = LiveRecords(db, self.live, self.room, self.refolds, credentials, self.wakeups)
        self.proving = Proving(self.source, self.signing)
        self.replays = Replays(self.source, self.proving, self._places)
        self.seat_links = SeatLinks(db)  # in the store: any node serves them
        self.games = Games(
            db,
            self.source,
            self.replays,
            credentials,
            notary,
            now,
            RefusalBudget(),
            self.finishing,
            self.seat_links,
        )
        self.tournaments = Tournaments(
            db, self.source, self.replays, self.games, credentials, self.finishing, now
        )
        self.arbiters = Arbiters(db, credentials, self.wakeups, now)
        commit = self._commit_to_the_end
        self.table = AtTable(self.replays, Serving(self.live, now, self.games.submit, commit))
        self._resuming: list[asyncio.Task[None]] = []  # the start's look at clocks, tournaments
        self.feed = Broadcaster(db, self.live, self.replays)  # every WatchAll, /feed/events
        # what acts after a commit follows the stream of committed rows, memory first
        db.stream.subscribe("live games", self.live.committed)
        db.stream.subscribe("waiting room", self.games.begun)
        db.stream.subscribe("clocks and calls", self.table.committed)
        db.stream.subscribe("tournaments", self.tournaments.committed)
        db.stream.subscribe("log tree", self.signing.committed)
        db.stream.subscribe("feed", self.feed.committed)

    async def _places(self, tournament_id: str) -> dict[str, int]:
        """A tournament's players by place, for the standings (``Tournaments.places``)."""
        return await self.tournaments.places(tournament_id)

    def _clock(self) -> Clock:
        """The application's clock now (a test may set another after the start)."""
        return self.clock

    async def _commit_to_the_end(self, batch: Batch, folded: dict[str, Any]) -> Any:
        """A commit that runs to its end even if its caller goes (a clock's time-out)."""
        return await self.finishing.run(self.db.commit(batch, folded))

    async def start(self) -> None:
        """Take up the games still waiting for seat entropy (at server start), and begin
        the stream of committed rows at the log's size."""
        for stored in await self.db.call(self.db.store.pending):
            self.room.take_up(stored)
        await self.signing.start()
        self.db.start_stream(self.signing.tree.size)
        # what acts on a deadline or a call looks at the store again: a clock that ran
        # out, or a round whose time was called, while no server ran is met now
        self._resuming += [
            asyncio.create_task(self.table.resume(), name="feastlog-clocks"),
            asyncio.create_task(self.tournaments.resume(), name="feastlog-tournaments"),
        ]
        for task in self._resuming:
            task.add_done_callback(_resumed)

    async def drain(self) -> None:
        """Wait for every command already taken to be recorded (graceful shutdown); the
        start's look at the clocks and tournaments stops where it is (what it took runs
        to its end with the rest)."""
        for task in self._resuming:
            task.cancel()
        await self.finishing.drain()
        await self.signing.stop()  # the last rows get their head

    def other_nodes_committed(self) -> None:
        """A shared store says other nodes committed (or its listener reconnected, and
        what they said meanwhile is lost): the stream reads their rows by position."""
        self.db.catch_up()


def _resumed(task: asyncio.Task[None]) -> None:
    """The clocks or tournaments looked at again at start: a failure is logged (each
    game's next row sets its timer all the same, a tournament's next read catches up)."""
    if not task.cancelled() and task.exception() is not None:
        log.warning("%s did not all resume at start: %s", task.get_name(), task.exception())
