"""The games on a running server: create a game, join it with seat entropy, submit a
command or a ruling, a seat's link, and watch a game; and the live games as the read
use cases' source (``LiveRecords``).

Each write is a short load → decide → save: the rules decide (``replay/`` through
``service.app.commands``), the visibility policy says what the caller may see
(``replay.record.visibility``), the writer saves (``service.store.writer``), and only
then does the game in memory move on, as the stream of committed rows brings the commit
(``service.app.live``).  What each use case needs is passed in when ``Games`` is made
(``service.app.application`` composes them).
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from feastlog.presentation import typed
from feastlog.presentation.page import final_result
from feastlog.replay.games.engine import Fact, MalformedCommand, RuleViolation, Viewer
from feastlog.replay.proof.signed import Receipt
from feastlog.replay.record.rows import Row
from feastlog.replay.record.visibility import Dealt, Step, facts_for, seed_out, seen
from feastlog.service.app import commands, streams
from feastlog.service.app.auth import Caller, Credentials
from feastlog.service.app.clock import Clock
from feastlog.service.app.entropy import Pending, WaitingRoom, begin_with
from feastlog.service.app.errors import (
    AlreadyStarted,
    BadRequest,
    CommandIdReused,
    EntropyAlreadySent,
    GameNotFound,
    PermissionDenied,
    StaleSeq,
    Unauthenticated,
    refusal_of,
)
from feastlog.service.app.limits import Refolds, RefusalBudget
from feastlog.service.app.live import LiveGame, LiveGames
from feastlog.service.app.notary import Notary
from feastlog.service.app.reads import Replays, first_seq
from feastlog.service.app.seatlinks import SeatLinks
from feastlog.service.app.source import Records, asked_for
from feastlog.service.app.streams import Wakeups
from feastlog.service.store import Batch, Rejection, StoreConflict, StoredGame
from feastlog.service.store.port import EventStore
from feastlog.service.store.records import Signed
from feastlog.service.store.stream import Committed
from feastlog.service.store.writer import Database
from feastlog.v1 import record_pb2

log = logging.getLogger("feastlog")

T = TypeVar("T")

# The refusals of a command that are recorded (outside the chain) as well as answered.
RECORDED = (RuleViolation, MalformedCommand, StaleSeq, CommandIdReused, PermissionDenied)


@dataclass(frozen=True)
class Created:
    """A new game: its genesis and the seat tokens (shown once)."""

    genesis: record_pb2.Genesis
    tokens: tuple[str, ...]
    warnings: tuple[str, ...] = ()  # for the organiser: a seed already public
    receipts: tuple[Receipt, ...] = ()  # of the genesis row (none while it waits)


@dataclass(frozen=True)
class Accepted:
    """A recorded command: its row, the facts the caller may see, and whether it was a retry."""

    row: Row
    facts: tuple[Fact, ...]
    game_over: bool
    replayed: bool
    typed_member: str
    receipts: tuple[Receipt, ...] = ()  # of each row the command appended (or its first)


@dataclass(frozen=True)
class Sent:
    """A command as its sender sent it: who, its id, the seq it expects, the command, and
    its bytes (fixed once, so that a retry is compared byte for byte)."""

    caller: Caller
    command_id: str
    expected_seq: int | None
    command: record_pb2.Command
    body: bytes


@dataclass(frozen=True)
class Joined:
    """A seat's entropy taken: whether the game began, the seats still to send theirs, and
    the receipt of its genesis row when this join began it."""

    started: bool
    waiting_for: list[int]
    receipts: tuple[Receipt, ...] = ()


@dataclass
class Watching:
    """A game followed from a seq on: its rows as the caller may see them, stored then live."""

    genesis: record_pb2.Genesis
    pack: Any
    typed_member: str
    steps: AsyncIterator[Step]
    _game: LiveGame

    def result(self) -> dict[str, Any] | None:
        """The final result once the game is over (public then), else None."""
        return final_result(self._game.engine, self._game.table) if self._game.over else None


class ToTheEnd:
    """Work that runs to its end whatever happens to its caller.

    Once a command is queued, its commit and the advance in memory are the commit's
    business: a deadline or a cancellation only means the caller misses the answer, and
    a retry with the same command_id is answered ``replayed``.
    """

    def __init__(self) -> None:
        self._running: set[asyncio.Task[Any]] = set()

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` to its end; its caller may stop waiting."""
        task = asyncio.create_task(work)
        self._running.add(task)
        task.add_done_callback(self._forget)
        return await asyncio.shield(task)

    def _forget(self, task: asyncio.Task[Any]) -> None:
        self._running.discard(task)
        if not task.cancelled():
            task.exception()  # its caller may be gone; the error went to it if it was there

    async def drain(self) -> None:
        """Wait for every piece of work already taken (graceful shutdown)."""
        while self._running:
            await asyncio.wait(set(self._running))


class LiveRecords(Records):
    """The read use cases' source on a server: the live games (folded in memory, from
    the store when cold), the waiting room, the store on its read connection, folds in
    the refolds' pool, and streams ended once a credential no longer stands."""

    def __init__(
        self,
        db: Database,
        live: LiveGames,
        room: WaitingRoom,
        refolds: Refolds,
        credentials: Credentials,
        wakeups: Wakeups,
    ) -> None:
        self.db = db
        self.live = live
        self.room = room
        self.refolds = refolds
        self.credentials = credentials
        self.wakeups = wakeups

    def held(self, caller: Caller, rows: AsyncIterator[T]) -> AsyncIterator[T]:
        """A stream of ``caller``'s, ended (Unauthenticated) once its credential no longer
        stands: asked before each row, and at once when a key is revoked on this node
        (``streams.held``).  Only a named arbiter's key is ever revoked."""
        if caller.role != "arbiter":
            return rows
        return streams.held(rows, self.holding(caller), self.wakeups)

    def holding(self, caller: Caller) -> Callable[[], None]:
        """What a stream asks before each row: Unauthenticated once ``caller``'s credential
        no longer stands (a named arbiter's key revoked, on this node or another)."""

        def holding() -> None:
            if not self.credentials.still_holds(caller):
                raise Unauthenticated(
                    f"the key of arbiter {caller.name!r} was revoked: this stream ends"
                )

        return holding

    async def game(self, game_id: str) -> LiveGame:
        if not game_id:
            raise BadRequest("game_id is required", field="game_id")
        if self.live.shared and not self.live.holds(game_id):
            await self.waiting(game_id)  # another node's game may wait for seat entropy
        self.room.check(game_id)
        return await self.live.get(game_id)

    async def record(self, game_id: str) -> StoredGame:
        found = await self.db.call(self.db.store.load, game_id)
        if found is None:
            # no rows: a game waiting for seat entropy is told so, as every read of it is
            if self.live.shared:
                await self.waiting(game_id)
            self.room.check(game_id)
            raise GameNotFound(f"there is no game {game_id!r}", game_id=game_id)
        return found

    async def refused(self, game_id: str) -> list[Rejection]:
        return await self.db.call(self.db.store.rejections, game_id)

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        return await self.db.read(fn, *args)

    async def fold(self, fn: Callable[..., T], *args: Any) -> T:
        return await self.refolds.run(fn, *args)

    async def scan(self, kind: str) -> AsyncIterator[StoredGame]:
        # one ordered scan of the log on the read connection, a game at a time; a
        # cancelled call stops between games
        games = await self.db.read(lambda store: store.scan(None, kind))
        try:
            while (stored := await self.db.read(_next_of, games)) is not None:
                yield stored
        finally:
            await self.db.read(lambda _: games.close())

    async def running_head(self, game_id: str) -> tuple[int, bool, bool]:
        if self.room.get(game_id) is not None:
            return 0, False, True
        last_seq, over = await self.live.head(game_id)
        return last_seq, over, False

    async def waiting(self, game_id: str) -> Pending | None:
        """The game as the store has it waiting now (None: it has begun, or is unknown)."""
        stored = await self.db.read(lambda store: store.pending_game(game_id))
        if stored is None:
            self.room.drop(game_id)
            return None
        return self.room.take_up(stored)


class Games:
    """The game use cases of a running server (see the module doc)."""

    def __init__(
        self,
        db: Database,
        source: LiveRecords,
        replays: Replays,
        credentials: Credentials,
        notary: Notary | None,
        clock: Callable[[], Clock],
        refusals: RefusalBudget,
        finishing: ToTheEnd,
        seat_links: SeatLinks,
    ) -> None:
        self.db = db
        self.source = source
        self.live = source.live
        self.room = source.room
        self.replays = replays
        self.credentials = credentials
        self.notary = notary  # None: nothing is signed (no receipts, no heads)
        self.clock = clock  # the application's, asked each time (a test may set another)
        self.refusals = refusals
        self.finishing = finishing
        self.seat_links = seat_links
        # every refused command, stored or not, by (reason, rule id): the metrics read it
        self.refused: collections.Counter[tuple[str, str]] = collections.Counter()

    async def create(
        self,
        caller: Caller,
        kind: str,
        players: Sequence[str],
        options: Mapping[str, str],
        seed: bytes = b"",
        tournament_id: str = "",
        pack_bytes: bytes = b"",
        seat_entropy: bool = False,
    ) -> Created:
        """Create a game: genesis row, seat tokens, seed kept secret until the end.

        With ``seat_entropy`` the genesis row waits until every seat has sent entropy.
        """
        caller.require_organiser()
        request = (kind, players, options, seed, tournament_id, pack_bytes, seat_entropy)
        key = self.notary.public_key if self.notary else ""
        if pack_bytes:
            # an organiser's own pack is read (TOML, up to 128 KiB: about 0.6 s at worst)
            # and checked off the event loop, so no game waits on it
            opening = await asyncio.to_thread(commands.open_game, *request, self.clock().now(), key)
        else:
            opening = commands.open_game(*request, self.clock().now(), key)
        warnings = await self._seed_warnings(seed) if seed else ()
        return await self.finishing.run(self._open(opening, warnings))

    async def _seed_warnings(self, seed: bytes) -> tuple[str, ...]:
        """A supplied seed that a finished game made public: the new game's deal is known
        to anyone who read that record (its seed commitment is the same, for all to see).
        Taken all the same: a test or a demo may replay a known deal on purpose."""
        dealt = await self.db.read(lambda store: store.dealt_from(seed))
        out = seed_out([Dealt(*found) for found in dealt])
        if out is None:
            return ()
        return (
            f"this seed was revealed when game {out.game_id} ended ({out.ended_at}), with "
            "no other game of it running: anyone who read that record knows this game's "
            "deal; for a fair game supply a fresh random seed, or none",
        )

    async def _open(self, opening: commands.Opening, warnings: tuple[str, ...] = ()) -> Created:
        signed = await self.db.commit(Batch(games=[opening.stored]), commands.begun([opening]))
        self.opened(opening)
        begun = [] if opening.game is None else opening.game.rows[:1]
        return Created(opening.genesis, opening.tokens, warnings, self.receipts(begun, signed))

    def opened(self, opening: commands.Opening) -> None:
        """Take a game just committed: into the waiting room while it waits for seat
        entropy (a game that began is live by the stream: ``begun``); its seat tokens."""
        if opening.game is None:
            self.room.add(opening.genesis, opening.server_seed, opening.pack)
        for seat, token in enumerate(opening.tokens):
            self.credentials.add_seat(token, opening.genesis.game_id, seat)

    def receipts(self, rows: Sequence[Row], signed: Signed | None = None) -> tuple[Receipt, ...]:
        """The signed receipts of rows just recorded (none when the server signs nothing):
        with the signatures the store's process made as it committed them when it did,
        else signed here."""
        if self.notary is None or not rows:
            return ()
        if signed is not None and signed.public_key == self.notary.public_key:
            found = signed.signatures
            if all((row.game_id, row.seq) in found for row in rows):
                at, key = signed.signed_at, signed.public_key
                return tuple(Receipt.of(row, at, key, found[row.game_id, row.seq]) for row in rows)
        at = self.clock().now()
        return tuple(self.notary.receipt(row, at) for row in rows)

    async def join(self, caller: Caller, game_id: str, entropy: bytes) -> Joined:
        """Take one seat's entropy; begin the game when every seat has sent its own."""
        asked_for(game_id)
        actor = caller.actor(game_id)  # who asks comes first: no token, UNAUTHENTICATED
        pending = self.room.get(game_id)
        if pending is None and self.live.shared:  # made on another node?
            pending = await self.source.waiting(game_id)
        if pending is None:
            game = await self.source.game(game_id)  # NOT_FOUND for an unknown game
            when = "ended" if game.over else "started"  # (perhaps voided before it began)
            raise AlreadyStarted(f"this game has {when}: seat entropy comes before the deal")
        if actor == "arbiter":
            raise PermissionDenied("seat entropy comes from the seats, with their tokens")
        if not 1 <= len(entropy) <= 1024:
            raise BadRequest("entropy is 1 to 1024 bytes", field="entropy")
        seat = int(actor.removeprefix("seat:"))
        return await self.finishing.run(self._join(pending, game_id, seat, entropy))

    async def _join(self, pending: Pending, game_id: str, seat: int, entropy: bytes) -> Joined:
        """The store decides, not memory: other nodes may take other seats' joins.

        Write this seat's entropy unless it is there; read what every seat has sent; if
        that is all of them, begin the game. Any node may begin it: the genesis row's key
        lets one such write win, and the others find it begun.
        """
        async with pending.lock:
            sent = await self._sent(game_id)
            if seat not in sent:
                wrote = True
                try:
                    await self.db.commit(Batch(entropy=[(game_id, seat, entropy)]))
                except StoreConflict:  # another call took this seat's entropy: see whose below
                    wrote = False
                now = await self.source.waiting(game_id)
                if now is None and wrote:  # another node began it, with this entropy in it
                    return Joined(True, [])
                sent = await self._sent(game_id) if now is None else dict(now.entropy)
            if sent[seat] != entropy:
                raise EntropyAlreadySent(f"seat {seat} has already sent its entropy")
            waiting = pending.missing(sent)
            if waiting:
                return Joined(False, waiting)
            game = begin_with(pending, sent)
            try:
                signed = await self.db.commit(
                    Batch(rows=[game.rows[0]], started=[game_id]), {game_id: game}
                )
            except StoreConflict:  # another node began it, from the same entropy
                self.room.drop(game_id)
                return Joined(True, [])
            self.room.drop(game_id)
        return Joined(True, [], self.receipts(game.rows[:1], signed))

    async def waiting_game(self, game_id: str) -> Pending | None:
        """The game if it waits for seat entropy (asking the store on a shared one)."""
        if self.live.shared and not self.live.holds(game_id):
            return await self.source.waiting(game_id)
        return self.room.get(game_id)

    async def _end_waiting(self, pending: Pending, sent: Sent) -> Accepted:
        """Void or close a game still waiting for seat entropy, so that a seat that never
        joins cannot keep it open for ever.

        The game begins with the entropy sent so far (empty bytes for each seat that sent
        none, so the record shows who joined and the seed is derived as DESIGN section 3
        says) and ends at once: its genesis row, the ruling and the seed reveal go in one
        commit, so it never runs on a deal some seat had no part in.  As for any game
        ended by a ruling, the seed is revealed and the whole record is public: the deal,
        dealt and never played, and the entropy that was sent; nothing else.
        """
        game_id = pending.draft.game_id
        async with pending.lock:
            game = await self.begun_so_far(pending)  # None: it began meanwhile, as any game
            if game is not None:
                if sent.expected_seq not in (None, 0):
                    raise StaleSeq(
                        f"the game is at seq 0 (waiting for seat entropy), not {sent.expected_seq}",
                        last_seq="0",
                    )
                actor = sent.caller.actor(game_id)
                done = commands.advance(
                    game, actor, None, sent.command, sent.body, sent.command_id, self.clock().now()
                )
                batch = commands.begun_and_advanced(game, done)
                try:  # begun and ended by this commit: the stream folds the ruling on
                    signed = await self.db.commit(batch, {game_id: game})
                except StoreConflict:  # another node began it meanwhile: see below
                    pass
                else:
                    game = await self.live.get(game_id)
                    self.room.drop(game_id)
                    viewer = sent.caller.viewer(game_id)
                    answer = await self._accepted(game, done.rows[0], viewer, False)
                    rows = [game.rows[0], *done.rows]
                    return replace(answer, receipts=self.receipts(rows, signed))
            self.room.drop(game_id)
        return await self._submit(await self.source.game(game_id), sent)

    async def begun_so_far(self, pending: Pending) -> LiveGame | None:
        """A game that waits for seat entropy, begun with what its seats have sent so far
        (empty bytes for each seat that sent none), for a ruling to end in the same commit
        (``commands.begun_and_advanced``); None once it has begun (here or on another
        node).  Its caller holds ``pending.lock`` until that commit."""
        try:
            sent = await self._sent(pending.draft.game_id)
        except AlreadyStarted:
            return None
        seats = range(len(pending.draft.seats))
        return begin_with(pending, {s: sent.get(s, b"") for s in seats})

    async def _sent(self, game_id: str) -> dict[int, bytes]:
        """The entropy each seat has sent, as stored; AlreadyStarted once the game began."""
        pending = await self.source.waiting(game_id)
        if pending is None:
            raise AlreadyStarted("this game has started: seat entropy comes before the deal")
        return dict(pending.entropy)

    def begun(self, commit: Committed) -> None:
        """The stream's genesis rows: a game that waited for seat entropy has begun (on
        this node or another)."""
        for row in commit.rows:
            if row.seq == 1:
                self.room.drop(row.game_id)

    async def submit(
        self,
        caller: Caller,
        game_id: str,
        command_id: str,
        expected_seq: int | None,
        command: record_pb2.Command,
    ) -> Accepted:
        """Check a command against the rules and record it; refusals are recorded too."""
        arbiter = caller.role in ("organiser", "arbiter")
        # the organiser or an arbiter may end a game that waits for seat entropy
        waiting = await self.waiting_game(game_id) if arbiter and ends(command) else None
        if command.WhichOneof("game") == "arbiter" and arbiter:
            # the record says who ruled, from the credential; whatever was sent is replaced
            signed = record_pb2.Command()
            signed.CopyFrom(command)
            signed.arbiter.ruled_by = caller.ruled_by
            command = signed
        body = command.SerializeToString(deterministic=True)
        sent = Sent(caller, command_id, expected_seq, command, body)
        if waiting is not None:
            return await self.finishing.run(self._end_waiting(waiting, sent))
        return await self.finishing.run(self._submit(await self.source.game(game_id), sent))

    async def rule(
        self, caller: Caller, game_id: str, command_id: str, ruling: record_pb2.ArbiterCommand
    ) -> Accepted:
        """Record an arbiter's ruling: a command like any other, from the organiser."""
        command = record_pb2.Command(arbiter=ruling)
        return await self.submit(caller, game_id, command_id, None, command)

    async def _submit(self, game: LiveGame, sent: Sent) -> Accepted:
        """One command at a time per game; a refusal is stored (bounded) and raised."""
        async with game.lock:
            try:
                return await self._again_on_conflict(game, sent)
            except RECORDED as error:
                await self._reject(game, sent, error)
                raise

    async def _again_on_conflict(self, game: LiveGame, sent: Sent) -> Accepted:
        """Decide; when the log had rows memory missed, take the log as the truth and decide
        again."""
        before = game.last_seq
        try:
            return await self._decide(game, sent)
        except StoreConflict:
            await self.live.reload(game)
        except (RuleViolation, StaleSeq):
            # refused from memory: on a shared store, only once the log agrees; the stream
            # may bring other nodes' rows into memory meanwhile: then decide on those
            if game.last_seq == before:
                behind = await self.live.behind(game)
                if game.last_seq == before:
                    if not behind:
                        raise
                    await self.live.reload(game)
        return await self._decide(game, sent)

    async def _decide(self, game: LiveGame, sent: Sent) -> Accepted:
        """Load (the game in memory), decide (the rules), save (the writer), then advance."""
        actor, viewer = sent.caller.actor(game.game_id), sent.caller.viewer(game.game_id)
        earlier = commands.retried(game, actor, sent.command_id, sent.body)
        if earlier is not None:
            answer = await self._accepted(game, earlier, viewer, True)
            return replace(answer, receipts=self.receipts([earlier]))
        done = commands.advance(
            game,
            actor,
            sent.expected_seq,
            sent.command,
            sent.body,
            sent.command_id,
            self.clock().now(),
        )
        # memory, clocks, calls and tournaments follow the stream (``LiveGames.committed``
        # takes what was folded here): committed, the game has moved on
        signed = await self.db.commit(done.batch, {game.game_id: done})
        answer = await self._accepted(game, done.rows[0], viewer, False)
        return replace(answer, receipts=self.receipts(done.rows, signed))

    async def _accepted(self, game: LiveGame, row: Row, viewer: Viewer, replayed: bool) -> Accepted:
        """A recorded command as its sender may see it (everything once the record is
        public: the game is over, and not held back).  Whether it is public is asked only
        when the answer depends on it: a fact of the row its sender would not see while
        the game runs, in a game that is over."""
        facts = game.facts[row.seq - 1]
        shown = facts_for(viewer, facts, public=False)
        if len(shown) < len(facts) and game.over:
            shown = facts_for(viewer, facts, (await self.replays.released(game)).public)
        return Accepted(row, shown, game.over, replayed, typed.member_of(game.engine.spec.kind))

    async def _reject(self, game: LiveGame, sent: Sent, error: Exception) -> None:
        """Store a refusal, unless its sender is past its budget (then only counted).

        The budget is the credential's, over every game: a seat token sent to a hundred
        other games has its refusals stored no faster than in its own game alone.
        """
        _, reason, _, metadata = refusal_of(error)
        self.refused[reason, metadata.get("rule_id", "")] += 1
        sender = sent.caller.label(game.game_id)
        unstored = self.refusals.take(sent.caller.holder)
        if unstored is not None:
            foreign = sent.caller.from_another_game(game.game_id)
            refused = commands.refusal(
                game,
                sender,
                sent.command_id,
                sent.body,
                error,
                unstored,
                self.clock().now(),
                foreign,
            )
            await self.db.commit(Batch(rejections=[refused]))

    async def seat_link(self, caller: Caller, game_id: str, seat: int) -> str:
        """A one-time code for a seat's page (the organiser's, or the seat's own)."""
        if not (caller.role == "seat" and caller.game_id == game_id and caller.seat == seat):
            caller.require_organiser()
        waiting = await self.waiting_game(game_id)
        genesis = (
            waiting.draft if waiting is not None else (await self.source.game(game_id)).genesis
        )
        if not 0 <= seat < len(genesis.seats):
            raise BadRequest(f"this game has seats 0 to {len(genesis.seats) - 1}", field="seat")
        return await self.seat_links.mint(game_id, seat)

    async def watch(self, caller: Caller, game_id: str, from_seq: int) -> Watching:
        """Every row from ``from_seq`` on, stored then live, as the caller may see it, until
        the caller's credential no longer stands (``held``)."""
        first = first_seq(from_seq)
        game = await self.source.game(game_id)
        steps = _follow(game, caller.viewer(game_id), first, self.replays)
        return Watching(
            game.genesis,
            game.pack,
            typed.member_of(game.engine.spec.kind),
            self.source.held(caller, steps),
            game,
        )


def ends(command: record_pb2.Command) -> bool:
    """Whether a command is a ruling that ends its game (void or close)."""
    if command.WhichOneof("game") != "arbiter":
        return False
    return command.arbiter.WhichOneof("ruling") in ("void_game", "close_game")


def _next_of(_: EventStore, games: Iterator[StoredGame]) -> StoredGame | None:
    """The next game of a scan, on the read thread (None at its end)."""
    return next(games, None)


async def _follow(
    game: LiveGame, viewer: Viewer, from_seq: int, reads: Replays
) -> AsyncIterator[Step]:
    """A game's rows from ``from_seq`` as ``viewer`` saw them, then each new one.

    Each row is made when the stream asks for it (what waits for a reader that does not
    read is one wake-up), and once the game is over its last rows are shown as ``reads``
    releases the record (held back: as while it ran).
    """
    queue: asyncio.Queue[None] = asyncio.Queue(1)
    game.watchers.add(queue)
    try:
        next_seq = from_seq
        public: bool | None = None  # asked once the game is over (its last rows depend on it)
        while True:
            while next_seq <= game.last_seq:
                if public is None and game.over:
                    public = (await reads.released(game)).public
                yield seen(game, next_seq, viewer, bool(public))
                next_seq += 1
            if game.over:
                return
            await queue.get()
    finally:
        game.watchers.discard(queue)
