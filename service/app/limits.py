"""How refusals are kept and expensive reads paced: the application's own limits.

A refused command that reaches a game is stored bounded (``stored_refusal``) and at most
at its sender's pace (``RefusalBudget``); whole-record folds that any caller can ask for
run one at a time off the event loop (``Refolds``).  The request checks made before a
call reaches the application (sizes, unknown fields, each field's bound and characters)
are the gRPC guard's, by the input policy of ``service.app.bounds``.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from feastlog.service.app.bounds import KIB

T = TypeVar("T")

# A refused command's row keeps at most this many bytes of the command.  A longer one
# keeps exactly its first REFUSED_BODY_KEPT bytes, and its message says so with the
# whole command's length and sha256: a body of exactly this length is always a cut one
# (whole bodies are kept only when shorter), so nobody decodes a prefix as a command.
REFUSED_BODY_KEPT = 4 * KIB
REFUSED_MESSAGE_KEPT = 500


def body_is_whole(body: bytes) -> bool:
    """Whether a stored refused command is the whole command (not a cut prefix)."""
    return len(body) < REFUSED_BODY_KEPT


def stored_refusal(
    body: bytes, message: str, unstored: int, foreign: bool = False
) -> tuple[bytes, str]:
    """The body and message a refusal's row keeps: bounded, saying what was cut or skipped.

    ``foreign``: sent with a seat token of another game, whose hidden cards the command
    may name (a sealed bid, a secret Menu): not kept at all, nor any digest of it.
    """
    notes = []
    if len(message) > REFUSED_MESSAGE_KEPT:
        message = message[:REFUSED_MESSAGE_KEPT] + "…"
    if foreign:
        notes.append("command not kept: it was sent with a seat token of another game")
        body = b""
    elif not body_is_whole(body):
        digest = hashlib.sha256(body).hexdigest()
        notes.append(
            f"command cut: {len(body)} bytes, sha256 {digest}; "
            f"the first {REFUSED_BODY_KEPT} bytes are kept"
        )
        body = body[:REFUSED_BODY_KEPT]
    if unstored:
        notes.append(f"{unstored} earlier refusal(s) of this sender were not stored (rate limit)")
    return body, " ".join([message, *(f"[{n}]" for n in notes)])


class Refolds:
    """Whole-record folds (verification, export, standings) run one at a time, each in a
    worker thread: however many callers ask, the event loop keeps answering, and a
    cancelled call stops waiting (its fold of one game finishes unseen)."""

    def __init__(self) -> None:
        self._one = asyncio.Semaphore(1)

    async def run(self, fold: Callable[..., T], *args: Any) -> T:
        """``fold(*args)`` in a worker thread, after the folds asked for before it."""
        async with self._one:
            return await asyncio.to_thread(fold, *args)


@dataclass
class _Bucket:
    tokens: float
    at: float
    unstored: int = 0


class RefusalBudget:
    """A token bucket per sender for storing refusals: per credential, over every game.

    Every refusal is answered with its status; past the budget it is counted instead of
    stored, and the sender's next stored refusal (in whichever game) says how many were
    skipped.  A sender may have ``burst`` refusals stored at once and ``per_minute`` more
    each minute, however many games it sends to.
    """

    def __init__(
        self,
        burst: int = 20,
        per_minute: float = 12,
        clock: Callable[[], float] = time.monotonic,
        senders: int = 10_000,
    ) -> None:
        self.burst = burst
        self.rate = per_minute / 60
        self.clock = clock
        self.senders = senders
        self.unstored = 0  # refusals answered but not stored, since the server started
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def take(self, sender: str) -> int | None:
        """None: do not store this refusal; else store it (with how many were skipped).

        ``sender``: the credential (``Caller.holder``), the same in every game."""
        now = self.clock()
        bucket = self._buckets.pop(sender, None) or _Bucket(float(self.burst), now)
        self._buckets[sender] = bucket  # most recently used last
        bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.at) * self.rate)
        bucket.at = now
        while len(self._buckets) > self.senders:  # memory stays bounded: forget the oldest
            self._buckets.popitem(last=False)
        if bucket.tokens < 1:
            bucket.unstored += 1
            self.unstored += 1
            return None
        bucket.tokens -= 1
        skipped, bucket.unstored = bucket.unstored, 0
        return skipped
