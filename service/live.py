"""Live games: folded once, kept in memory, advanced only after their rows commit."""

from __future__ import annotations

import asyncio
import datetime
from dataclasses import dataclass, field
from typing import Any

from feastlog.v1 import record_pb2
from replay import fold
from replay.engine import Engine, Fact
from replay.fold import Table
from replay.games import engine
from replay.history import Folded, refold
from replay.record import Row
from service.store import StoredGame


def utc_now() -> str:
    """The time now, RFC 3339 UTC with microseconds (row metadata only)."""
    now = datetime.datetime.now(datetime.UTC)
    return now.isoformat(timespec="microseconds").replace("+00:00", "Z")


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
    watchers: set[asyncio.Queue[int]] = field(default_factory=set)

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
            queue.put_nowait(self.last_seq)

    def reload(self, stored: StoredGame) -> None:
        """Take the stored record as the truth again, after memory and log disagreed."""
        fresh = live_from_store(stored)
        self.rows, self.tables, self.facts = fresh.rows, fresh.tables, fresh.facts
        self.command_ids = fresh.command_ids
        for queue in self.watchers:
            queue.put_nowait(self.last_seq)

    def may_continue(self) -> bool:
        """Whether commands are still taken."""
        return not self.over and not fold.is_over(self.table)


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
