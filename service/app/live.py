"""Live games: folded once, kept in memory, advanced only after their rows commit.

``LiveGames`` is the cache of folded games.  A game is folded from the store the first
time it is needed: read on the read connection and folded in a worker thread, so a cold
game holds up neither the event loop nor the writer.  Running games stay folded (a
command never refolds its game); finished ones stay while among the ``FINISHED_KEPT``
most recently used, or while someone watches them.

Memory follows the store: ``LiveGames`` is the first subscriber of the stream of
committed rows (``service/store/stream.py``), and a game moves only when its rows are on
it.  A node's own command hands the tables and facts it folded to the commit
(``Database.commit(batch, folded)``), which the game takes as they are; rows another node
committed (a shared store: PostgreSQL, many nodes) are folded onto each game held here,
in order, checking every state hash, so watchers here stream what other nodes accepted.
Until that has happened memory may be behind: ``behind`` asks the log, and the
application reloads a game before it refuses anything from a memory that is behind.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from feastlog.replay.games import engine
from feastlog.replay.games.engine import Engine, Fact, MalformedCommand, RuleViolation
from feastlog.replay.games.fold import Table, state_hash
from feastlog.replay.record.history import Folded, apply_row, refold
from feastlog.replay.record.rows import Row
from feastlog.service.app.errors import GameNotFound
from feastlog.service.app.streams import wake
from feastlog.service.store import StoredGame, StoreUnavailable
from feastlog.service.store.stream import Committed
from feastlog.service.store.writer import Database
from feastlog.v1 import record_pb2

# Finished games kept folded in memory (most recently used); running games always are.
FINISHED_KEPT = 256
CATCH_UP_RETRY = 0.5  # seconds before reading another node's rows again after a failure
EVERYTHING = 1 << 62  # a target past any game's end: read whatever there is


@dataclass
class LiveGame:
    """A game folded in memory: its rows, and the table and facts after each."""

    genesis: record_pb2.Genesis
    engine: Engine
    pack: Any
    server_seed: bytes
    seat_names: tuple[str, ...]
    rows: list[Row]
    tables: list[Table]
    facts: list[tuple[Fact, ...]]
    # keyed by (actor, command_id): an id is its sender's own, so nobody can probe another
    # seat's ids (a client may name them after its sealed bids)
    command_ids: dict[tuple[str, str], int] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # each stream's wake-up (a queue of one: ``streams.wake``); it reads the rows itself
    watchers: set[asyncio.Queue[None]] = field(default_factory=set)

    @property
    def game_id(self) -> str:
        """The game's id."""
        return self.genesis.game_id

    @property
    def last_seq(self) -> int:
        """The seq of the last committed row."""
        return len(self.rows)

    @property
    def table(self) -> Table:
        """The state after the last committed row."""
        return self.tables[-1]

    @property
    def over(self) -> bool:
        """Whether the game has ended (its seed is revealed)."""
        return self.rows[-1].kind == "seed_reveal"

    def advance(self, rows: list[Row], tables: list[Table], facts: list[tuple[Fact, ...]]) -> None:
        """Take committed rows into the live state and wake the watchers."""
        self.rows += rows
        self.tables += tables
        self.facts += facts
        for row in rows:
            if row.command_id:
                self.command_ids[row.actor, row.command_id] = row.seq
        for queue in self.watchers:
            wake(queue)

    def follow_on(self, rows: Sequence[Row]) -> bool:
        """Fold rows committed elsewhere onto this game; False (nothing changed) if they do
        not follow on from its last row or a state hash disagrees: then reload it whole."""
        tables: list[Table] = []
        facts: list[tuple[Fact, ...]] = []
        table, prev = self.table, self.rows[-1]
        for row in rows:
            if row.seq != prev.seq + 1 or row.prev_hash != prev.hash:
                return False
            try:
                table, found = apply_row(self.engine, table, row, [*self.tables, *tables])
            except (RuleViolation, MalformedCommand, ValueError):
                return False
            if state_hash(table) != row.state_hash:
                return False
            tables.append(table)
            facts.append(tuple(found))
            prev = row
        self.advance(list(rows), tables, facts)
        return True

    def reload(self, stored: StoredGame) -> None:
        """Take the stored record as the truth again, after memory and log disagreed."""
        fresh = live_from_store(stored)
        self.rows, self.tables, self.facts = fresh.rows, fresh.tables, fresh.facts
        self.command_ids = fresh.command_ids
        for queue in self.watchers:
            wake(queue)

    @classmethod
    def begun(
        cls,
        genesis: record_pb2.Genesis,
        pack: Any,
        server_seed: bytes,
        first: tuple[Row, Table, list[Fact]],
    ) -> LiveGame:
        """A game that has just begun: its genesis row, and the table and facts of setting up."""
        names = tuple(s.name for s in genesis.seats)
        game = cls(genesis, engine(genesis.game_kind), pack, server_seed, names, [], [], [])
        row, table, facts = first
        game.advance([row], [table], [tuple(facts)])
        return game


def live_from_folded(folded: Folded, server_seed: bytes, names: tuple[str, ...]) -> LiveGame:
    """A live game from a folded record."""
    game = LiveGame(
        folded.genesis,
        engine(folded.genesis.game_kind),
        folded.pack,
        server_seed,
        names,
        [],
        [],
        [],
    )
    game.advance(list(folded.rows), list(folded.tables), list(folded.facts))
    return game


def live_from_store(stored: StoredGame) -> LiveGame:
    """Fold a stored game once, to keep it live."""
    folded = refold(stored.rows, stored.server_seed, stored.pack_body)
    return live_from_folded(folded, stored.server_seed, stored.seat_names)


class LiveGames:
    """Every game folded in memory on this server, loaded on first use."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._live: dict[str, LiveGame] = {}
        self._finished: OrderedDict[str, None] = OrderedDict()
        self._loading: dict[str, asyncio.Future[LiveGame]] = {}
        self._heads: dict[str, int] = {}  # last seq of running games not folded in memory
        self.shared = db.store.shared  # other nodes write too: memory may be behind the log
        self._targets: dict[str, int] = {}  # last seq other nodes committed, to catch up to
        self._following: dict[str, asyncio.Task[None]] = {}

    async def get(self, game_id: str) -> LiveGame:
        """The live game, folded from the store the first time it is needed."""
        game = self._live.get(game_id)
        if game is None:
            loading = self._loading.get(game_id)
            if loading is None:
                loading = self._loading[game_id] = asyncio.ensure_future(self._load(game_id))
                loading.add_done_callback(lambda _: self._loading.pop(game_id, None))
            game = await asyncio.shield(loading)
        self.settle(game)
        return game

    async def _load(self, game_id: str) -> LiveGame:
        """Read a cold game on the read connection and fold it in a worker thread."""
        stored = await self.db.read(lambda store: store.load(game_id))
        if stored is None:
            raise GameNotFound(f"there is no game {game_id!r}", game_id=game_id)
        game = self._live.get(game_id)  # created here while it was read
        if game is None:
            game = self._live[game_id] = await asyncio.to_thread(live_from_store, stored)
            self._heads.pop(game_id, None)
            self._follow(game)  # rows other nodes committed while it was read
        return game

    async def caught_up(self, game_id: str) -> LiveGame:
        """The live game (folded from the store the first time), once memory has caught
        up with the rows the stream brought for it meanwhile (its catch-up's task done)."""
        game = await self.get(game_id)
        while (following := self._following.get(game_id)) is not None:
            await asyncio.wait({following})  # its failure is its own: memory may lag
        return game

    def settle(self, game: LiveGame) -> None:
        """Note a finished game's use; fold out the least recently used beyond the limit."""
        if not game.over:
            return
        self._finished[game.game_id] = None
        self._finished.move_to_end(game.game_id)
        for game_id in list(self._finished):
            if len(self._finished) <= FINISHED_KEPT:
                break
            if not self._live[game_id].watchers:
                del self._finished[game_id]
                del self._live[game_id]

    def committed(self, commit: Committed) -> None:
        """The stream's rows: each game held here advanced by its own, in order (with the
        tables and facts this node folded for its commands, else folded here); a game
        being folded catches up once it is, and a game's head is noted."""
        by_game: dict[str, list[Row]] = {}
        for row in commit.rows:
            by_game.setdefault(row.game_id, []).append(row)
        for game_id, rows in by_game.items():
            game = self._live.get(game_id)
            done = commit.folded.get(game_id)
            if game is None and isinstance(done, LiveGame):  # begun by this commit, here
                self.start(done)
                self._heads.pop(game_id, None)
                game = self._live[game_id]
            if game is None:
                self.moved(game_id, rows[-1].seq)
                continue
            fresh = [r for r in rows if r.seq > game.last_seq]
            if not fresh:
                continue
            if done is not None and not isinstance(done, LiveGame) and done.rows == fresh:
                game.advance(list(done.rows), list(done.tables), list(done.facts))
            elif not game.follow_on(fresh):
                self._targets[game_id] = EVERYTHING  # memory and log disagree: read it again
                self._follow(game)
            self.settle(game)

    def start(self, game: LiveGame) -> None:
        """Keep a game that has just started folded in memory."""
        # on a shared store a call may have folded it from the log already (its genesis
        # is news to this node too): keep that one, its watchers are on it
        self._live.setdefault(game.game_id, game)

    def peek(self, game_id: str) -> LiveGame | None:
        """The game if it is folded here now (None: not folded, or being folded)."""
        return self._live.get(game_id)

    def holds(self, game_id: str) -> bool:
        """Whether the game is folded here (or being folded)."""
        return game_id in self._live or game_id in self._loading

    async def behind(self, game: LiveGame) -> bool:
        """Whether the log has rows of this game that memory lacks (never, unshared)."""
        if not self.shared:
            return False
        return await self.db.read(lambda store: store.last_seq(game.game_id)) > game.last_seq

    def moved(self, game_id: str, seq: int) -> None:
        """A commit (this node's or another's) took a game to ``seq``: catch up to it.

        A game held here follows the log row by row, never folded out instead (a watcher
        may be about to hold it); one being folded catches up once it is.
        """
        if game_id in self._heads:
            self._heads[game_id] = max(self._heads[game_id], seq)
        if not self.holds(game_id):
            return
        self._targets[game_id] = max(self._targets.get(game_id, 0), seq)
        game = self._live.get(game_id)
        if game is not None:
            self._follow(game)

    def _follow(self, game: LiveGame) -> None:
        """Catch a game up to what was committed (one task per game at a time)."""
        target = self._targets.get(game.game_id, 0)
        if target <= game.last_seq or game.game_id in self._following:
            return
        self._following[game.game_id] = asyncio.create_task(self._catch_up(game))

    async def _catch_up(self, game: LiveGame) -> None:
        try:
            while self._targets.get(game.game_id, 0) > game.last_seq:
                async with game.lock:  # a command committing here advances it first
                    if self._targets.get(game.game_id, 0) <= game.last_seq:
                        break
                    try:
                        rows = await self.db.read(
                            lambda store, seq=game.last_seq: store.rows_after(game.game_id, seq)
                        )
                    except StoreUnavailable:  # logged with its incident; the next try may do
                        await asyncio.sleep(CATCH_UP_RETRY)
                        continue
                    if not rows:
                        self._targets[game.game_id] = game.last_seq
                    elif not game.follow_on(rows):
                        await self.reload(game)
        finally:
            # here, not in a done callback: a notification handled between this task's
            # last look at its target and such a callback would find it still following
            self._following.pop(game.game_id, None)
            if game.over:  # ended by rows read here: kept as any finished game, not for ever
                self._targets.pop(game.game_id, None)
                self.settle(game)

    async def reload(self, game: LiveGame) -> None:
        """Fold a game from the store again, so memory and log agree."""
        stored = await self.db.call(self.db.store.load, game.game_id)
        if stored is not None:
            game.reload(stored)

    async def head(self, game_id: str) -> tuple[int, bool]:
        """A game's last seq and whether it is over, without folding it.

        From memory when it is folded; else its last seq by index, kept (a running game
        not folded since start changes only once folded).
        """
        game = self._live.get(game_id)
        if game is not None:
            return game.last_seq, game.over
        last_seq = self._heads.get(game_id, 0)
        if not last_seq:
            last_seq = await self.db.read(lambda store: store.last_seq(game_id))
            self._heads[game_id] = last_seq
        return last_seq, False

    def loaded(self) -> int:
        """How many games are folded in memory now."""
        return len(self._live)

    def folded(self) -> list[LiveGame]:
        """The games folded in memory now (the metrics count what they hold)."""
        return list(self._live.values())
