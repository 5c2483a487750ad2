"""How a serving process runs Python: full garbage collections off the command path.

A server keeps every running game folded in memory: hundreds of thousands of objects
(every table after every row) that live as long as their game, none of them in a
reference cycle.  CPython's automatic full collection walks all of them each time the
heap has grown by a quarter: a pause of tens to hundreds of milliseconds (measured: up
to 340 ms with 400 games held) in the middle of some command, with every other game's
command waiting behind it, and longer the more games are held.  The cyclic garbage of a
server dies young (gRPC calls, tasks, exceptions): in a measured run the full
collections found 646 objects of cyclic garbage in all, the young ones 260,000.

So ``feastlog serve``:

- freezes what start-up made (modules, descriptors, the store's connections), which
  lives as long as the process: no collection walks it again;
- keeps CPython's young collections as they are (a few milliseconds each at most;
  fewer, larger ones were measured to pause longer for the same work);
- runs the full collection on a timer (every ``FULL_EVERY`` seconds) instead of on the
  heap's growth, so what little cyclic garbage outlives the young collections is freed
  all the same.

Objects not in a cycle are freed by reference counting the moment they are dropped,
frozen or not: a game folded out of memory goes at once.

Bulk work (``audit --all``, ``export --all``, a projection rebuild: one worker folding
game after game) wants throughput, not short pauses.  With the young generation
collected every 700 allocations, each collection finds the fold's current tables still
alive and moves them on, and the older generations walk them again: 10-15% of an
audit's time went to collections that freed almost nothing.  ``bulk_collection``
collects the young generation every ``BULK_YOUNG`` allocations instead, by which time
the tables it would have walked are gone (freed by reference counting).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
from collections.abc import Iterator

NEVER = 1 << 30  # middle-generation collections before an automatic full one
FULL_EVERY = 600.0  # seconds between two full collections
BULK_YOUNG = 20_000  # allocations between two young collections during bulk work


def steady_collection() -> None:
    """Freeze what start-up made; young collections as usual, full ones left to the timer."""
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, NEVER)


async def collect_now_and_then(every: float = FULL_EVERY) -> None:
    """A full collection every ``every`` seconds, until cancelled."""
    while True:
        await asyncio.sleep(every)
        gc.collect()


@contextlib.contextmanager
def bulk_collection() -> Iterator[None]:
    """Bulk work's collections (see above) until the block ends, then as they were."""
    before = gc.get_threshold()
    gc.set_threshold(BULK_YOUNG, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
