"""The stream of committed rows (``service/store/stream.py``): each commit's rows once, in
the log's order, with their positions, before the commit's waiters are answered, whatever
became of them; a subscriber that fails stops no other."""

from __future__ import annotations

import asyncio
from typing import Any

from feastlog.service.store import Batch
from feastlog.service.store.memory import MemoryStore
from feastlog.service.store.stream import CommitStream, Committed
from feastlog.service.store.writer import Database
from tests.recordutil import build, games_batch


def run(scenario: Any) -> None:
    async def main() -> None:
        db = Database(MemoryStore())
        db.start()
        try:
            await scenario(db)
        finally:
            await db.close()

    asyncio.run(main())


def test_each_commit_is_published_once_in_order_with_its_positions() -> None:
    one, two = build(players=2, seed_byte=1, stop_after=4), build(players=2, seed_byte=2)

    async def scenario(db: Database) -> None:
        seen: list[Committed] = []
        db.stream.subscribe("test", seen.append)
        await db.commit(games_batch([one]))
        await asyncio.gather(db.commit(games_batch([two])), db.commit(Batch()))
        placed = [(c.position + i, r) for c in seen for i, r in enumerate(c.rows)]
        assert [p for p, _ in placed] == list(range(len(one.rows) + len(two.rows)))
        assert [r for _, r in placed] == [*one.rows, *two.rows]
        for position, row in placed:  # the store's own positions
            assert db.store.leaf_position(row.game_id, row.seq) == position
        assert db.stream.position == len(placed)
        assert db.store.rows_from(3, 2) == placed[3:5]
        assert all(c.local for c in seen)

    run(scenario)


def test_a_cancelled_waiter_still_finds_its_commit_published() -> None:
    built = build(players=2, seed_byte=3, stop_after=3)

    async def scenario(db: Database) -> None:
        seen: list[Committed] = []
        db.stream.subscribe("test", seen.append)
        waiter = asyncio.ensure_future(db.commit(games_batch([built]), {"g": "folded"}))
        await asyncio.sleep(0)
        waiter.cancel()
        for _ in range(100):
            if seen:
                break
            await asyncio.sleep(0.01)
        (commit,) = seen
        assert commit.rows == tuple(built.rows) and commit.folded == {"g": "folded"}

    run(scenario)


def test_a_subscriber_that_fails_stops_no_other() -> None:
    stream = CommitStream()
    seen: list[int] = []

    def broken(_: Committed) -> None:
        raise RuntimeError("a bug in one subscriber")

    stream.subscribe("broken", broken)
    stream.subscribe("after it", lambda c: seen.append(c.position))
    rows = tuple(build(players=2, seed_byte=4, stop_after=2).rows)
    stream.publish(Committed(0, rows))
    assert seen == [0] and stream.position == len(rows)


def test_rows_already_published_are_not_published_again() -> None:
    """A commit of this node that another node's catch-up read back first (a shared store)
    goes out only for what is new."""
    stream = CommitStream()
    seen: list[Committed] = []
    stream.subscribe("test", seen.append)
    rows = tuple(build(players=2, seed_byte=5, stop_after=4).rows)
    stream.publish(Committed(0, rows[:3]))
    stream.publish(Committed(0, rows[:2], Batch()))  # all of it out already
    stream.publish(Committed(2, rows[2:], Batch()))  # the third out already
    assert [(c.position, c.rows) for c in seen] == [(0, rows[:3]), (3, rows[3:])]
