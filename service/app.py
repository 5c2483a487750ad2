"""The application: create games, take commands, answer views, feed watchers.

Each method is load, decide, save: the rules decide (replay/), the database saves
(service/store.py via service/live.py); this module only orders the steps.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from google.protobuf.message import Message

from feastlog.v1 import record_pb2
from replay import fold
from replay.engine import (
    ARBITER,
    Fact,
    MalformedCommand,
    RuleViolation,
    Viewer,
    capped,
    fact_visible,
)
from replay.fold import Table, state_hash, wrap_command
from replay.games import engine as engine_of
from replay.history import begin, new_genesis, record_version
from replay.record import COMMAND, CURRENT_VERSION, SEED_REVEAL, Row, make_row
from replay.standings import Standing
from service.auth import Caller, Credentials, new_seat_token, token_sha256
from service.errors import (
    AlreadyStarted,
    BadRequest,
    CommandIdReused,
    EntropyAlreadySent,
    GameNotFound,
    PermissionDenied,
    StaleSeq,
    StoreConflict,
    WaitingForEntropy,
    describe,
)
from service.limits import Refolds, RefusalBudget, stored_refusal
from service.live import Database, LiveGame, live_from_store, utc_now
from service.projection import Ending, KindStats, outcome_rows
from service.store import Batch, Listed, NewGame, Rejection, Store

T = TypeVar("T")


@dataclass(frozen=True)
class Created:
    """A new game: its genesis and the seat tokens (shown once)."""

    genesis: record_pb2.Genesis
    tokens: tuple[str, ...]


@dataclass(frozen=True)
class Accepted:
    """A recorded command: its row, the facts the caller may see, and whether it was a retry."""

    row: Row
    facts: tuple[Fact, ...]
    game_over: bool
    replayed: bool


@dataclass(frozen=True)
class Step:
    """One row as a viewer may see it."""

    row: Row
    command: record_pb2.Command | None
    facts: tuple[Fact, ...]
    view: dict[str, Any]


def visible_facts(facts: Sequence[Fact], viewer: Viewer, public: bool) -> tuple[Fact, ...]:
    """The facts ``viewer`` may see (everything once the record is public)."""
    return tuple(f for f in facts if public or fact_visible(f, viewer))


def step_for(game: LiveGame, seq: int, viewer: Viewer) -> Step:
    """Row ``seq`` of a live game as ``viewer`` saw it then (all of it from the seed reveal on)."""
    row, table = game.rows[seq - 1], game.tables[seq - 1]
    # the record becomes public with the reveal row, not before: a replay of a finished
    # game as a seat shows what that seat saw at each seq
    public = row.kind == SEED_REVEAL
    command = None
    if row.kind == COMMAND:
        decoded = record_pb2.Command.FromString(row.body)
        if public or _command_visible(game, row.actor, decoded, viewer):
            command = decoded
    view = game.engine.view(table.game, ARBITER if public else viewer)
    return Step(row, command, visible_facts(game.facts[seq - 1], viewer, public), view)


def _command_visible(
    game: LiveGame, actor: str, command: record_pb2.Command, viewer: Viewer
) -> bool:
    which = command.WhichOneof("game")
    if which == "arbiter" or viewer.role == "arbiter" or actor == str(viewer):
        return True
    inner: Message = getattr(command, which or "")
    return game.engine.command_public(inner)


@dataclass(frozen=True)
class Summary:
    """One line of the game list (the fields of feastlog.v1.GameSummary)."""

    game_id: str
    game_kind: str
    players: list[str]
    last_seq: int
    over: bool
    created_at: str
    waiting_for_entropy: bool = False
    tournament_id: str = ""


PAGE_SIZE = 50  # games per page of the list when the caller does not say
MAX_PAGE_SIZE = 500


def page_token(listed: Listed) -> str:
    """The opaque token of the page after ``listed``: its place in the game list."""
    return base64.urlsafe_b64encode(f"n{listed.n}".encode()).decode()


def place_of(token: str) -> int:
    """The place a page token stands for (0: the first page); BadRequest if not a token."""
    if not token:
        return 0
    try:
        text = base64.urlsafe_b64decode(token.encode()).decode()
        place = int(text.removeprefix("n")) if text.startswith("n") else -1
    except (binascii.Error, UnicodeError, ValueError):
        place = -1
    if place <= 0:
        raise BadRequest("page_token is not one this server gave out", field="page_token")
    return place


@dataclass
class Pending:
    """A game waiting for seat entropy: its draft genesis, seed, pack and what was sent."""

    draft: record_pb2.Genesis
    server_seed: bytes
    pack: Any
    entropy: dict[int, bytes]
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


# Finished games kept folded in memory (most recently used); running games always are.
FINISHED_KEPT = 256


class Games:
    """Every game on this server."""

    def __init__(self, db: Database, credentials: Credentials) -> None:
        self.db = db
        self.credentials = credentials
        self._live: dict[str, LiveGame] = {}
        self._finished: OrderedDict[str, None] = OrderedDict()
        self._loading: dict[str, asyncio.Future[LiveGame]] = {}
        self._pending: dict[str, Pending] = {}
        self._heads: dict[str, int] = {}  # last seq of running games not folded in memory
        self._finishing: set[asyncio.Task[Any]] = set()
        self.refusals = RefusalBudget()
        self.refolds = Refolds()

    async def get(self, game_id: str) -> LiveGame:
        """The live game, folded from the store the first time it is needed."""
        if not game_id:
            raise BadRequest("game_id is required", field="game_id")
        waiting = self._pending.get(game_id)
        if waiting is not None:
            missing = [i for i in range(len(waiting.draft.seats)) if i not in waiting.entropy]
            names = ", ".join(waiting.draft.seats[i].name for i in missing)
            raise WaitingForEntropy(
                f"the game starts once every seat has sent its entropy; waiting for {names}",
                waiting_for=",".join(str(i) for i in missing),  # seat numbers, as JoinGame's
            )
        game = self._live.get(game_id)
        if game is None:
            loading = self._loading.get(game_id)
            if loading is None:
                loading = self._loading[game_id] = asyncio.ensure_future(self._load(game_id))
                loading.add_done_callback(lambda _: self._loading.pop(game_id, None))
            game = await asyncio.shield(loading)
        self._settle(game)
        return game

    async def _load(self, game_id: str) -> LiveGame:
        """Read a cold game on the read connection and fold it in a worker thread.

        Neither the read nor the fold runs on the event loop or the writer's thread, so
        a game being loaded holds up no other game.
        """
        stored = await self.db.read(Store.load, game_id)
        if stored is None:
            raise GameNotFound(f"there is no game {game_id!r}", game_id=game_id)
        game = self._live.get(game_id)  # created here while it was read
        if game is None:
            game = self._live[game_id] = await asyncio.to_thread(live_from_store, stored)
            self._heads.pop(game_id, None)
        return game

    def _settle(self, game: LiveGame) -> None:
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

    def loaded(self) -> int:
        """How many games are folded in memory now."""
        return len(self._live)

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
        self.credentials.organiser(caller)
        engine = engine_of(kind)
        names = [p.strip() for p in players]
        if not engine.min_seats <= len(names) <= engine.max_seats:
            raise BadRequest(
                f"{engine.title} is for {engine.min_seats} to {engine.max_seats} players, "
                f"not {len(names)}",
                field="players",
                rule_id=engine.seats_rule,
            )
        if any(not n for n in names) or len(set(names)) != len(names):
            raise BadRequest("player names must be non-empty and different", field="players")
        unknown = sorted(set(options) - set(engine.option_defaults))
        if unknown:
            raise BadRequest(f"unknown rule option {unknown[0]!r}", field="options")
        if seed and len(seed) != 32:
            raise BadRequest("a supplied seed is 32 bytes", field="seed")
        pack_bytes = pack_bytes or engine.default_pack_bytes()
        pack = engine.load_pack(pack_bytes)
        server_seed = seed or secrets.token_bytes(32)
        game_id = "g_" + secrets.token_hex(8)
        genesis = new_genesis(
            game_id,
            kind,
            names,
            options,
            pack_bytes,
            pack,
            server_seed,
            utc_now(),
            seed_supplied=bool(seed),
            tournament_id=tournament_id,
        )
        row, table, facts = self._first_row(genesis, server_seed, pack)
        tokens = tuple(new_seat_token() for _ in names)
        new = NewGame(
            None if seat_entropy else row,
            [(n, token_sha256(t)) for n, t in zip(names, tokens, strict=True)],
            server_seed,
            genesis.pack_sha256,
            kind,
            genesis.pack_id,
            pack_bytes,
            game_id,
            genesis.SerializeToString(deterministic=True) if seat_entropy else b"",
        )

        async def record() -> Created:
            await self.db.commit(Batch(games=[new]))
            if seat_entropy:
                self._pending[game_id] = Pending(genesis, server_seed, pack, {})
            else:
                self._go_live(genesis, server_seed, pack, row, table, facts)
            for seat, token in enumerate(tokens):
                self.credentials.add_seat(token, game_id, seat)
            return Created(genesis, tokens)

        return await self._to_the_end(record())

    @staticmethod
    def _first_row(
        genesis: record_pb2.Genesis, server_seed: bytes, pack: Any
    ) -> tuple[Row, Table, list[Fact]]:
        """Set the game up: the genesis row, the table and the facts of setting up."""
        try:
            return begin(genesis, server_seed, pack)
        except (ValueError, RuleViolation, MalformedCommand) as bad:
            # setup validates the rule options; a bad value is a bad request, not a move
            rule = {"rule_id": bad.rule_id} if isinstance(bad, RuleViolation) else {}
            raise BadRequest(f"bad rule option: {bad}", field="options", **rule) from bad

    def _go_live(
        self,
        genesis: record_pb2.Genesis,
        server_seed: bytes,
        pack: Any,
        row: Row,
        table: Table,
        facts: list[Fact],
    ) -> None:
        """Keep a just-started game folded in memory."""
        engine = engine_of(genesis.game_kind)
        names = tuple(s.name for s in genesis.seats)
        game = LiveGame(genesis, engine, pack, server_seed, names, [], [], [])
        game.advance([row], [table], [tuple(facts)])
        self._live[genesis.game_id] = game

    async def summaries(
        self, kind: str = "", limit: int = 0, tournament_id: str = "", token: str = ""
    ) -> tuple[list[Summary], str]:
        """A page of the game list, newest first, and the token of the next page ('' at the end).

        Pages follow the order games were created in, so paging covers every game
        listed when it began exactly once, however many are created meanwhile.
        """
        if limit < 0:
            raise BadRequest("page_size is 0 (the default) or more", field="page_size")
        size = min(limit or PAGE_SIZE, MAX_PAGE_SIZE)
        before = place_of(token)
        found = await self.db.read(Store.listed, kind, tournament_id, before, size + 1)
        page = found[:size]
        lines = [await self._summary(listed) for listed in page]
        return lines, page_token(page[-1]) if len(found) > size else ""

    async def _summary(self, listed: Listed) -> Summary:
        """A list line: finished games from the projection, running ones from memory."""
        pending = listed.game_id in self._pending
        if listed.rows is not None:
            last_seq, over = listed.rows, True
        elif pending:
            last_seq, over = 0, False
        elif listed.game_id in self._live:
            game = self._live[listed.game_id]
            last_seq, over = game.last_seq, game.over
        else:  # a running game not folded since start: its last seq, by index, kept
            last_seq = self._heads.get(listed.game_id, 0)
            if not last_seq:
                last_seq = await self.db.read(Store.last_seq, listed.game_id)
                self._heads[listed.game_id] = last_seq
            over = False
        return Summary(
            listed.game_id,
            listed.game_kind,
            list(listed.players),
            last_seq,
            over,
            listed.created_at,
            pending,
            listed.tournament_id,
        )

    async def standings(self, tournament_id: str) -> tuple[list[Standing], int, int]:
        """A tournament's standings from its finished games: (lines, finished, running).

        SQL over the outcomes projection, which holds every finished game.
        """
        if not tournament_id:
            raise BadRequest("tournament_id is required", field="tournament_id")
        listed = await self.db.read(Store.tournament_games, tournament_id)
        if not listed:
            raise GameNotFound(f"there is no game in tournament {tournament_id!r}")
        lines, finished = await self.db.read(Store.standings, tournament_id)
        return lines, finished, listed - finished

    async def stats(self, tournament_id: str = "") -> list[KindStats]:
        """Per game kind: games, win rate by seat, a figure; SQL over the projection."""
        return await self.db.read(Store.stats, tournament_id)

    async def load_pending(self) -> None:
        """Take up the games still waiting for seat entropy (at server start)."""
        for stored in await self.db.call(self.db.store.pending):
            draft = record_pb2.Genesis.FromString(stored.draft)
            # none of its rows is written yet, so it starts in the current record format
            draft.record_version = draft.record_version or CURRENT_VERSION
            pack = engine_of(draft.game_kind).load_pack(stored.pack_body)
            self._pending[stored.game_id] = Pending(
                draft, stored.server_seed, pack, dict(stored.entropy)
            )

    async def join(self, caller: Caller, game_id: str, entropy: bytes) -> tuple[bool, list[int]]:
        """Take one seat's entropy; start the game when every seat has sent its own."""
        pending = self._pending.get(game_id)
        if pending is None:
            await self.get(game_id)  # NOT_FOUND for an unknown game
            raise AlreadyStarted("this game has started: seat entropy comes before the deal")
        actor = caller.actor(game_id)
        if actor == "arbiter":
            raise PermissionDenied("seat entropy comes from the seats, with their tokens")
        if not 1 <= len(entropy) <= 1024:
            raise BadRequest("entropy is 1 to 1024 bytes", field="entropy")
        seat = int(actor.removeprefix("seat:"))
        return await self._to_the_end(self._join(pending, game_id, seat, entropy))

    async def _join(
        self, pending: Pending, game_id: str, seat: int, entropy: bytes
    ) -> tuple[bool, list[int]]:
        async with pending.lock:
            if game_id not in self._pending:
                raise AlreadyStarted("this game has started: seat entropy comes before the deal")
            sent = pending.entropy.get(seat)
            if sent is not None and sent != entropy:
                raise EntropyAlreadySent(f"seat {seat} has already sent its entropy")
            given = {**pending.entropy, seat: entropy}
            waiting = [s for s in range(len(pending.draft.seats)) if s not in given]
            if sent is not None:
                return False, waiting
            batch = Batch(entropy=[(game_id, seat, entropy)])
            genesis = record_pb2.Genesis()
            genesis.CopyFrom(pending.draft)
            genesis.seat_entropy.extend(given[s] for s in sorted(given))
            if not waiting:
                row, table, facts = self._first_row(genesis, pending.server_seed, pending.pack)
                batch.rows.append(row)
                batch.started.append(game_id)
            await self.db.commit(batch)
            pending.entropy = given
            if not waiting:
                self._go_live(genesis, pending.server_seed, pending.pack, row, table, facts)
                del self._pending[game_id]
        return not waiting, waiting

    async def submit(
        self,
        caller: Caller,
        game_id: str,
        command_id: str,
        expected_seq: int | None,
        command: record_pb2.Command,
    ) -> Accepted:
        """Check a command against the rules and record it; refusals are recorded too."""
        game = await self.get(game_id)
        if command.WhichOneof("game") == "arbiter" and caller.role in ("organiser", "arbiter"):
            # the record says who ruled, from the credential; whatever was sent is replaced
            signed = record_pb2.Command()
            signed.CopyFrom(command)
            signed.arbiter.ruled_by = caller.ruled_by
            command = signed
        body = command.SerializeToString(deterministic=True)
        return await self._to_the_end(
            self._submit(game, caller, command_id, expected_seq, command, body)
        )

    async def _to_the_end(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` to its end whatever happens to the caller.

        Once a command is queued, its commit and the advance in memory are the commit's
        business: a deadline or a cancellation only means the caller misses the answer,
        and a retry with the same command_id is answered ``replayed``.
        """
        task = asyncio.create_task(work)
        self._finishing.add(task)
        task.add_done_callback(self._forget)
        return await asyncio.shield(task)

    def _forget(self, task: asyncio.Task[Any]) -> None:
        self._finishing.discard(task)
        if not task.cancelled():
            task.exception()  # its caller may be gone; the error went to it if it was there

    async def drain(self) -> None:
        """Wait for every command already taken to be recorded (graceful shutdown)."""
        while self._finishing:
            await asyncio.wait(set(self._finishing))

    async def _submit(
        self,
        game: LiveGame,
        caller: Caller,
        command_id: str,
        expected_seq: int | None,
        command: record_pb2.Command,
        body: bytes,
    ) -> Accepted:
        async with game.lock:
            try:
                actor, viewer = caller.actor(game.game_id), caller.viewer(game.game_id)
                try:
                    return await self._decide(
                        game, actor, viewer, command_id, expected_seq, command, body
                    )
                except StoreConflict:
                    # memory was behind the log: take the log as the truth and decide again
                    await self._reload(game)
                    return await self._decide(
                        game, actor, viewer, command_id, expected_seq, command, body
                    )
            except (
                RuleViolation,
                MalformedCommand,
                StaleSeq,
                CommandIdReused,
                PermissionDenied,
            ) as error:
                await self._reject(game, caller.label(game.game_id), command_id, body, error)
                raise

    async def _reload(self, game: LiveGame) -> None:
        """Fold a game from the store again, so memory and log agree."""
        stored = await self.db.call(self.db.store.load, game.game_id)
        if stored is not None:
            game.reload(stored)

    async def _decide(
        self,
        game: LiveGame,
        actor: str,
        viewer: Viewer,
        command_id: str,
        expected_seq: int | None,
        command: record_pb2.Command,
        body: bytes,
    ) -> Accepted:
        if (actor, command_id) in game.command_ids:
            return self._retry(game, command_id, body, actor, viewer)
        if expected_seq is not None and expected_seq != game.last_seq:
            raise StaleSeq(
                f"the game is at seq {game.last_seq}, not {expected_seq}",
                last_seq=str(game.last_seq),
            )
        if (command.WhichOneof("game") == "arbiter") != (actor == "arbiter"):
            raise PermissionDenied("rulings need the organiser key; moves need a seat token")
        if not game.may_continue():
            fold.check_open(game.table)  # raises, citing the game's end rule or the closure
        table, facts = fold.step(game.table, actor, command)
        now = utc_now()
        row = make_row(
            game.game_id,
            game.last_seq + 1,
            COMMAND,
            actor,
            body,
            now,
            game.rows[-1].hash,
            state_hash(table),
            command_id,
            version=record_version(game.genesis),  # a game keeps the format it began in
            server_seed=game.server_seed,
        )
        rows, tables, all_facts = [row], [table], [tuple(facts)]
        batch = Batch(rows=rows)
        if fold.is_over(table):
            reveal = self._reveal_row(game, row, table, now)
            rows.append(reveal)
            tables.append(table)
            all_facts.append(({"type": "seed_revealed", "server_seed": game.server_seed.hex()},))
            # the outcome rows go in with the row that ends the game, in the same commit
            ending = Ending(game.genesis, table, [*game.facts, *all_facts], reveal.seq)
            batch.outcomes = outcome_rows(ending)
        await self.db.commit(batch)
        game.advance(rows, tables, all_facts)
        self._settle(game)
        public = game.over
        return Accepted(row, visible_facts(facts, viewer, public), public, False)

    def _reveal_row(self, game: LiveGame, after: Row, table: Table, now: str) -> Row:
        body = record_pb2.SeedReveal(server_seed=game.server_seed).SerializeToString()
        return make_row(
            game.game_id,
            after.seq + 1,
            SEED_REVEAL,
            "server",
            body,
            now,
            after.hash,
            state_hash(table),
            version=record_version(game.genesis),
        )

    def _retry(
        self, game: LiveGame, command_id: str, body: bytes, actor: str, viewer: Viewer
    ) -> Accepted:
        seq = game.command_ids[actor, command_id]
        row = game.rows[seq - 1]
        if row.body != body:
            raise CommandIdReused(
                f"you used command_id {command_id!r} for another command at seq {seq}",
                seq=str(seq),
            )
        facts = visible_facts(game.facts[seq - 1], viewer, game.over)
        return Accepted(row, facts, game.over, True)

    async def _reject(
        self, game: LiveGame, actor: str, command_id: str, body: bytes, error: Exception
    ) -> None:
        """Store a refusal, bounded, unless its sender is past its budget (then only counted)."""
        code, reason, message, metadata = describe(error)
        unstored = self.refusals.take(game.game_id, actor)
        if unstored is None:
            return
        body, message = stored_refusal(body, message, unstored)
        rejected = Rejection(
            game.game_id,
            game.last_seq,
            actor,
            command_id,
            body,
            code.name,
            reason,
            metadata.get("rule_id", ""),
            message,
            utc_now(),
        )
        await self.db.commit(Batch(rejections=[rejected]))

    async def view(self, caller: Caller, game_id: str) -> tuple[LiveGame, Viewer, dict[str, Any]]:
        """The game now as the caller may see it."""
        game = await self.get(game_id)
        viewer = caller.viewer(game_id)
        return game, viewer, game.engine.view(game.table.game, viewer)

    async def legal(
        self, caller: Caller, game_id: str
    ) -> tuple[int, list[record_pb2.Command], bool]:
        """The commands the caller's seat may send now (up to LEGAL_CAP), and if partial."""
        game = await self.get(game_id)
        actor = caller.actor(game_id)
        if actor == "arbiter" or not game.may_continue():
            return game.last_seq, [], False
        seat = int(actor.removeprefix("seat:"))
        inner, partial = capped(game.engine.legal_commands(game.table.game, seat))
        commands = [wrap_command(game.engine.command_field, c) for c in inner]
        return game.last_seq, commands, partial

    async def watch(self, caller: Caller, game_id: str, from_seq: int) -> AsyncIterator[Step]:
        """Every row from ``from_seq`` on, stored then live, as the caller may see it."""
        game = await self.get(game_id)
        viewer = caller.viewer(game_id)
        queue: asyncio.Queue[int] = asyncio.Queue()
        game.watchers.add(queue)
        try:
            next_seq = max(from_seq, 1)
            while True:
                while next_seq <= game.last_seq:
                    yield step_for(game, next_seq, viewer)
                    next_seq += 1
                if game.over:
                    return
                await queue.get()
        finally:
            game.watchers.discard(queue)
