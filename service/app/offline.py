"""The read use cases with no server: over a DuckDB file no server holds, or an export.

``OfflineFile`` and ``OfflineRecord`` answer the same calls as the application on a
running server (``service.app.reads.Replays``: view, legal, state_at, replay, page, export,
verify, verify_all, explain, what_if, rejections, games, standings, stats), with the
same values and the same errors, the same visibility policy deciding what the caller
may see.  They only read: a file is opened read-only for each call, so a server may
take it afterwards; games are folded in this process and kept while the object lives.

Whoever holds a file holds its seeds already, so offline tools usually ask as the
organiser (``service.app.auth.ORGANISER``); a finished game's record is public anyway.
A record whose rows do not fold (a damaged file, an edited export) is ``DoesNotReplay``,
whatever the fold raised, as a sealed record is ``SealedRecord``.

The calls are the application's coroutines, but offline nothing in them waits: the
loaders are plain calls and the folds run in place.  So ``answer`` (and ``answers`` for
``verify_all``) finishes a call with no event loop at all, from any code, even code
that runs inside one:

    reads = open_offline("feastlog.duckdb")            # or "game.feastlog.json"
    replay = answer(reads.replay(ORGANISER, game_id, viewer="seat:1"))
"""

from __future__ import annotations

import contextlib
from abc import abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from google.protobuf.message import DecodeError

from feastlog.replay.games.engine import MalformedCommand, PackError, RuleViolation
from feastlog.replay.record.audit import AuditReport
from feastlog.replay.record.export import BadExport, read_export, read_record_file, verify_read
from feastlog.replay.record.history import first_genesis, refold
from feastlog.replay.record.rows import SEED_REVEAL
from feastlog.service.app.errors import (
    KNOWN,
    BadRequest,
    GameNotFound,
    SealedRecord,
    WaitingForEntropy,
)
from feastlog.service.app.live import LiveGame, live_from_folded
from feastlog.service.app.proving import Proving
from feastlog.service.app.reads import Replays
from feastlog.service.app.source import Records, asked_for
from feastlog.service.app.table import AtTable
from feastlog.service.store import Rejection, StoredGame
from feastlog.service.store.port import EventStore, exists, open_store
from feastlog.v1 import record_pb2

if TYPE_CHECKING:
    from feastlog.service.app.tournament import Tournaments

T = TypeVar("T")

# What reading a record's rows raises when they do not fold: its own rows break a rule or
# a pack, or do not decode (the same, raised by a request, is the request's refusal).
FOLDING = (RuleViolation, MalformedCommand, PackError)
UNREADABLE = (ValueError, KeyError, DecodeError, *FOLDING)


class DoesNotReplay(SealedRecord):
    """A record whose rows do not fold: a damaged file, an edited export.  Like a sealed
    record, it cannot be replayed (FAILED_PRECONDITION), with a reason of its own."""

    reason = "RECORD_DOES_NOT_REPLAY"


class Offline(Records):
    """The read use cases over games folded in this process (see the module doc): the
    source of games, and the features that read it, composed."""

    where = "the record"  # the file, in words

    def __init__(self) -> None:
        self._folded: dict[str, LiveGame] = {}
        self.proving = Proving(self)  # the file's tree, read per call: nothing is signed
        self.replays = Replays(self, self.proving)
        self.table = AtTable(self.replays)  # nothing is timed, no call is made

    @property
    def tournaments(self) -> Tournaments:
        """Tournaments are run by a server (the CLI asks one for them)."""
        raise BadRequest("tournaments are run by a server: start `feastlog serve`")

    @abstractmethod
    def stored(self, game_id: str) -> StoredGame:
        """A game's record as stored, or GameNotFound."""

    def folded(self, game_id: str) -> LiveGame:
        """A game folded from its record (kept for the next call), or GameNotFound."""
        game = self._folded.get(game_id)
        if game is None:
            stored = self.stored(game_id)
            if not stored.server_seed:
                raise SealedRecord(
                    "the game was still running when exported, so its seed is not revealed: "
                    "replay it through the server"
                )
            folded = refold(stored.rows, stored.server_seed, stored.pack_body)
            game = live_from_folded(folded, stored.server_seed, stored.seat_names)
            self._folded[game_id] = game
        return game

    @contextlib.contextmanager
    def replaying(self) -> Iterator[None]:
        """Whatever reading the record's rows raises, when it is not a refusal of its own
        (an unknown game kind, a game waiting for entropy), as DoesNotReplay."""
        try:
            yield
        except UNREADABLE as bad:
            if isinstance(bad, KNOWN) and not isinstance(bad, FOLDING):
                raise
            raise DoesNotReplay(f"{self.where}: not a record that replays: {bad}") from bad

    async def game(self, game_id: str) -> LiveGame:
        with self.replaying():
            return self.folded(game_id)

    async def record(self, game_id: str) -> StoredGame:
        with self.replaying():
            return self.stored(game_id)

    async def fold(self, fn: Callable[..., T], *args: Any) -> T:
        with self.replaying():
            return fn(*args)

    async def off_loop(self, fn: Callable[..., T], *args: Any) -> T:
        with self.replaying():
            return fn(*args)


class OfflineFile(Offline):
    """The read use cases over a DuckDB file no server holds."""

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = self.where = path

    @contextlib.contextmanager
    def _store(self) -> Iterator[EventStore]:
        """The file opened read-only for one call (so a server may open it afterwards)."""
        if not exists(self.path):
            raise GameNotFound(f"no database at {self.path}")
        store = open_store(self.path, read_only=True)
        try:
            yield store
        finally:
            store.close()

    def stored(self, game_id: str) -> StoredGame:
        """A game's record as stored, or GameNotFound."""
        with self._store() as store:
            found = store.load(game_id)
            waiting = store.pending_game(game_id) if found is None else None
        if waiting is not None:  # told so, as a server holding the file tells it
            names = [s.name for s in record_pb2.Genesis.FromString(waiting.draft).seats]
            missing = [s for s in range(len(names)) if s not in waiting.entropy]
            raise WaitingForEntropy.naming(game_id, names, missing)
        if found is None:
            raise GameNotFound(f"there is no game {game_id!r} in {self.path}", game_id=game_id)
        return found

    async def refused(self, game_id: str) -> list[Rejection]:
        with self._store() as store:
            return store.rejections(game_id)

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        with self._store() as store:
            return fn(store, *args)

    async def scan(self, kind: str) -> AsyncIterator[StoredGame]:
        with self._store() as store:
            for stored in store.scan(None, kind):
                yield stored

    async def running_head(self, game_id: str) -> tuple[int, bool, bool]:
        last_seq = await self.read(lambda store: store.last_seq(game_id))
        return last_seq, False, last_seq == 0  # no row yet: it waits for seat entropy


class OfflineRecord(Offline):
    """The read use cases over one exported record (``feastlog export``): one game, no
    refusals (an export holds none); a running game's record has no seed, so it can be
    verified and exported again but not replayed.  Its verification is ``feastlog
    verify``'s: the file's header and claimed result too, not only its rows."""

    def __init__(self, text: str, source: str = "the record") -> None:
        super().__init__()
        self.where = source
        try:
            self._document, record = read_export(text)
        except BadExport as bad:
            raise BadRequest(f"{source}: {bad}", field="record") from bad
        self._read_record = record
        genesis = first_genesis(record.rows)  # as a fold of it would say: it does not replay
        names = tuple(s.name for s in genesis.seats)
        self.game_id, self.game_kind = genesis.game_id, genesis.game_kind
        self._record = StoredGame(
            tuple(record.rows), record.server_seed or b"", record.pack_bytes, names
        )

    def stored(self, game_id: str) -> StoredGame:
        """The record's game (any id but its own is GameNotFound)."""
        if game_id not in ("", self.game_id):
            raise GameNotFound(f"{self.where} holds game {self.game_id}, not {game_id!r}")
        return self._record

    async def game(self, game_id: str) -> LiveGame:
        with self.replaying():
            return self.folded(game_id or self.game_id)

    def report_of(self, stored: StoredGame) -> AuditReport:
        return verify_read(self._document, self._read_record)

    async def refused(self, game_id: str) -> list[Rejection]:
        self.stored(game_id)
        return []

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        raise BadRequest(
            f"{self.where} is one exported game: the game list, standings and stats need a "
            "DuckDB file (--db) or a server"
        )

    async def count(self, kind: str) -> int:
        return 1 if kind in ("", self.game_kind) else 0

    def named(self, game_id: str) -> None:
        if game_id:  # no id: the one game the record holds
            asked_for(game_id)

    async def twins_running(self, game_id: str) -> int:
        return 0  # an exported record stands alone: its seed is in it once revealed

    async def scan(self, kind: str) -> AsyncIterator[StoredGame]:
        if kind in ("", self.game_kind):
            yield self._record

    async def running_head(self, game_id: str) -> tuple[int, bool, bool]:
        return len(self._record.rows), self._record.rows[-1].kind == SEED_REVEAL, False


def answer(call: Awaitable[T]) -> T:
    """The answer of an offline call, with no event loop (offline, nothing waits)."""
    steps = call.__await__()
    try:
        steps.send(None)
    except StopIteration as done:
        answer: T = done.value
        return answer
    steps.close()
    raise RuntimeError("an offline call waited for an event loop")


def answers(items: AsyncIterator[T]) -> Iterator[T]:
    """The items of an offline stream (``verify_all``), with no event loop."""
    while True:
        try:
            yield answer(items.__anext__())
        except StopAsyncIteration:
            return


def open_offline(source: str) -> Offline:
    """The offline reads of ``source``: an exported record (``.json``) or a DuckDB file."""
    path = Path(source)
    if source.endswith(".json") and path.is_file():
        return OfflineRecord(read_record_file(source), source)
    return OfflineFile(source)
