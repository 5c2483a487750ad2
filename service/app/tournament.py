"""The tournament use cases: create, register, drop, pair, swap, fix, publish, the round
clock, penalties, results from the games, end; and the reads (state and standings at any
seq, the rows, watching).  Each is load → decide (``replay.tournament``) → save.

A tournament is a record in the same log as its games (``replay/tournament/record.py``):
its rows are written through the same writer, one tournament at a time under its lock.
Publishing a round writes every table's game and the publish row in one commit, and
calling time writes the call, a ruling in every unfinished game and the results in one
(``timecall``).  A game's end reaches its tournament's stream as a result row: when the
stream of committed rows brings its seed reveal, on any node (``committed``), whenever
the tournament is next read or changed, and at every start (``_catch_up``, ``resume``).

Memory follows the store, not the answer: every write (and every catch-up a read makes)
runs under the tournament's lock to its end whatever happens to its caller
(``Tournaments._write``, the games' ``ToTheEnd``), so a deadline or a
cancellation only means the caller misses the answer; a commit that fails leaves the
tournament to be read again from the store before its next write.  A published round's
seat tokens are derived from the organiser key (``auth.derived_seat_token``), so that a
retry of a PublishRound whose answer was lost is given the same tokens.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from feastlog.replay.games.engine import ARBITER as ARBITER_VIEW
from feastlog.replay.games.engine import SPECTATOR, RuleViolation, SetupRefused
from feastlog.replay.record.rows import ARBITER, COMMAND, SEED_REVEAL, SERVER, Row
from feastlog.replay.record.visibility import sees_all
from feastlog.replay.tournament import pairing
from feastlog.replay.tournament.export import export_text
from feastlog.replay.tournament.record import (
    command_row,
    fold_rows,
    genesis_row,
    is_tournament,
    new_genesis,
    reveal_row,
    round_seed,
    table_result,
)
from feastlog.replay.tournament.spec import (
    EXTENSION_MINUTES,
    ID_PREFIX,
    KIND,
    ROUND_MINUTES,
    read_format,
)
from feastlog.replay.tournament.standings import Line, standings
from feastlog.replay.tournament.state import Round, Tournament
from feastlog.service.app import commands, timecall
from feastlog.service.app.auth import Caller, token_sha256
from feastlog.service.app.errors import (
    BadRequest,
    GameNotFound,
    PermissionDenied,
    Unauthenticated,
)
from feastlog.service.store import Batch, NewGame, StoreConflict
from feastlog.service.store.port import EventStore
from feastlog.service.store.stream import Committed
from feastlog.v1 import record_pb2
from feastlog.v1 import tournament_record_pb2 as tpb

log = logging.getLogger("feastlog")
LISTED_PAGE = 200  # tournaments listed at a time at start
M = TypeVar("M", bound=Callable[..., Any])
T = TypeVar("T")

if TYPE_CHECKING:
    from feastlog.service.app.auth import Credentials
    from feastlog.service.app.clock import Clock
    from feastlog.service.app.games import Games, LiveRecords, ToTheEnd
    from feastlog.service.app.reads import Replays
    from feastlog.service.store.writer import Database


def _named_rule(method: M) -> M:
    """A refusal of the tournament's rules says its rule id in its words too
    (``TOUR-SWAP: a swap takes two different players``), as `feastlog rules tournament`
    lists them; the id is in the error's metadata as for every refusal."""

    @functools.wraps(method)
    async def named(*args: Any, **kwargs: Any) -> Any:
        try:
            return await method(*args, **kwargs)
        except RuleViolation as refused:
            if refused.message.startswith(refused.rule_id):
                raise
            words = f"{refused.rule_id}: {refused.message}"
            if isinstance(refused, SetupRefused):
                raise SetupRefused(refused.rule_id, refused.field, words) from None
            raise RuleViolation(refused.rule_id, words) from None

    return named  # type: ignore[return-value]


@dataclass
class Live:
    """A tournament folded in memory: its rows, the state after each, its seed."""

    rows: list[Row]
    states: list[Tournament]
    server_seed: bytes
    pack: bytes
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    moved: asyncio.Condition = field(default_factory=asyncio.Condition)
    stale: bool = False  # a commit failed: the store, not memory, says what was written

    @property
    def state(self) -> Tournament:
        """The tournament now."""
        return self.states[-1]

    @property
    def tournament_id(self) -> str:
        """The tournament's id (its genesis row's)."""
        return self.rows[0].game_id


@dataclass(frozen=True)
class Seat:
    """A published seat: the table, the seat, the player, the game and its token."""

    table: int
    seat: int
    name: str
    game_id: str
    token: str


@dataclass(frozen=True)
class Published:
    """A published round as PublishRound answers it: the tournament, every seat with its
    token, and whether this answers a retry (the round had been published already)."""

    state: Tournament
    seats: list[Seat]
    replayed: bool


@dataclass(frozen=True)
class PublishedRound:
    """A published round, with the tournament after it as every call answers it."""

    tournament: Snapshot
    seats: list[Seat]
    replayed: bool


@dataclass(frozen=True)
class TournamentExport:
    """A tournament's record with its games' (``export_tournament``), and its file's name."""

    document: str
    file_name: str


@dataclass(frozen=True)
class Snapshot:
    """A tournament at a seq: its state, standings, and the rows up to it."""

    seq: int
    last_seq: int
    state: Tournament
    standings: list[Line]
    rows: tuple[Row, ...]
    seed_commitment: str


class Tournaments:
    """Every tournament of a server, over its application."""

    def __init__(
        self,
        db: Database,
        source: LiveRecords,
        replays: Replays,
        games: Games,
        credentials: Credentials,
        finishing: ToTheEnd,
        clock: Callable[[], Clock],
    ) -> None:
        self.db = db
        self.source = source  # its streams end when a credential no longer stands
        self.live = source.live
        self.replays = replays  # how open a finished game's record is
        self.games = games  # a published round's games, taken in as any new game
        self.credentials = credentials
        self.finishing = finishing
        self.clock = clock  # the application's, asked each time (a test may set another)
        self._live: dict[str, Live] = {}
        self._taking: set[asyncio.Task[None]] = set()

    def now(self) -> str:
        """The time now, on the application's clock (a test's ``ManualClock``)."""
        return self.clock().now()

    def committed(self, commit: Committed) -> None:
        """The stream's rows: a game of a tournament that ended (on this node or another,
        by a move, a ruling or a time-out) has its result taken into its tournament; a
        tournament held here that another node wrote to is read again before its next
        write."""
        for row in commit.rows:
            if row.game_id in self._live and not commit.local:
                self._live[row.game_id].stale = True
            if row.kind != SEED_REVEAL:
                continue
            game = self.live.peek(row.game_id)
            if game is not None:
                self.ended_soon(game.genesis.tournament_id, self.now())
                continue
            for tid, live in self._live.items():  # a game not folded here, of a tournament that is
                current = live.state.current
                if current is not None and row.game_id in current.game_ids:
                    self.ended_soon(tid, self.now())

    def ended_soon(self, tid: str, now: str) -> None:
        """Take a game's result into its tournament after the command that ended it has
        been answered (a failure here leaves it to the next catch-up)."""
        if not tid.startswith(ID_PREFIX):
            return
        task = asyncio.create_task(self.game_ended(tid, now))
        self._taking.add(task)
        task.add_done_callback(_taken)
        task.add_done_callback(self._taking.discard)

    @_named_rule
    async def create_tournament(
        self,
        caller: Caller,
        options: Mapping[str, str],
        players: Sequence[str],
        now: str | None = None,
    ) -> Snapshot:
        """A new tournament: its genesis (format, seed commitment), and its first players;
        the tournament as it is then."""
        _creates(caller)
        now = now or self.now()
        read_format(options)
        pack = b""  # the tournament's own record has no pack: each game's record holds its own
        seed = secrets.token_bytes(32)
        tid = ID_PREFIX + secrets.token_hex(8)
        genesis = new_genesis(tid, options, seed, now, "", _sha(pack))
        first, state = genesis_row(genesis)
        rows, states = [first], [state]
        for name in players:
            register = tpb.TournamentCommand(register=tpb.RegisterPlayer(name=name), by="organiser")
            row, state = command_row(rows[-1], state, register, ARBITER, now, seed)
            rows.append(row)
            states.append(state)
        stored = NewGame(first, [], seed, genesis.pack_sha256, genesis.game_kind, "", pack, tid)
        live = Live(rows, states, seed, pack)
        await self.finishing.run(self._created(live, Batch(games=[stored], rows=rows[1:])))
        return await self.snapshot(tid)

    async def _created(self, live: Live, batch: Batch) -> Tournament:
        await self.db.commit(batch)
        self._live[live.tournament_id] = live
        return live.state

    async def _load(self, tid: str) -> Live:
        if not tid:
            raise BadRequest("tournament_id is required", field="tournament_id")
        found = self._live.get(tid)
        if found is not None:
            return found
        stored = await self.db.call(self.db.store.load, tid)
        if stored is None or not is_tournament(record_pb2.Genesis.FromString(stored.rows[0].body)):
            raise GameNotFound(f"there is no tournament {tid!r}", game_id=tid)
        states = await asyncio.to_thread(fold_rows, stored.rows)
        return self._live.setdefault(
            tid, Live(list(stored.rows), states, stored.server_seed, stored.pack_body)
        )

    async def _write(self, tid: str, work: Callable[[Live], Awaitable[T]]) -> T:
        """Run ``work`` on tournament ``tid`` under its lock, to its end whatever happens
        to the caller: once a write is taken, its commit and the move in memory are the
        commit's business (``ToTheEnd``, as a game's command), and the caller
        that stops waiting only misses the answer."""
        return await self.finishing.run(self._locked(tid, work))

    async def _locked(self, tid: str, work: Callable[[Live], Awaitable[T]]) -> T:
        live = await self._load(tid)
        async with live.lock:
            if live.stale:
                await self._reload(live)
            return await work(live)

    async def _reload(self, live: Live) -> None:
        """Take the tournament's rows from the store again (a commit failed: its rows may
        be there all the same, e.g. a connection lost after the store committed)."""
        stored = await self.db.call(self.db.store.load, live.tournament_id)
        assert stored is not None  # a tournament's rows are never deleted
        live.states = await asyncio.to_thread(fold_rows, stored.rows)
        live.rows = list(stored.rows)
        live.stale = False
        async with live.moved:
            live.moved.notify_all()

    async def _append(
        self,
        live: Live,
        commands_: Sequence[tuple[tpb.TournamentCommand, str]],
        now: str,
        extra: Batch | None = None,
        folded: Mapping[str, Any] | None = None,
    ) -> Tournament:
        """Fold commands (all or none) and commit their rows, with ``extra`` in the same
        commit (``folded``: what was folded for its rows, for the stream)."""
        rows, states = [live.rows[-1]], [live.state]
        for command, actor in commands_:
            row, state = command_row(rows[-1], states[-1], command, actor, now, live.server_seed)
            rows.append(row)
            states.append(state)
        return await self._save(live, rows[1:], states[1:], extra, folded)

    async def _save(
        self,
        live: Live,
        rows: Sequence[Row],
        states: Sequence[Tournament],
        extra: Batch | None,
        folded: Mapping[str, Any] | None = None,
    ) -> Tournament:
        """Commit new rows (with ``extra``), then move memory to them: memory never moves
        without the store, and a failed commit sends the next write to the store first."""
        batch = extra or Batch()
        batch.rows.extend(rows)
        try:
            await self.db.commit(batch, folded)
        except Exception:
            live.stale = True
            raise
        live.rows, live.states = [*live.rows, *rows], [*live.states, *states]
        async with live.moved:
            live.moved.notify_all()
        return live.state

    @_named_rule
    async def command(
        self, caller: Caller, tid: str, command: tpb.TournamentCommand, now: str | None = None
    ) -> Snapshot:
        """One organiser's or arbiter's command (register, drop, swap, fix, clock, penalty);
        the tournament after it."""
        _runs(caller)
        now = now or self.now()
        signed = tpb.TournamentCommand()
        signed.CopyFrom(command)
        signed.by = caller.ruled_by
        await self._write(tid, lambda live: self._command(live, signed, now))
        return await self.snapshot(tid)

    async def _command(self, live: Live, signed: tpb.TournamentCommand, now: str) -> Tournament:
        if signed.WhichOneof("action") == "call_time":  # the call, its rulings and results
            await self._catch_up(live, now, signed)
            return live.state
        await self._catch_up(live, now)
        return await self._append(live, [(signed, ARBITER)], now)

    # Each organiser's or arbiter's call, its command built here from the request's
    # values: each checks what the domain bounds (a table counts from 1, a clock's
    # minutes) before anything else, and a call that names no round takes the current
    # one (as the tournament is when the call comes).  Each passes ``command`` the time
    # on the application's clock as it sends it.

    async def register(self, caller: Caller, tid: str, name: str) -> Snapshot:
        """A player registers (before round 1, or between rounds with late entry)."""
        register = tpb.TournamentCommand(register=tpb.RegisterPlayer(name=name))
        return await self.command(caller, tid, register, self.now())

    async def drop_player(self, caller: Caller, tid: str, name: str, reason: str) -> Snapshot:
        """A player leaves the tournament."""
        drop = tpb.TournamentCommand(drop=tpb.DropPlayer(name=name), reason=reason)
        return await self.command(caller, tid, drop, self.now())

    async def swap(
        self, caller: Caller, tid: str, first: str, second: str, reason: str
    ) -> Snapshot:
        """Two players of the proposed round change seats."""
        swap = tpb.SwapPlayers(first=first, second=second)
        return await self.command(
            caller, tid, tpb.TournamentCommand(swap=swap, reason=reason), self.now()
        )

    async def fix(
        self, caller: Caller, tid: str, name: str, table: int, seat: int, reason: str
    ) -> Snapshot:
        """A player is put at a table and seat of the proposed round."""
        if table < 1 or seat < 0:
            raise BadRequest("table counts from 1 and seat from 0", field="table")
        fix = tpb.FixTable(name=name, table=table, seat=seat)
        return await self.command(
            caller, tid, tpb.TournamentCommand(fix=fix, reason=reason), self.now()
        )

    async def start_clock(self, caller: Caller, tid: str, minutes: int) -> Snapshot:
        """The current round's clock starts (``minutes``: 0 for the format's)."""
        low, high = ROUND_MINUTES
        if minutes and not low <= minutes <= high:
            raise BadRequest(
                f"minutes are {low} to {high}, or 0 for the format's round_minutes",
                field="minutes",
            )
        start = tpb.StartClock(round=await self.current_round(tid), minutes=minutes)
        return await self.command(caller, tid, tpb.TournamentCommand(start_clock=start), self.now())

    async def extend_clock(
        self, caller: Caller, tid: str, table: int, minutes: int, reason: str
    ) -> Snapshot:
        """More time for one table of the current round (0: every table)."""
        if table < 0:
            raise BadRequest("table is 0 (every table) or more", field="table")
        low, high = EXTENSION_MINUTES
        if not low <= minutes <= high:
            raise BadRequest(f"an extension is {low} to {high} minutes", field="minutes")
        extend = tpb.ExtendClock(round=await self.current_round(tid), table=table, minutes=minutes)
        command = tpb.TournamentCommand(extend_clock=extend, reason=reason)
        return await self.command(caller, tid, command, self.now())

    async def call_time(self, caller: Caller, tid: str) -> Snapshot:
        """Time is called on the current round (``_catch_up`` closes what still plays)."""
        call = tpb.CallTime(round=await self.current_round(tid))
        return await self.command(caller, tid, tpb.TournamentCommand(call_time=call), self.now())

    async def add_penalty(
        self, caller: Caller, tid: str, name: str, penalty: str, round_: int, reason: str
    ) -> Snapshot:
        """A penalty for a player in a round (0: the current one)."""
        if round_ < 0:
            raise BadRequest("round is 0 (the current one) or more", field="round")
        number = round_ or await self.current_round(tid)
        given = tpb.PlayerPenalty(name=name, penalty=penalty, round=number)
        return await self.command(
            caller, tid, tpb.TournamentCommand(penalty=given, reason=reason), self.now()
        )

    async def current_round(self, tid: str) -> int:
        """The number of the tournament's current round (1 before any is paired)."""
        current = (await self.snapshot(tid)).state.current
        return current.number if current is not None else 1

    @_named_rule
    async def pair(
        self,
        caller: Caller,
        tid: str,
        fixed: Sequence[Sequence[str]],
        byes: Sequence[str],
        now: str | None = None,
    ) -> Snapshot:
        """Propose the next round: the Swiss pairing derived from the seed (or the
        organiser's fixed pods, for a format of fixed pods); the tournament after it."""
        _runs(caller)
        at = now or self.now()
        await self._write(tid, lambda live: self._pair(caller, live, fixed, byes, at))
        return await self.snapshot(tid)

    async def _pair(
        self,
        caller: Caller,
        live: Live,
        fixed: Sequence[Sequence[str]],
        byes: Sequence[str],
        now: str,
    ) -> Tournament:
        await self._catch_up(live, now)
        state = live.state
        number = sum(1 for r in state.rounds if r.published) + 1
        if state.format.pairing == "fixed":
            if not fixed:
                raise BadRequest(
                    "a format of fixed pods takes the tables from the organiser", field="tables"
                )
            propose = tpb.ProposePairing(
                round=number,
                tables=[tpb.PairedTable(players=list(t)) for t in fixed],
                byes=list(byes),
                method="fixed",
            )
            return await self._append(live, [(_by(caller, propose), ARBITER)], now)
        if fixed:
            raise BadRequest(
                "a Swiss format derives its tables: swap or fix seats instead", field="tables"
            )
        current = state.current
        if current is not None and current.published and not current.complete:
            raise RuleViolation(
                "TOUR-PAIR-UNFINISHED",
                f"round {current.number} is not finished: every table needs its result first",
            )
        if number > state.format.rounds:
            raise RuleViolation(
                "TOUR-ROUNDS", f"the format has {state.format.rounds} rounds, all paired"
            )
        base = state if current is None or current.published else _without_proposal(state)
        derive = pairing.round_robin if state.format.pairing == "round_robin" else pairing.propose
        found = await asyncio.to_thread(derive, base, live.server_seed)
        propose = tpb.ProposePairing(
            round=number,
            tables=[tpb.PairedTable(players=list(t)) for t in found.tables],
            byes=list(found.byes),
            method=found.method,
            solver=found.solver,
            objective=found.objective,
            status=found.status,
        )
        return await self._append(live, [(_by(caller, propose, "server"), SERVER)], now)

    @_named_rule
    async def publish(self, caller: Caller, tid: str, now: str | None = None) -> PublishedRound:
        """Publish the proposed round: every table's game and the publish row, one commit.

        A round already published is answered again, ``replayed``, with the same seats and
        tokens: its answer may have been lost (a deadline, a dropped connection, a restart)."""
        _runs(caller)
        at = now or self.now()
        done = await self._write(tid, lambda live: self._publish(caller, live, at))
        return PublishedRound(await self.snapshot(tid), done.seats, done.replayed)

    async def _publish(self, caller: Caller, live: Live, now: str) -> Published:
        state = live.state
        current = state.current
        if current is not None and current.published:
            return Published(state, await self._seats_again(current), replayed=True)
        if current is None:
            raise RuleViolation("TOUR-NO-PROPOSAL", "no round is proposed: pair one first")
        fmt = state.format
        openings = [
            commands.open_game(
                fmt.game_kind,
                list(players),
                dict(fmt.game_options),
                round_seed(live.server_seed, current.number) if fmt.duplicate else b"",
                live.tournament_id,
                b"",
                fmt.seat_entropy,
                now,
                seat_token=self.credentials.seat_token,
            )
            for players in current.tables
        ]
        publish = tpb.PublishRound(
            round=current.number, game_ids=[o.genesis.game_id for o in openings]
        )
        batch = Batch(games=[o.stored for o in openings])
        made = commands.begun(openings)  # live here from their commit on
        state = await self._append(live, [(_by(caller, publish), ARBITER)], now, batch, made)
        seats = []
        for t, opening in enumerate(openings, start=1):
            self.games.opened(opening)
            for seat, token in enumerate(opening.tokens):
                name = opening.genesis.seats[seat].name
                seats.append(Seat(t, seat, name, opening.genesis.game_id, token))
        return Published(state, seats, replayed=False)

    async def _seats_again(self, round_: Round) -> list[Seat]:
        """A published round's seats with their tokens made again, each checked against
        the hash its game stored: a token that would not work is never handed out."""
        seats = [
            Seat(t, seat, name, game_id, self.credentials.seat_token(game_id, seat))
            for t, (game_id, players) in enumerate(
                zip(round_.game_ids, round_.tables, strict=True), start=1
            )
            for seat, name in enumerate(players)
        ]
        digests = [token_sha256(s.token) for s in seats]
        found = await self.db.read(lambda store: [store.seat_of_token(d) for d in digests])
        if any(f != (s.game_id, s.seat) for f, s in zip(found, seats, strict=True)):
            raise RuleViolation(
                "TOUR-TOKENS",
                f"round {round_.number} is published, but its seat tokens cannot be made "
                "again: they were made under another organiser key than the one this server "
                "holds now (or before tokens were derived from it); the tokens handed out "
                "still work, and CreateSeatLink gives any seat a link to its page",
            )
        return seats

    @_named_rule
    async def end(self, caller: Caller, tid: str, now: str | None = None) -> Snapshot:
        """End the tournament: the end row and the seed reveal; the tournament then."""
        _runs(caller)
        at = now or self.now()
        await self._write(tid, lambda live: self._end(caller, live, at))
        return await self.snapshot(tid)

    async def _end(self, caller: Caller, live: Live, now: str) -> Tournament:
        await self._catch_up(live, now)
        end = tpb.TournamentCommand(end=tpb.EndTournament(), by=caller.ruled_by)
        row, state = command_row(live.rows[-1], live.state, end, ARBITER, now, live.server_seed)
        reveal = reveal_row(row, state, live.server_seed, now)
        return await self._save(live, [row, reveal], [state, state], None)

    async def game_ended(self, tid: str, now: str) -> None:
        """A game of tournament ``tid`` ended: its result goes into the tournament's rows."""
        try:
            await self._write(tid, lambda live: self._catch_up(live, now))
        except GameNotFound:  # a game tagged like a tournament that is not one
            return

    async def places(self, tid: str) -> dict[str, int]:
        """A tournament's players by place in its standings (match points, then the
        format's tiebreaks: docs/tournament.md); empty when there is no such tournament
        on the record (games that only carry a tournament id as a tag)."""
        try:
            found = await self.snapshot(tid)
        except GameNotFound:
            return {}
        return {line.name: place for place, line in enumerate(found.standings)}

    async def get_tournament(self, caller: Caller, tid: str, at_seq: int = 0) -> Snapshot:
        """The tournament at a seq (0: now), for anyone: a tournament's stream is public."""
        return await self.snapshot(tid, at_seq)

    async def snapshot(self, tid: str, at_seq: int = 0, now: str | None = None) -> Snapshot:
        """The tournament at a seq (0: now): state, standings and rows; public to all."""
        if at_seq < 0:
            raise BadRequest("at_seq is 0 (now) or more", field="at_seq")
        at = now or self.now()
        rows, states = await self._write(tid, lambda live: self._caught_up(live, at))
        last = len(rows)
        seq = last if at_seq <= 0 else min(at_seq, last)
        state = states[seq - 1]
        commitment = record_pb2.Genesis.FromString(rows[0].body).seed_commitment
        return Snapshot(seq, last, state, standings(state), tuple(rows[:seq]), commitment)

    async def export_tournament(
        self, caller: Caller, tid: str, now: str | None = None
    ) -> TournamentExport:
        """The tournament's record with every published game's that ``caller`` may export,
        as one JSON document: a game held back (a duplicate round's table that ended while
        another table dealt from the same seed still runs) is named, not exported, unless
        the caller is the arbiter, as ``ExportRecord`` holds it back."""
        at = now or self.now()
        rows, states = await self._write(tid, lambda live: self._caught_up(live, at))
        viewer = ARBITER_VIEW if caller.role in ("organiser", "arbiter") else SPECTATOR
        games, held = [], []
        for game_id in (g for r in states[-1].rounds for g in r.game_ids):
            stored = await self.db.call(self.db.store.load, game_id)
            if stored is None or stored.rows[-1].kind != SEED_REVEAL:
                continue  # still running: its record holds sealed commands
            release = await self.replays.stored_release(game_id, stored)
            if sees_all(viewer, release):
                games.append(stored)
            else:
                held.append(game_id)
        text = await asyncio.to_thread(export_text, rows, games, held)
        return TournamentExport(text, f"{tid}.feastlog-tournament.json")

    async def _caught_up(self, live: Live, now: str) -> tuple[list[Row], list[Tournament]]:
        """The rows and states once the ended games' results are in (a read's catch-up
        is a write like any other)."""
        await self._catch_up(live, now)
        return live.rows, live.states

    async def watch_tournament(
        self, caller: Caller, tid: str, from_seq: int
    ) -> AsyncIterator[tuple[Row, Snapshot]]:
        """``follow`` for ``caller``, each row with the tournament after it and its
        standings, ended once its credential no longer stands (a revoked arbiter's stream
        ends at once: ``Records.held``)."""
        if from_seq < 0:
            raise BadRequest("from_seq is 0 or more", field="from_seq")
        return self.source.held(caller, self._rows_with_standings(tid, from_seq))

    async def _rows_with_standings(
        self, tid: str, from_seq: int
    ) -> AsyncIterator[tuple[Row, Snapshot]]:
        async for row, state in self.follow(tid, from_seq):
            yield row, Snapshot(row.seq, row.seq, state, standings(state), (), "")

    async def follow(self, tid: str, from_seq: int) -> AsyncIterator[tuple[Row, Tournament]]:
        """Every row from ``from_seq`` on, stored then live, with the state after it."""
        live = await self._load(tid)
        sent = max(from_seq, 1) - 1
        while True:
            while sent < len(live.rows):
                yield live.rows[sent], live.states[sent]
                sent += 1
            if live.state.ended:
                return
            async with live.moved:
                await live.moved.wait_for(_longer(live, sent))

    async def _catch_up(
        self, live: Live, now: str, call: tpb.TournamentCommand | None = None
    ) -> None:
        """Record the result of every table of the published round whose game has ended;
        once the round's time is called (by ``call``, or before it), every table still
        playing is closed (or voided) first, as the format says.

        A time call is one commit: its ``call_time`` row, each ruling in its own game's
        record with its seed reveal (``timecall``), and every result, so that it lands
        whole or not at all.  A ``call`` sent again for a round already called writes no
        second call: it finishes what is missing, as any later catch-up does (a read,
        another node, a restart) for a round an older server left part-closed.  On a
        conflict (another node wrote to the tournament or one of its games meanwhile)
        they are read again and it is decided once more."""
        async with timecall.Held() as held:
            try:
                await self._take_results(live, now, call, held)
            except StoreConflict:
                await self._reload(live)
                for game in held.games:
                    await self.live.reload(game)
                await self._take_results(live, now, call, held)

    async def _take_results(
        self, live: Live, now: str, call: tpb.TournamentCommand | None, held: timecall.Held
    ) -> None:
        rows, states = [live.rows[-1]], [live.state]

        def take(command: tpb.TournamentCommand, actor: str) -> None:
            row, state = command_row(rows[-1], states[-1], command, actor, now, live.server_seed)
            rows.append(row)
            states.append(state)

        current = live.state.current
        if call is not None and not _called(current, call.call_time.round):
            take(call, ARBITER)  # refused here (TOUR-CLOCK) before any game is touched
            current = states[-1].current
        if current is None or not current.published or live.state.ended:
            return
        closing = timecall.Closing()  # a round complete has nothing left to rule on or take
        if not current.complete:
            by = _called_by([*live.rows, *rows[1:]], current.number) if current.called else None
            fmt = live.state.format
            closing = await timecall.tables(
                self.games, live.tournament_id, current, fmt.at_time, by, held, call is not None
            )
        for result in _results(current.number, closing.ended):
            take(result, SERVER)
        if len(rows) > 1:
            await self._save(live, rows[1:], states[1:], closing.batch, closing.folded)

    async def resume(self) -> None:
        """At start: every running tournament caught up, so that a result that did not
        reach it before a server stopped is taken, and a round whose time was called is
        finished, by whichever node starts next (``_catch_up``)."""
        for tid in await self.db.read(_running_tournaments):
            try:
                await self._write(tid, lambda live: self._catch_up(live, self.now()))
            except Exception as failed:  # the next read or write of it catches up too
                log.warning("tournament %s was not caught up at start: %s", tid, failed)


def _results(number: int, ended: Sequence[timecall.Ended]) -> list[tpb.TournamentCommand]:
    """The result row of each table of round ``number`` that has ended, from its game."""
    found = []
    for table in ended:
        points, places, closed = table_result(table.engine, table.state, table.genesis)
        result = tpb.TableResult(
            round=number,
            table=table.table,
            game_id=table.game_id,
            points=points,
            places=places,
            closed=closed,
        )
        found.append(tpb.TournamentCommand(result=result, by="server"))
    return found


def _called(current: Round | None, number: int) -> bool:
    """Whether round ``number`` is the current one and its time has been called."""
    return current is not None and current.number == number and current.called


def _called_by(rows: Sequence[Row], number: int) -> str:
    """Who called round ``number``'s time (its ``call_time`` row's ``by``): the rulings at
    time are theirs, whichever call or catch-up writes them."""
    for row in reversed(rows):
        if row.kind != COMMAND:
            continue
        command = tpb.TournamentCommand.FromString(row.body)
        if command.WhichOneof("action") == "call_time" and command.call_time.round == number:
            return command.by
    raise AssertionError(f"round {number} is called, but no row calls it")


def _running_tournaments(store: EventStore) -> list[str]:
    """Every tournament whose record has not ended (its seed not revealed), on the read
    thread: newest first, a page of the game list at a time."""
    found, before = [], 0
    while True:
        page = store.listed(KIND, "", before, LISTED_PAGE)
        for line in page:
            last = store.last_seq(line.game_id)
            tail = store.rows_after(line.game_id, last - 1)
            if tail and tail[-1].kind != SEED_REVEAL:
                found.append(line.game_id)
        if len(page) < LISTED_PAGE:
            return found
        before = page[-1].n


def _taken(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("a game's result did not reach its tournament yet: %s", task.exception())


def _longer(live: Live, sent: int) -> Callable[[], bool]:
    return lambda: len(live.rows) > sent


def _creates(caller: Caller) -> None:
    """TOUR-ROLE: the organiser creates a tournament, as a game (a named arbiter runs it
    once it is there); no credentials: unauthenticated."""
    if caller.role == "anonymous":
        raise Unauthenticated("creating a tournament needs the organiser key")
    if caller.role != "organiser":
        also = ": a named arbiter runs a tournament once it is created" * (caller.role == "arbiter")
        raise PermissionDenied(
            f"only the organiser creates a tournament{also}", rule_id="TOUR-ROLE"
        )


def _runs(caller: Caller) -> None:
    """TOUR-ROLE: the organiser or a named arbiter (no credentials: unauthenticated)."""
    if caller.role == "anonymous":
        raise Unauthenticated("running a tournament needs the organiser's or an arbiter's key")
    if caller.role not in ("organiser", "arbiter"):
        raise PermissionDenied(
            "only the organiser or a named arbiter runs a tournament", rule_id="TOUR-ROLE"
        )


def _by(
    caller: Caller, propose: tpb.ProposePairing | tpb.PublishRound, by: str = ""
) -> tpb.TournamentCommand:
    field_name = "propose" if isinstance(propose, tpb.ProposePairing) else "publish"
    command = tpb.TournamentCommand(by=by or caller.ruled_by)
    getattr(command, field_name).CopyFrom(propose)
    return command


def _without_proposal(state: Tournament) -> Tournament:
    """The state before its unpublished proposal (a new proposal replaces it)."""
    from dataclasses import replace

    return replace(state, rounds=state.rounds[:-1])


def _sha(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()
