"""Where the read use cases find their games: one port, two kinds of source.

``Records`` is what the replays and audits (``service/app/reads.py``), the proof
(``proving.py``) and the table (``table.py``) ask of a source of games, and nothing
else: a game folded, its record as stored, its refusals, a read of the store, a scan of
every game, the head of a running game, and where long work runs.  The two sources:

- a server's live games (``service/app/games.py``'s ``LiveRecords``): folded games in
  memory, the store on its reader thread, folds in the refolds' pool, streams ended when
  a credential is revoked;
- a file no server holds, or an exported record (``service/app/offline.py``): read in
  this process, nothing running, nothing revoked.

A use case takes its source when it is made, so the same code answers online and
offline, and each source says once how it loads.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

from feastlog.replay.record.audit import AuditReport, verify
from feastlog.service.app.auth import Caller
from feastlog.service.app.errors import BadRequest
from feastlog.service.app.live import LiveGame
from feastlog.service.store import Rejection, StoredGame

T = TypeVar("T")


class Records(ABC):
    """A source of games for the read use cases (see the module doc)."""

    @abstractmethod
    async def game(self, game_id: str) -> LiveGame:
        """A game folded, or GameNotFound."""

    @abstractmethod
    async def record(self, game_id: str) -> StoredGame:
        """A game's record as stored, or GameNotFound."""

    @abstractmethod
    async def refused(self, game_id: str) -> list[Rejection]:
        """A game's refused commands, oldest first."""

    @abstractmethod
    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(store, *args)`` on the source's store (either adapter: call its methods)."""

    @abstractmethod
    def scan(self, kind: str) -> AsyncIterator[StoredGame]:
        """Every game with rows (of one kind, or all), in the order of the game list."""

    @abstractmethod
    async def running_head(self, game_id: str) -> tuple[int, bool, bool]:
        """A game the projection does not hold: (last seq, over, waiting for entropy)."""

    async def twins_running(self, game_id: str) -> int:
        """How many other games dealt from this game's server seed run (or wait)."""
        found: int = await self.read(lambda store: store.twins_running(game_id))
        return found

    async def count(self, kind: str) -> int:
        """How many games have rows (of one kind, or all)."""
        games, _ = await self.read(lambda store: store.count_games(kind))
        return int(games)

    def named(self, game_id: str) -> None:
        """BadRequest naming game_id unless the request names a game (``asked_for``)."""
        asked_for(game_id)

    async def fold(self, fn: Callable[..., T], *args: Any) -> T:
        """A whole-record fold (verify, export), off the event loop."""
        return await asyncio.to_thread(fn, *args)

    async def off_loop(self, fn: Callable[..., T], *args: Any) -> T:
        """Work that takes a while (drawing many steps), off the event loop."""
        return await asyncio.to_thread(fn, *args)

    def report_of(self, stored: StoredGame) -> AuditReport:
        """A game's audit from its record as stored (an exported record's source adds its
        file's header, see ``service.app.offline.RecordSource``)."""
        return audit_stored(stored)

    def held(self, caller: Caller, rows: AsyncIterator[T]) -> AsyncIterator[T]:
        """A stream of ``caller``'s, ended once its credential no longer stands (a
        server's); read offline, no key is revoked while a command runs."""
        return rows


def asked_for(game_id: str) -> None:
    """BadRequest naming game_id unless one is given (asked before whose game it is: an
    empty id is a malformed request, not another game's; its characters and length are
    the input policy's, ``service.app.bounds``)."""
    if not game_id:
        raise BadRequest("game_id is required", field="game_id")


def audit_stored(stored: StoredGame) -> AuditReport:
    """Verify a stored game; the server's seed lets it check a running game's states too."""
    return verify(stored.rows, stored.pack_body, stored.server_seed or None)
