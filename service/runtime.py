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
"""

from __future__ import annotations

import asyncio
import gc

NEVER = 1 << 30  # middle-generation collections before an automatic full one
FULL_EVERY = 600.0  # seconds between two full collections


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
