"""The feed of every game (``WatchAll``, ``/feed/events``): every row a caller may see, of
every game or of one kind or tournament, in the log's order, from a position a client
stores to resume.

The feed follows the log by position (DESIGN section 11).  Every row has one position,
its leaf in the log tree; a feed stands after the last row it sent, and that one integer
is where it resumes, whatever the number of games.  Its WatchAll token is that integer
bound to the feed's filter (``position_token``: 22 characters, whatever the log's size);
over SSE the event id is the row's position itself.

One ``Broadcaster`` per node serves every feed.  It follows the stream of committed rows
(``service/store/stream.py``) and keeps the last ``RING_ROWS`` rows with their positions
in a ring; a feed is a cursor into it.  A feed that resumes from a position older than
the ring reads the log by position (``EventStore.rows_from``, ``STORE_ROWS`` at a time)
until it reaches the ring, then reads the ring: the same positions either way, so nothing
is missed or sent twice.  What waits for a feed is the ring's rows after its cursor, at
most ``RING_ROWS``, shared by every feed: a feed that lets the ring pass its cursor has
fallen behind and is ended (RESOURCE_EXHAUSTED, ``FELL_BEHIND``, ``streams.fell_behind``)
and resumes from its position.  A feed holds no rows of its own beyond the page of the log
it is reading, so the server's memory does not grow with its feeds.

Each row is shown as ``WatchGame`` shows it to the same caller (``replay.record.visibility.seen``
on the game folded in memory: the one visibility policy), drawn once per viewer (the
spectator, the arbiter, a seat) and kept a while (``STEPS_KEPT``), not once per feed.  A
seat's token sees its own game only: the other games' rows are left out of its feed.  A
game waiting for seat entropy has no rows yet; its genesis row comes when it begins.

Positions are checked with bounds before anything of them is decoded (``read_position``,
``read_event_id``): a token's length (the field's bound), its form, its filter and its
integer's range; a token of the earlier format (a compressed map of every game's seq) is
refused naming ``position`` and saying so.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
from collections import OrderedDict
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from feastlog.presentation import typed
from feastlog.replay import games
from feastlog.replay.games.engine import Viewer
from feastlog.replay.record.history import genesis_of
from feastlog.replay.record.rows import Row
from feastlog.replay.record.visibility import Step, drawn_as_released, seen
from feastlog.service.app import streams
from feastlog.service.app.auth import Caller
from feastlog.service.app.bounds import EARLIER_POSITION, checked
from feastlog.service.app.errors import BadRequest, PermissionDenied
from feastlog.service.store.stream import Committed

if TYPE_CHECKING:
    from feastlog.service.app.live import LiveGames
    from feastlog.service.app.reads import Replays
    from feastlog.service.store.writer import Database

RING_ROWS = 4096  # the last committed rows a node keeps for its feeds (a feed's most lag)
STORE_ROWS = 256  # rows a feed behind the ring reads from the log at a time
STEPS_KEPT = 4096  # rows drawn for a viewer, kept for the other feeds of that viewer
GAMES_KEPT = 16384  # games' kind and tournament, kept for the feeds' filters
GIVE_BACK_ROWS = 16  # a feed gives the loop back at least once in this many rows

TOKEN_PREFIX = "2."  # the token's version: a position of the log (1 was a map of seqs)
DIGEST_BYTES = 7  # of the filter's sha256, in the token
TOKEN_LENGTH = len(TOKEN_PREFIX) + 20  # base64url of 8 + 7 bytes, no padding
MOST_POSITION = (1 << 62) - 1  # a position no log reaches (and an int every store takes)
BASE64URL = re.compile(r"[A-Za-z0-9_-]+")
DIGITS = re.compile(r"[0-9]{1,19}")
EARLIER = "it is " + EARLIER_POSITION


@dataclass(frozen=True)
class FeedRow:
    """One row of the feed: its game, the step as the caller may see it, its log position,
    the token of the feed's position after it (WatchAll's), and which drawing of the row
    it is (its position, viewer and release: what shows it once may be kept by it)."""

    game_id: str
    step: Step
    typed_member: str
    position: int
    token: str
    drawn: tuple[int, str, bool]  # the same for every feed handed the same step (a key)


def _filter_digest(kind: str, tournament_id: str) -> bytes:
    return hashlib.sha256(json.dumps([kind, tournament_id]).encode()).digest()[:DIGEST_BYTES]


def position_token(position: int, kind: str, tournament_id: str, digest: bytes = b"") -> str:
    """The WatchAll token of a feed that stopped after the row at ``position``: that
    integer and the filter's digest (``digest``, when the feed has it already), 22
    characters for any position."""
    raw = position.to_bytes(8, "big") + (digest or _filter_digest(kind, tournament_id))
    return TOKEN_PREFIX + base64.urlsafe_b64encode(raw).decode()


def read_position(token: str, kind: str, tournament_id: str) -> int:
    """The position a WatchAll token resumes from (the one after the row it stopped after;
    0 for none); BadRequest (field ``position``) for one this feed did not give, or gave
    for another filter.  Its length and form are checked before it is decoded."""
    if not token:
        return 0
    checked("position", token)
    body = token.removeprefix(TOKEN_PREFIX)
    if len(token) != TOKEN_LENGTH or body == token or not BASE64URL.fullmatch(body):
        earlier = "." not in token and BASE64URL.fullmatch(token) is not None
        why = EARLIER if earlier else "it is not a position this feed gave"
        raise BadRequest(f"position {why}", field="position")
    raw = base64.urlsafe_b64decode(body)
    position = int.from_bytes(raw[:8], "big")
    if position > MOST_POSITION:
        raise BadRequest("position is not a position this feed gave", field="position")
    if raw[8:] != _filter_digest(kind, tournament_id):
        raise BadRequest(
            "position was given for another filter (game_kind, tournament_id): "
            "resume with the filter it came with",
            field="position",
        )
    return position + 1


def read_event_id(event_id: str) -> int:
    """The position an SSE feed resumes from after the event ``event_id`` (a row's
    position: ASCII digits; 0 for none); BadRequest naming ``position`` otherwise."""
    if not event_id:
        return 0
    checked("position", event_id)
    if not DIGITS.fullmatch(event_id) or int(event_id) > MOST_POSITION:
        earlier = BASE64URL.fullmatch(event_id) is not None
        why = EARLIER if earlier else "it is a row's position in the log: ASCII digits"
        raise BadRequest(f"position {why}", field="position")
    return int(event_id) + 1


def _check_kind(kind: str) -> None:
    if kind and kind not in games.kinds():  # a filter of no kind would match nothing
        raise games.UnknownGameKind(kind)


class Broadcaster:
    """The node's feeds: the ring of recent committed rows, and what each feed reads."""

    def __init__(self, db: Database, live: LiveGames, replays: Replays) -> None:
        self.db = db
        self.live = live
        self.replays = replays  # how open a finished game's record is (``released``)
        self.ring_rows = RING_ROWS  # read once: a test may make a node's ring smaller
        self._slots: list[Row | None] = [None] * self.ring_rows
        self._start = -1  # the ring's first position (-1: nothing in it yet)
        self._end = -1  # the position after its last row
        self._arrived = asyncio.Event()
        self._steps: OrderedDict[tuple[int, str, bool], Step] = OrderedDict()
        self._games: OrderedDict[str, tuple[str, str]] = OrderedDict()
        self.open = 0  # feeds open now

    async def watch_all(
        self, caller: Caller, kind: str = "", tournament_id: str = "", position: str = ""
    ) -> AsyncIterator[FeedRow]:
        """WatchAll's feed once its request is checked: a bad position or an unknown kind is
        refused here, before anything is sent.  It ends once the caller's credential no
        longer stands (``Records.held``)."""
        _check_kind(kind)
        start = read_position(position, kind, tournament_id)
        return self.replays.source.held(caller, self.rows(caller, kind, tournament_id, start))

    async def event_feed(
        self, caller: Caller, kind: str = "", tournament_id: str = "", event_id: str = ""
    ) -> AsyncIterator[FeedRow]:
        """``/feed/events``' feed, resumed after the event ``event_id``, checked as
        ``watch_all`` checks its request (before the stream's 200)."""
        _check_kind(kind)
        start = read_event_id(event_id)
        return self.replays.source.held(caller, self.rows(caller, kind, tournament_id, start))

    def committed(self, commit: Committed) -> None:
        """The stream's rows into the ring (a subscriber: it returns at once); every feed
        waiting for a row is woken."""
        if not commit.rows:
            return
        if commit.position != self._end:  # the first commit seen (or a gap: start again)
            self._start = self._end = commit.position
        for row in commit.rows:
            self._slots[self._end % self.ring_rows] = row
            self._end += 1
            if row.seq == 1:
                self._note(row.game_id, genesis_of(row))
        self._start = max(self._start, self._end - self.ring_rows)
        arrived, self._arrived = self._arrived, asyncio.Event()
        arrived.set()

    def _ring_start(self) -> int:
        """The first position the ring holds (the log's size, while it holds none)."""
        return self._start if self._start >= 0 else self.db.stream.position

    async def positions(self, position: int) -> AsyncIterator[tuple[int, Row]]:
        """Every committed row from ``position`` on, with its position, then each new one:
        from the log while ``position`` is older than the ring, then from the ring.

        A feed that has reached the ring and lets it pass its cursor (more than
        ``RING_ROWS`` rows committed since the row it took) is ended: ``FellBehind``.
        """
        live = False
        while True:
            arrived = self._arrived
            if position < self._ring_start():
                if live:
                    raise streams.fell_behind(
                        f"more than {self.ring_rows} rows were committed after the last row "
                        "its reader took"
                    )
                page = await self._from_store(position)
                for at, row in page:
                    yield at, row
                    position = at + 1
                if page:
                    continue
            elif position < self._end:
                live = True
                yield position, self._slots[position % self.ring_rows]  # type: ignore[misc]
                position += 1
                continue
            await arrived.wait()

    async def _from_store(self, position: int) -> list[tuple[int, Row]]:
        """The next page of the log from ``position``: only rows the stream has published
        (the store may hold more, committed a moment ago), and no gap."""
        found = await self.db.read(lambda store: store.rows_from(position, STORE_ROWS))
        published = self.db.stream.position
        page: list[tuple[int, Row]] = []
        for at, row in found:
            if at != position + len(page) or at >= published:
                break
            page.append((at, row))
        return page

    async def rows(
        self, caller: Caller, kind: str, tournament_id: str, position: int
    ) -> AsyncGenerator[FeedRow, None]:
        """The feed of ``caller`` from ``position`` on: the rows of its filter it may see,
        each as ``WatchGame`` shows it to that caller."""
        digest = _filter_digest(kind, tournament_id)
        self.open += 1
        try:
            async for at, row in self.positions(position):
                viewer = await self._viewer(caller, kind, tournament_id, row)
                if viewer is not None:
                    step, member, drawn = await self.step(at, row, viewer)
                    token = position_token(at, kind, tournament_id, digest)
                    yield FeedRow(row.game_id, step, member, at, token, drawn)
                if at % GIVE_BACK_ROWS == 0:
                    # other work between: a feed catching up, whose sends go on without
                    # waiting, would hold the loop (every other call's answer) for as long
                    # as its rows last
                    await asyncio.sleep(0)
        finally:
            self.open -= 1

    async def _viewer(
        self, caller: Caller, kind: str, tournament_id: str, row: Row
    ) -> Viewer | None:
        """Who ``caller`` is for this row's game, if the feed shows the row (None: not of
        the filter, or of a game a seat's token may not watch)."""
        try:
            viewer = caller.viewer(row.game_id)
        except PermissionDenied:  # a seat's token watches its own game only
            return None
        if kind or tournament_id:
            of_kind, of_tournament = await self._filtered_by(row)
            if (kind and of_kind != kind) or (tournament_id and of_tournament != tournament_id):
                return None
        return viewer

    async def _filtered_by(self, row: Row) -> tuple[str, str]:
        """A row's game's kind and tournament: from its genesis row, as a feed saw it go by
        (a feed reads the log in order: a game's genesis comes before its other rows), or
        from the game folded (only a game whose genesis went by too long ago is folded)."""
        game_id = row.game_id
        found = self._games.get(game_id)
        if found is None and row.seq == 1:
            found = self._note(game_id, genesis_of(row))
        if found is None:
            found = self._note(game_id, (await self._game(game_id)).genesis)
        self._games.move_to_end(game_id)
        return found

    async def _game(self, game_id: str) -> Any:
        """The game folded in memory (folded now when it is not)."""
        return self.live.peek(game_id) or await self.live.get(game_id)

    def _note(self, game_id: str, genesis: Any) -> tuple[str, str]:
        found = self._games[game_id] = (genesis.game_kind, genesis.tournament_id)
        while len(self._games) > GAMES_KEPT:
            self._games.popitem(last=False)
        return found

    async def step(
        self, position: int, row: Row, viewer: Viewer
    ) -> tuple[Step, str, tuple[int, str, bool]]:
        """The row as ``viewer`` may see it (``seen``, as WatchGame draws it), drawn once
        per viewer and kept for the other feeds; its game's typed member; and the
        drawing's key."""
        game = await self._game(row.game_id)
        while game.last_seq < row.seq:  # memory is behind the log here: it catches up
            woken: asyncio.Queue[None] = asyncio.Queue(1)
            game.watchers.add(woken)
            try:
                if game.last_seq < row.seq:
                    await woken.get()
            finally:
                game.watchers.discard(woken)
        # once the game is over its last rows are shown as the record is released
        asked = game.over and drawn_as_released(game, row.seq)
        public = asked and (await self.replays.released(game)).public
        member = typed.member_of(game.engine.spec.kind)
        key = (position, str(viewer), public)
        step = self._steps.get(key)
        if step is None:
            step = self._steps[key] = seen(game, row.seq, viewer, public)
            while len(self._steps) > STEPS_KEPT:
                self._steps.popitem(last=False)
        return step, member, key
