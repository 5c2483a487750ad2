"""A round's tables at the end of its time: which have ended, and, once time is called,
the ruling that closes (or voids) each table still playing, folded and ready to commit.

A time call is one decision: the tournament's ``call_time`` row, every unfinished game's
ruling (a row in that game's own record, with its seed reveal) and the results they give
go in one commit (``Tournaments._catch_up``), so that a ``kill -9`` leaves the round
either not called or called with every table closed.  Here the games are ruled on: each
under its own lock, held (``Held``) until that commit, folded by the games' one path
(``commands.advance``), and handed to the commit (``Closing.folded``) so that memory
moves with it, as a command's does.  A game already ruled on (the ruling's command id is
in its record: an older server wrote the rulings one commit at a time) is never ruled on
twice.

Only a time call holds more than one game's lock at once, under its tournament's lock,
and a tournament's games are its own: no two holders can wait for each other.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any

from feastlog.replay.games.engine import Engine, MalformedCommand, RuleViolation
from feastlog.replay.games.fold import Table
from feastlog.replay.tournament.state import Round
from feastlog.service.app import commands
from feastlog.service.app.live import LiveGame
from feastlog.service.store import Batch
from feastlog.v1 import record_pb2

if TYPE_CHECKING:
    from feastlog.service.app.games import Games

log = logging.getLogger("feastlog")

ACTOR = "arbiter"  # the record's actor of every ruling, whoever made it


@dataclass(frozen=True)
class Ended:
    """A table whose game has ended, or ends in this commit: what its result is read from."""

    table: int
    game_id: str
    engine: Engine
    state: Table
    genesis: record_pb2.Genesis


@dataclass
class Closing:
    """What the round's games add to its commit: the rulings' rows (``batch``), what was
    folded for them (``folded``, by game id, as ``Database.commit`` takes it), and every
    table that has ended (by a ruling here or before)."""

    ended: list[Ended] = field(default_factory=list)
    batch: Batch = field(default_factory=Batch)
    folded: dict[str, Any] = field(default_factory=dict)


class Held:
    """The games' locks a time call holds until its commit: each taken once, all let go
    together (at the end of its ``async with``)."""

    def __init__(self) -> None:
        self._locks: list[asyncio.Lock] = []
        self.games: list[LiveGame] = []  # the live games locked, to read again on a conflict

    async def __aenter__(self) -> Held:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for lock in reversed(self._locks):
            lock.release()
        self._locks.clear()

    async def take(self, lock: asyncio.Lock, game: LiveGame | None = None) -> None:
        """Hold ``lock`` (a game's, or a waiting game's) until the end, unless held already."""
        if any(lock is mine for mine in self._locks):
            return
        await lock.acquire()
        self._locks.append(lock)
        if game is not None:
            self.games.append(game)


def command_id(tournament_id: str, number: int) -> str:
    """The ruling's command id in each game of round ``number``: the same on every retry,
    so that a game already ruled on is known by it."""
    return f"{tournament_id}-r{number}-time"


def ruling(at_time: str, number: int, by: str) -> record_pb2.Command:
    """The ruling the format's ``at_time`` makes on a table still playing at time:
    ``close_game`` (scored as it stands) or ``void_game``, made by ``by``."""
    made = record_pb2.ArbiterCommand(reason=f"time called in round {number}", ruled_by=by)
    getattr(made, "close_game" if at_time == "close" else "void_game").SetInParent()
    return record_pb2.Command(arbiter=made)


@dataclass(frozen=True)
class _Ruling:
    command: record_pb2.Command
    body: bytes
    command_id: str


async def tables(
    games: Games,
    tournament_id: str,
    current: Round,
    at_time: str,
    by: str | None,
    held: Held,
    refuse: bool,
) -> Closing:
    """Every table of ``current`` still without its result: those whose game has ended,
    and, once time is called (``by``: who called it; None while it runs), every other one
    ruled on, its lock taken into ``held``.  A ruling its game's rules refuse is raised
    when ``refuse`` (the call being decided), else logged and its table left as it is
    (finishing a call made before must never stop a read of the tournament)."""
    made = None
    if by is not None:
        command = ruling(at_time, current.number, by)
        body = command.SerializeToString(deterministic=True)
        made = _Ruling(command, body, command_id(tournament_id, current.number))
    closing = Closing()
    for number, (game_id, result) in enumerate(
        zip(current.game_ids, current.results, strict=True), start=1
    ):
        if result is not None:
            continue
        try:
            ended = await _at_time(games, closing, game_id, made, held)
        except (RuleViolation, MalformedCommand) as refused:
            if refuse:
                raise
            log.warning(
                "time was called in %s, but %s is not closed: %s", tournament_id, game_id, refused
            )
            continue
        if ended is not None:
            engine, state, genesis = ended
            closing.ended.append(Ended(number, game_id, engine, state, genesis))
    return closing


async def _at_time(
    games: Games, closing: Closing, game_id: str, made: _Ruling | None, held: Held
) -> tuple[Engine, Table, record_pb2.Genesis] | None:
    """One table: (engine, state, genesis) once its game has ended, or ends by ``made``
    in this commit (its rows added to ``closing``); None while it plays on."""
    waiting = await games.waiting_game(game_id)
    if waiting is not None:
        if made is None:
            return None  # its seats have not all sent their entropy: it has not begun
        await held.take(waiting.lock)
        begun = await games.begun_so_far(waiting)
        if begun is not None:  # begun with the entropy sent so far, and ended at once
            done = _advance(games, begun, made)
            closing.batch.extend(commands.begun_and_advanced(begun, done))
            closing.folded[game_id] = begun
            return begun.engine, done.tables[-1], begun.genesis
    game = await games.live.get(game_id)
    if made is not None and not game.over:
        await held.take(game.lock, game)
    if game.over:
        return game.engine, game.table, game.genesis
    if made is None or (ACTOR, made.command_id) in game.command_ids:
        return None  # playing on (or ruled on already, and yet not over: left as it is)
    done = _advance(games, game, made)
    closing.batch.extend(done.batch)
    closing.folded[game_id] = done
    return game.engine, done.tables[-1], game.genesis


def _advance(games: Games, game: LiveGame, made: _Ruling) -> commands.Advance:
    """The ruling folded on the game by the games' one path, at the service's time."""
    return commands.advance(
        game, ACTOR, None, made.command, made.body, made.command_id, games.clock().now()
    )
