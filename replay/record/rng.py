"""Seeded, provably fair randomness, exactly as DESIGN.md section 3 specifies.

A stream is named by a UTF-8 label.  Block i of a stream is
``HMAC-SHA256(key=seed, msg=label || 0x00 || uint64_be(i))``; each block yields four
64-bit big-endian unsigned integers, in order.  ``uniform(n)`` rejects integers at or
above ``2**64 - 2**64 % n``; ``shuffle`` is Fisher-Yates from the end; drawing from a bag
sorts the bag canonically and removes the element at ``uniform(len(bag))``.

The generator is a value: every call returns the result together with a new ``Rng`` whose
per-label counters moved on, so game state that holds an ``Rng`` stays immutable.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeVar

T = TypeVar("T")

_TWO_64 = 2**64


@lru_cache(maxsize=1024)  # a few keys (a game's seed) serve many messages
def _keyed(key: bytes) -> tuple[hashlib._Hash, hashlib._Hash]:
    """HMAC-SHA256's inner and outer hashes for ``key``, its pads already absorbed."""
    if len(key) > 64:
        key = hashlib.sha256(key).digest()
    key = key.ljust(64, b"\0")
    return (
        hashlib.sha256(bytes(b ^ 0x36 for b in key)),
        hashlib.sha256(bytes(b ^ 0x5C for b in key)),
    )


def hmac_sha256(key: bytes, msg: bytes) -> bytes:
    """HMAC-SHA256 (RFC 2104), the same bytes as ``hmac.digest(key, msg, "sha256")``.

    Written out over ``hashlib`` because ``hmac.digest`` lets go of the interpreter lock
    for every call, however short the message: in a serving process each release can
    hand the lock to another thread and leave the event loop waiting for its return.
    ``hashlib`` keeps the lock for messages under 2 KiB, and the pads of a key are
    hashed once.
    """
    inner, outer = _keyed(key)
    inside = inner.copy()
    inside.update(msg)
    outside = outer.copy()
    outside.update(inside.digest())
    return outside.digest()


def derive_seed(server_seed: bytes, seat_entropy: Sequence[bytes] = ()) -> bytes:
    """The game seed: the server seed, or HMAC over the seats' entropy when any was given."""
    if not any(seat_entropy):
        return server_seed
    msg = b"".join(struct.pack(">I", len(e)) + e for e in seat_entropy)
    return hmac_sha256(server_seed, msg)


def seed_commitment(server_seed: bytes) -> str:
    """The hex sha256 of the server seed, published in the genesis row."""
    return hashlib.sha256(server_seed).hexdigest()


@lru_cache(maxsize=256)  # a block holds four integers, usually drawn one after another
def block(seed: bytes, label: str, index: int) -> bytes:
    """Block ``index`` of the stream named ``label``: 32 bytes."""
    msg = label.encode("utf-8") + b"\x00" + struct.pack(">Q", index)
    return hmac_sha256(seed, msg)


def stream_word(seed: bytes, label: str, position: int) -> int:
    """The 64-bit integer at ``position`` (0-based) of the stream named ``label``."""
    raw = block(seed, label, position // 4)
    offset = (position % 4) * 8
    return int.from_bytes(raw[offset : offset + 8], "big")


@dataclass(frozen=True)
class Rng:
    """The game's random streams: a seed and how many integers each label has used."""

    seed: bytes
    counters: tuple[tuple[str, int], ...] = field(default=())

    def position(self, label: str) -> int:
        """How many 64-bit integers the stream ``label`` has handed out so far."""
        for name, count in self.counters:
            if name == label:
                return count
        return 0

    def _moved(self, label: str, position: int) -> Rng:
        others = [c for c in self.counters if c[0] != label]
        others.append((label, position))
        others.sort()
        return Rng(self.seed, tuple(others))

    def _draw_at(self, label: str, n: int, position: int) -> tuple[int, int]:
        """``uniform(n)`` from ``position`` of the stream: the integer and the next position."""
        if n < 1:
            raise ValueError("uniform(n) needs n >= 1")
        limit = _TWO_64 - (_TWO_64 % n)
        while True:
            x = stream_word(self.seed, label, position)
            position += 1
            if x < limit:
                return x % n, position

    def uniform(self, label: str, n: int) -> tuple[int, Rng]:
        """An integer in ``range(n)`` from the stream ``label``, without modulo bias."""
        value, position = self._draw_at(label, n, self.position(label))
        return value, self._moved(label, position)

    def shuffle(self, label: str, items: Sequence[T]) -> tuple[tuple[T, ...], Rng]:
        """A new tuple: ``items`` shuffled by Fisher-Yates from the end."""
        out = list(items)
        position = start = self.position(label)
        for i in range(len(out) - 1, 0, -1):
            j, position = self._draw_at(label, i + 1, position)
            out[i], out[j] = out[j], out[i]
        return tuple(out), (self if position == start else self._moved(label, position))

    def draw(self, label: str, bag: Sequence[T]) -> tuple[T, tuple[T, ...], Rng]:
        """One item drawn from a bag (a multiset): the item, the bag left (sorted), the rng."""
        if not bag:
            raise ValueError("cannot draw from an empty bag")
        ordered = sorted(bag)  # type: ignore[type-var]
        index, rng = self.uniform(label, len(ordered))
        item = ordered.pop(index)
        return item, tuple(ordered), rng
