"""The waiting room: games created with seat entropy, waiting for every seat's bytes.

Such a game has a draft genesis and a server seed but no row yet; each seat sends its
entropy once (``JoinGame``), and the last one begins the game: its genesis row, with
every seat's entropy mixed into the seed (DESIGN.md section 3), is written then.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from feastlog.replay.games import engine as engine_of
from feastlog.replay.record import CURRENT_VERSION
from feastlog.service.commands import begin_game
from feastlog.service.errors import AlreadyStarted, EntropyAlreadySent, WaitingForEntropy
from feastlog.service.live import LiveGame
from feastlog.service.store import Batch, PendingGame
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


@dataclass(frozen=True)
class Joined:
    """What one seat's entropy decides: the batch to write, the entropy given so far, the
    seats still waiting, and the game once the last seat has sent (else None)."""

    batch: Batch
    given: dict[int, bytes]
    waiting: list[int]
    game: LiveGame | None


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
        if waiting is None:
            return
        missing = waiting.missing()
        names = ", ".join(waiting.draft.seats[i].name for i in missing)
        raise WaitingForEntropy(
            f"the game starts once every seat has sent its entropy; waiting for {names}",
            waiting_for=",".join(str(i) for i in missing),  # seat numbers, as JoinGame's
        )

    def add(self, draft: record_pb2.Genesis, server_seed: bytes, pack: Any) -> None:
        """Let a new game wait."""
        self._pending[draft.game_id] = Pending(draft, server_seed, pack, {})

    def take_up(self, stored: PendingGame) -> None:
        """Let a game stored as waiting wait again (at server start)."""
        draft = record_pb2.Genesis.FromString(stored.draft)
        # none of its rows is written yet, so it starts in the current record format
        draft.record_version = draft.record_version or CURRENT_VERSION
        pack = engine_of(draft.game_kind).load_pack(stored.pack_body)
        self._pending[stored.game_id] = Pending(
            draft, stored.server_seed, pack, dict(stored.entropy)
        )

    def join(self, pending: Pending, game_id: str, seat: int, entropy: bytes) -> Joined | None:
        """What ``seat``'s entropy decides; None when it sent the same bytes before."""
        if game_id not in self._pending:
            raise AlreadyStarted("this game has started: seat entropy comes before the deal")
        sent = pending.entropy.get(seat)
        if sent is not None and sent != entropy:
            raise EntropyAlreadySent(f"seat {seat} has already sent its entropy")
        if sent is not None:
            return None
        given = {**pending.entropy, seat: entropy}
        waiting = pending.missing(given)
        batch = Batch(entropy=[(game_id, seat, entropy)])
        if waiting:
            return Joined(batch, given, waiting, None)
        genesis = record_pb2.Genesis()
        genesis.CopyFrom(pending.draft)
        genesis.seat_entropy.extend(given[s] for s in sorted(given))
        game = begin_game(genesis, pending.server_seed, pending.pack)
        batch.rows.append(game.rows[0])
        batch.started.append(game_id)
        return Joined(batch, given, waiting, game)

    def settle(self, pending: Pending, game_id: str, joined: Joined) -> None:
        """Take a committed join in: the entropy kept, the game gone once it has begun."""
        pending.entropy = joined.given
        if joined.game is not None:
            del self._pending[game_id]
