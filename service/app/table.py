"""At the table, the use cases: a seat calls the arbiter, the arbiters' queue, the case file.

A call is a seat's command like any other (``SeatCall`` in ``feastlog.v1.Command``): it
takes the application's one path (``Games.submit``: the game's lock, the fold's
checks, the refusal stored, the writer).  The queue reads the calls from the folded
tables (``replay/table/desk.py``); ``WatchCalls`` wakes on every commit that made or answered
a call, and a clocked game's timer is set for its next deadline, as the stream of
committed rows brings each commit (``AtTable.committed``, a subscriber after the live
games).  At start every running game's clock is looked at again (``resume``), so a seat
whose time ran out while the server was down is timed out at once.

On a shared store (PostgreSQL, several nodes) every node times every running clocked game:
a game another node began is folded in here when its genesis row reaches the stream (a
task, through ``LiveGames`` as a read would), so a seat's time runs out on time whichever
node is up.  Two nodes' timers for one deadline are decided by the log: a time-out row is
one row at one seq, and the node whose commit comes second is refused (``StoreConflict``),
takes the log's row and lets its timer go.  A node that did not write a game's last row
waits ``GRACE_MS`` past the deadline and asks the log first, so that while the node that
did is up it is that node's row, and the other node's timer seldom reaches the store.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from feastlog.presentation import case
from feastlog.replay.games.fold import SERVER_ACTOR
from feastlog.replay.record.rows import GENESIS, Row
from feastlog.replay.table import clocks as timing
from feastlog.replay.table import desk
from feastlog.service.app import streams
from feastlog.service.app.auth import ORGANISER, Caller
from feastlog.service.app.errors import (
    BadRequest,
    GameNotFound,
    PermissionDenied,
    Unauthenticated,
)
from feastlog.service.app.live import LiveGame, LiveGames
from feastlog.service.app.streams import Outlet
from feastlog.service.store import StoreConflict, StoreUnavailable
from feastlog.service.store.stream import Committed
from feastlog.v1 import record_pb2

if TYPE_CHECKING:
    from feastlog.service.app.clock import Clock
    from feastlog.service.app.games import Accepted
    from feastlog.service.app.reads import Replays
    from feastlog.service.store import Batch

log = logging.getLogger("feastlog")

# A node that did not write a clocked game's last row times the game out GRACE_MS after
# its deadline, once the log says no row came meanwhile: while the node that wrote it is
# up, its own timer has written the time-out row by then (heard here within milliseconds),
# and when it is down the time-out is that much later.
GRACE_MS = 250
RETRY = 1.0  # seconds before a time-out the store could not take is tried again


@dataclass(frozen=True)
class QueuedCall:
    """A call as the queue shows it: the game's, its tournament, and the call."""

    game_id: str
    tournament_id: str
    call: desk.Call

    def as_dict(self) -> dict[str, Any]:
        """Plain data (``desk.call_dict`` and the tournament)."""
        return {**desk.call_dict(self.game_id, self.call), "tournament_id": self.tournament_id}


def _queued(game: LiveGame) -> list[QueuedCall]:
    return [
        QueuedCall(game.game_id, game.genesis.tournament_id, c) for c in desk.calls_of(game.table)
    ]


def require_arbiter(caller: Caller) -> None:
    """Refuse unless the caller is the organiser or a named arbiter."""
    if caller.role == "anonymous":
        raise Unauthenticated("the calls' queue needs an arbiter's key or the organiser's")
    if caller.role not in ("organiser", "arbiter"):
        raise PermissionDenied("the calls' queue is the arbiters': a seat sees its own game's")


@dataclass(frozen=True)
class CaseFile:
    """A call's case file as a viewer may see it, and the sha256 of its text."""

    text: str
    sha256: str


@dataclass(frozen=True)
class Serving:
    """What the table needs of a running server (none offline, where nothing is timed and
    no call is made): its live games, its clock, the one path of a seat's command
    (``Games.submit``), and a commit that runs to its end even if its caller goes."""

    live: LiveGames
    clock: Callable[[], Clock]  # the application's, asked each time
    submit: Callable[..., Awaitable[Accepted]]
    commit: Callable[[Batch, dict[str, Any]], Awaitable[Any]]


@dataclass
class AtTable:
    """The table's use cases over the read use cases, and a server's (``Serving``)."""

    replays: Replays
    server: Serving | None = None
    watchers: set[Outlet[QueuedCall]] = field(default_factory=set)
    # each clocked game's timer, with the deadline it waits for: (seat, time in ms)
    timers: dict[str, tuple[tuple[int, int], asyncio.Task[None]]] = field(default_factory=dict)
    # the running clocked games whose last row another node wrote (``GRACE_MS``)
    elsewhere: set[str] = field(default_factory=set)
    # the work that times a game once memory holds it and has caught up (a game begun
    # elsewhere, folded in; rows that reached the stream while memory was behind)
    folding: set[asyncio.Task[None]] = field(default_factory=set)

    async def call_arbiter(
        self, caller: Caller, game_id: str, command_id: str, made: record_pb2.SeatCall
    ) -> Accepted:
        """A seat calls the arbiter: recorded as a row of its game (the fold's checks)."""
        if caller.role == "anonymous":
            raise Unauthenticated("a seat calls the arbiter with its seat token")
        if caller.role != "seat":
            raise PermissionDenied(
                "a seat calls the arbiter, with its seat token: an arbiter rules"
            )
        if self.server is None:
            raise BadRequest("a call is made to a running server", field="game_id")
        return await self.server.submit(
            caller, game_id, command_id, None, record_pb2.Command(call=made)
        )

    async def calls(
        self, caller: Caller, game_id: str, tournament_id: str, open_only: bool
    ) -> list[QueuedCall]:
        """The calls of one game (anyone who may watch it), or of every running game (of a
        tournament) for the arbiters."""
        if game_id:  # calls are public at the table: whoever may watch the game
            caller.viewer(game_id)  # a seat token of another game is refused
            found = _queued(await self.replays.source.game(game_id))
        else:
            require_arbiter(caller)
            found = [c for g in await self._running(tournament_id) for c in _queued(g)]
        return [c for c in found if c.call.open or not open_only]

    async def _running(self, tournament_id: str) -> list[LiveGame]:
        """Every running game (of a tournament), folded (from the store if cold)."""
        out, page = [], ""
        while True:
            listed = await self.replays.games(ORGANISER, "", 200, tournament_id, page)
            for line in listed.games:
                if not line.over and not line.waiting_for_entropy:
                    out.append(await self.replays.source.game(line.game_id))
            page = listed.next_page_token
            if not page:
                return out

    async def watch_calls(self, caller: Caller, tournament_id: str) -> AsyncIterator[QueuedCall]:
        """The open calls, then every call made or answered as it commits, until the
        caller's credential no longer stands (``Records.held``: a revoked arbiter's stream
        ends at once)."""
        require_arbiter(caller)
        return self.replays.source.held(caller, self._watch_calls(caller, tournament_id))

    async def _watch_calls(self, caller: Caller, tournament_id: str) -> AsyncIterator[QueuedCall]:
        """The calls' queue as it changes, for one reader: what waits for it is bounded
        (``streams.CALLS_QUEUED``); a reader that lets more wait is ended (FELL_BEHIND)."""
        outlet: Outlet[QueuedCall] = Outlet(streams.CALLS_QUEUED)
        self.watchers.add(outlet)
        try:
            for found in await self.calls(caller, "", tournament_id, True):
                yield found
            while True:
                changed = await outlet.next()
                if not tournament_id or changed.tournament_id == tournament_id:
                    yield changed
        finally:
            self.watchers.discard(outlet)

    def committed(self, commit: Committed) -> None:
        """The stream's rows: each game that moved has its timer set for its next deadline,
        and the queue's watchers are told of each call made or answered.

        A clocked game begun on another node is folded in here (a task: the stream's
        subscriber returns at once) and timed like this node's own; a game whose memory is
        still catching up with the stream (``LiveGames``) is timed once it has.
        """
        by_game: dict[str, list[Row]] = {}
        for row in commit.rows:
            by_game.setdefault(row.game_id, []).append(row)
        if self.server is None:
            return
        live = self.server.live
        for game_id, rows in by_game.items():
            if commit.local:
                self.elsewhere.discard(game_id)
            else:
                self.elsewhere.add(game_id)
            game = live.peek(game_id)
            if game is not None and game.last_seq >= rows[-1].seq:
                self.advanced(game, rows)
            elif game is not None or live.holds(game_id) or _clocked(rows[0]):
                self._when_caught_up(live, game_id, rows)
            else:
                self.elsewhere.discard(game_id)  # not clocked, or not this node's to time

    def _when_caught_up(self, live: LiveGames, game_id: str, rows: Sequence[Row]) -> None:
        """Time a game (and tell the queue's watchers of its rows) once memory holds it
        and has caught up with the stream: a task of its own."""
        task = asyncio.get_running_loop().create_task(self._caught_up(live, game_id, rows))
        self.folding.add(task)
        task.add_done_callback(self.folding.discard)

    async def _caught_up(self, live: LiveGames, game_id: str, rows: Sequence[Row]) -> None:
        try:
            game = await live.caught_up(game_id)
        except (GameNotFound, StoreUnavailable) as error:  # the store's cause: its incident
            log.warning("game %s could not be folded to time its clock: %s", game_id, error)
            return
        self.advanced(game, rows)

    async def resume(self) -> None:
        """At start: every running game's timer, so that a deadline that passed while no
        server ran is met now (a time-out row at once), not at the game's next row."""
        for game in await self._running(""):
            self._time(game)

    def advanced(self, game: LiveGame, rows: Sequence[Row]) -> None:
        """After a commit: a clocked game's timer set for its deadline; the queue's
        watchers told of each call it made or answered."""
        self._time(game)
        if not self.watchers:
            return
        seqs = {r.seq for r in rows}
        for found in _queued(game):
            if found.call.seq in seqs or found.call.answered_seq in seqs:
                for outlet in list(self.watchers):
                    outlet.offer(found)  # a reader that lets too many wait is ended

    async def case_file(self, caller: Caller, game_id: str, call: int) -> CaseFile:
        """The case file of a call, as the caller may see it (canonical JSON text), with
        the sha256 of its text, which the arbiter's ruling may cite."""
        game = await self.replays.source.game(game_id)
        viewer = caller.viewer(game_id)
        found = next((c for c in desk.calls_of(game.table) if c.seq == call), None)
        if found is None:
            raise BadRequest(f"game {game_id} has no call at seq {call}", field="call")
        released = await self.replays.released(game)
        refusals = await self.replays.rejections(caller, game_id)
        text = case.bundle(game, found, viewer, released.public, refusals)
        return CaseFile(text, hashlib.sha256(text.encode("utf-8")).hexdigest())

    def _due(self, game: LiveGame) -> tuple[int, int] | None:
        """A clocked game's next deadline: (seat, time in ms); None once it is over or
        no clock runs."""
        found = desk.desk_of(game.table).clocks
        if found is None or game.over:
            return None
        return timing.deadline(found)

    def _time(self, game: LiveGame) -> None:
        """Set a clocked game's timer for its first running seat's deadline; a timer that
        waits for that deadline already is kept, any other is cancelled."""
        due = self._due(game)
        old = self.timers.get(game.game_id)
        if old is not None and old[0] == due and not old[1].done():
            return
        self.timers.pop(game.game_id, None)
        if old is not None and old[1] is not asyncio.current_task():
            old[1].cancel()
        if due is None and game.over:
            self.elsewhere.discard(game.game_id)
        if due is not None and self.server is not None:
            task = asyncio.get_running_loop().create_task(self._expire(game, *due))
            self.timers[game.game_id] = (due, task)

    async def _expire(self, game: LiveGame, seat: int, at_ms: int) -> None:
        """At a seat's deadline, unless a row came first and moved it: the server's
        time-out row (its commit, on the stream, sets the next timer).

        A node that did not write the game's last row waits ``GRACE_MS`` more and asks the
        log first.  A time-out another node wrote first is refused here as the conflict
        it is (one seq, one row): memory takes the log's rows and the timer goes, quietly.
        Whatever else becomes of it, the game is timed again from what memory holds then.
        """
        app = self.server
        assert app is not None  # only a server sets timers
        elsewhere = game.game_id in self.elsewhere
        await app.clock().until(at_ms + GRACE_MS if elsewhere else at_ms)
        failed = False
        async with game.lock:
            if self._due(game) == (seat, at_ms):
                try:
                    if elsewhere and await app.live.behind(game):
                        await app.live.reload(game)  # a row came first: time what it left
                    else:
                        await self._time_out(game, seat)
                        return  # its commit, on the stream, set the next timer
                except StoreConflict:
                    log.debug("game %s: another node's row took seq %d first", *_at(game))
                    failed = not await self._reloaded(game)
                except StoreUnavailable as error:  # its cause is logged under its incident
                    log.warning(
                        "game %s: the time-out of seat %d could not be written (%s); trying again",
                        game.game_id,
                        seat,
                        error.metadata.get("incident_id", ""),
                    )
                    failed = True
        if failed:
            await asyncio.sleep(RETRY)
        if self.timers.get(game.game_id, (None, None))[1] is asyncio.current_task():
            del self.timers[game.game_id]  # this timer is done: the next is set afresh
        self._time(game)

    async def _time_out(self, game: LiveGame, seat: int) -> None:
        """The server's time-out row for ``seat``, committed (under the game's lock)."""
        from feastlog.service.app import commands

        app = self.server
        assert app is not None
        event = record_pb2.ClockEvent(timeout=record_pb2.ClockTimeout(seat=seat))
        command = record_pb2.Command(clock=event)
        body = command.SerializeToString(deterministic=True)
        command_id = f"timeout-{game.last_seq + 1}"
        done = commands.advance(
            game, SERVER_ACTOR, None, command, body, command_id, app.clock().now()
        )
        await app.commit(done.batch, {game.game_id: done})

    async def _reloaded(self, game: LiveGame) -> bool:
        """Memory folded from the log again, after the log refused a row; False when the
        store could not be read (the caller tries again)."""
        assert self.server is not None
        try:
            await self.server.live.reload(game)
        except StoreUnavailable:  # its cause is logged under its incident
            return False
        return True

    async def clocks(self, caller: Caller, game_id: str) -> dict[str, Any] | None:
        """A game's clocks now (None for a game without): public at the table."""
        caller.viewer(game_id)  # a seat token of another game is refused
        game = await self.replays.source.game(game_id)
        found = desk.desk_of(game.table).clocks
        if found is None:
            return None
        server = self.server
        now = timing.time_ms(server.clock().now()) if server is not None and not game.over else None
        shown: dict[str, Any] = timing.as_dict(found, now)
        return shown


def _clocked(row: Row) -> bool:
    """Whether a row is the genesis of a game with clocks (the option ``clock``)."""
    if row.kind != GENESIS:
        return False
    return bool(record_pb2.Genesis.FromString(row.body).options.get("clock"))


def _at(game: LiveGame) -> tuple[str, int]:
    """A game's id and the seq its next row takes (for the log)."""
    return game.game_id, game.last_seq + 1
