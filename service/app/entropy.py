"""The waiting room: games created with seat entropy, waiting for every seat's bytes.

Such a game has a draft genesis and a server seed but no row yet; each seat sends its
entropy once (``JoinGame``), and the last one begins the game: its genesis row, with
every seat's entropy mixed into the seed (DESIGN.md section 3), is written then.  The
store, not this room, says what each seat has sent (on a shared store other nodes take
joins too); the room keeps each game's draft, pack and lock.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from feastlog.replay.games import engine as engine_of
from feastlog.replay.games.fold import loaded_pack
from feastlog.replay.record.rows import CURRENT_VERSION
from feastlog.service.app.commands import begin_game
from feastlog.service.app.errors import WaitingForEntropy
from feastlog.service.app.live import LiveGame
from feastlog.service.store import PendingGame
from feastlog.v1 import record_pb2


@dataclass
class Pending:
    """A game waiting for seat entropy: its draft genesis, seed, pack and what was sent."""

    draft: record_pb2.Genesis
    server_seed: bytes
    pack: Any
    entropy: dict[int, bytes]
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def missing(self, given: dict[int, bytes] | None = None) -> list[int]:
        """The seats that have not sent their entropy yet."""
        sent = self.entropy if given is None else given
        return [s for s in range(len(self.draft.seats)) if s not in sent]


class WaitingRoom:
    """Every game waiting for seat entropy on this server."""

    def __init__(self) -> None:
        self._pending: dict[str, Pending] = {}

    def get(self, game_id: str) -> Pending | None:
        """The waiting game, or None (unknown, or begun)."""
        return self._pending.get(game_id)

    def check(self, game_id: str) -> None:
        """Refuse to look at a game that has not begun: it has no state yet."""
        waiting = self._pending.get(game_id)
        if waiting is not None:
            names = [s.name for s in waiting.draft.seats]
            raise WaitingForEntropy.naming(game_id, names, waiting.missing())

    def add(self, draft: record_pb2.Genesis, server_seed: bytes, pack: Any) -> None:
        """Let a new game wait."""
        self._pending[draft.game_id] = Pending(draft, server_seed, pack, {})

    def take_up(self, stored: PendingGame) -> Pending:
        """Let a game stored as waiting wait here, with what the store says was sent
        (at server start; on a shared store, whenever another node may have moved it)."""
        pending = self._pending.get(stored.game_id)
        if pending is not None:
            pending.entropy = dict(stored.entropy)
            return pending
        draft = record_pb2.Genesis.FromString(stored.draft)
        # none of its rows is written yet, so it starts in the current record format
        draft.record_version = draft.record_version or CURRENT_VERSION
        pack = loaded_pack(engine_of(draft.game_kind), stored.pack_body)
        pending = Pending(draft, stored.server_seed, pack, dict(stored.entropy))
        self._pending[stored.game_id] = pending
        return pending

    def drop(self, game_id: str) -> None:
        """Forget a game that has begun (here, or on another node)."""
        self._pending.pop(game_id, None)

    def clear(self) -> None:
        """Forget every game (on a shared store the store says again which still wait)."""
        self._pending.clear()


def begin_with(pending: Pending, sent: dict[int, bytes]) -> LiveGame:
    """The game begun with every seat's entropy mixed into the seed, in seat order."""
    genesis = record_pb2.Genesis()
    genesis.CopyFrom(pending.draft)
    genesis.seat_entropy.extend(sent[s] for s in sorted(sent))
    return begin_game(genesis, pending.server_seed, pending.pack)
