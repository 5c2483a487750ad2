"""The server's log tree in memory, its signed heads, and the proofs it gives.

The store gives every appended row its position before the commit is answered
(``EventStore.write``: in the commit itself, or on PostgreSQL in the placement just
after it, which one node at a time makes for every node's rows). At start the tree reads
the store's leaves (``catch_up``); from then on it follows the stream of committed rows
(``committed``: this node's commits and, on a shared store, every other node's, each in
its place); before it signs a head it asks the store only for leaves the stream has not
brought it (rows published while a catch-up was reading: normally none). It signs a head
every ``HEAD_INTERVAL`` seconds while rows arrive (and one last at shutdown), the
interval measured on the application's clock (``service/app/clock.py``: a test that
moves a ``ManualClock`` sees the next head without waiting), keeps each head in the
store before anyone is shown it, and answers inclusion and consistency proofs from the
tree. Nothing here is on a command's path: the submit costs one leaf written with its
commit (on PostgreSQL, in the placement after it) and one signature for its receipt.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from feastlog.replay.proof.merkle import Tree
from feastlog.replay.proof.signed import Cosignature, TreeHead, leaf_hash_of
from feastlog.replay.table.clocks import time_ms
from feastlog.service.app.clock import Clock, SystemClock
from feastlog.service.app.errors import BadRequest, HeadNotFound, NotSigning
from feastlog.service.app.notary import Notary, cosigned, signed_by
from feastlog.service.store import StoreError
from feastlog.service.store.port import Proof
from feastlog.service.store.stream import Committed
from feastlog.service.store.writer import Database

log = logging.getLogger("feastlog.proof")

HEAD_INTERVAL = 2.0  # seconds between heads while rows arrive
FETCH = 100_000  # leaves read from the store at a time

# How the tree reads its store: ``fn(store, *args)`` on a read connection.
Reading = Callable[..., Awaitable[Any]]


class LogTree:
    """Every row of the store as one RFC 9162 tree; the heads this server signed."""

    def __init__(
        self,
        read: Reading,
        db: Database | None = None,
        notary: Notary | None = None,
        interval: float = HEAD_INTERVAL,
        clock: Callable[[], Clock] = SystemClock,
    ) -> None:
        self._read = read  # fn(store, *args) on a store's read connection
        self.db = db  # the server's store, which heads and cosignatures are written to
        self.notary = notary
        self.interval = interval
        self._clock = clock  # the clock now (the application's: a test may set another)
        self.tree = Tree()
        self.latest: TreeHead | None = None
        self._catching = asyncio.Lock()
        self._signing = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self.signed = 0  # heads signed since start (the metrics read these three)
        self.cosignatures = 0  # witnesses' cosignatures taken since start
        # the newest head a witness cosigned since start, and how many witnesses did
        self.cosigned: tuple[TreeHead, int] | None = None

    async def load(self) -> None:
        """Read the tree and the latest head from the store."""
        await self.catch_up()
        heads = await self._read(lambda store: store.tree_heads())
        self.latest = max(heads, key=lambda h: (h.size, h.signed_at), default=None)

    async def start(self) -> None:
        """Read the tree from the store, note the key, and sign heads from now on."""
        await self.load()
        if self.notary is None or self.db is None or self.db.store.read_only:
            return
        await self.db.call(
            self.db.store.add_server_key, self.notary.public_key, self._clock().now()
        )
        await self.issue()
        self._task = asyncio.create_task(self._every_interval(), name="feastlog-tree-heads")

    async def stop(self) -> None:
        """Stop signing on a schedule; sign the rows committed since the last head."""
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None
        with contextlib.suppress(StoreError):
            await self.issue()

    async def _every_interval(self) -> None:
        while True:
            clock = self._clock()
            await clock.until(time_ms(clock.now()) + round(self.interval * 1000))
            try:
                await self.issue()
            except StoreError as failed:  # the next interval tries again
                log.warning("no tree head this time: %s", type(failed).__name__)

    def committed(self, commit: Committed) -> None:
        """The stream's rows, each a leaf at its position; rows that do not follow on from
        the tree (it has not read the store yet, or missed some) wait for ``catch_up``."""
        if not commit.rows or self._catching.locked():
            return  # none, or a catch-up reading the store has them (or will)
        if commit.position > self.tree.size:
            return  # read from the store by the next catch_up
        for row in commit.rows[self.tree.size - commit.position :]:
            self.tree.append(leaf_hash_of(row))

    async def catch_up(self) -> int:
        """Take in the leaves the store has beyond the tree; the tree's size."""
        async with self._catching:
            while True:
                found = await self._read(_leaves_after, self.tree.size)
                for leaf in found:
                    self.tree.append(leaf)
                if len(found) < FETCH:
                    return self.tree.size

    async def issue(self) -> TreeHead | None:
        """Sign a head over every leaf committed, if there are new ones; kept in the store
        before it is served."""
        if self.notary is None or self.db is None:
            return None
        async with self._signing:
            size = await self.catch_up()
            if size == 0 or (self.latest is not None and self.latest.size >= size):
                return None  # nothing new (no head of the empty tree: it proves nothing)
            head = self.notary.head(size, self.tree.root(size), self._clock().now())
            await self.db.call(self.db.store.add_tree_head, head)
            self.latest = head
            self.signed += 1
            return head

    def _signing_here(self) -> tuple[Notary, Database]:
        if self.notary is None or self.db is None:
            raise NotSigning("this store is read without its server: nothing is signed here")
        return self.notary, self.db

    async def head(self, size: int) -> tuple[TreeHead, list[Cosignature]]:
        """The latest head (``size`` 0) or the head of ``size``, with its cosignatures."""
        if size < 0:
            raise BadRequest("size is 0 (the latest head) or more", field="size")
        if size == 0:
            head = self.latest
        else:
            kept = await self._read(lambda store: store.tree_heads(size))
            head = kept[-1] if kept else None
        if head is None:
            raise HeadNotFound(
                f"this server has signed no tree head of size {size}"
                if size
                else "this server has signed no tree head yet"
            )
        found = await self._read(lambda store: store.cosignatures(head.size))
        return head, [c for c in found if c.root == head.root]

    async def sized(self, size: int, field: str) -> int:
        """A tree size to prove against: 0 is the latest head's; never beyond the tree."""
        if size == 0:
            return (await self.head(0))[0].size
        have = await self.catch_up()
        if not 0 < size <= have:
            raise BadRequest(f"the log tree has {have} leaves, not {size}", field=field)
        return size

    async def inclusion(
        self, game_id: str, seq: int, tree_size: int
    ) -> tuple[int, int, list[bytes], bytes]:
        """(leaf index, tree size, audit path, root) of row ``seq`` of ``game_id``."""
        position = await self._read(lambda store: store.leaf_position(game_id, seq))
        if position is None:
            raise BadRequest(f"game {game_id!r} has no row {seq}", field="seq")
        size = await self.sized(tree_size, "tree_size")
        if position >= size:
            raise HeadNotFound(
                f"row {seq} is leaf {position}, not in the tree of {size} leaves: ask again "
                f"after the next head (every {self.interval:g} s)"
            )
        await self.catch_up()
        return position, size, self.tree.inclusion(position, size), self.tree.root(size)

    async def consistency(
        self, first: int, second: int
    ) -> tuple[int, int, list[bytes], bytes, bytes]:
        """(first, second, path, first root, second root): the tree of ``first`` leaves a
        prefix of the tree of ``second``."""
        second = await self.sized(second, "second")
        if not 0 < first <= second:
            raise BadRequest(f"first is 1 to {second} (the second tree's size)", field="first")
        path = self.tree.consistency(first, second)
        return first, second, path, self.tree.root(first), self.tree.root(second)

    async def take_cosignature(self, head: TreeHead, cosignature: Cosignature) -> int:
        """Keep a witness's cosignature of one of this server's heads; how many it has."""
        notary, db = self._signing_here()
        if not signed_by(head, notary.public_key):
            raise BadRequest("the head is not one this server signed", field="head")
        of_this = Cosignature.of(head, cosignature.witness_key, cosignature.witnessed_at)
        if replace(of_this, signature=cosignature.signature) != cosignature or not cosigned(
            cosignature
        ):
            raise BadRequest(
                "the cosignature is not the witness's signature of this head",
                field="cosignature.signature",
            )
        await db.call(db.store.add_cosignature, cosignature)
        found = await self._read(lambda store: store.cosignatures(head.size))
        witnesses = len({c.witness_key for c in found if c.root == head.root})
        self.cosignatures += 1
        if self.cosigned is None or head.size >= self.cosigned[0].size:
            self.cosigned = (head, witnesses)
        return witnesses


def _leaves_after(store: Proof, size: int) -> list[bytes]:
    """The leaves beyond the first ``size``, on the read thread."""
    return store.leaves(size, FETCH)
