"""Following the shared log: a node hears of rows other nodes commit (PostgreSQL
LISTEN/NOTIFY) and folds them onto the games it holds in memory."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from feastlog.service.app.live import live_from_store
from feastlog.service.store import Batch, StoredGame
from feastlog.service.store.postgres import PgStore
from feastlog.service.store.postgres.follow import Follower, parse
from tests.recordutil import build, games_batch


def test_a_node_hears_of_every_commit_another_node_makes(postgres: str) -> None:
    built = build(players=3, seed_byte=3)
    heard: list[tuple[str, int]] = []

    async def follow() -> None:
        loop = asyncio.get_running_loop()
        follower = Follower(postgres, loop, lambda g, s: heard.append((g, s)), lambda: None)
        writer = PgStore(postgres)  # the other node
        follower.start()
        try:
            await asyncio.to_thread(follower.listening.wait, 10)
            await asyncio.to_thread(writer.write, games_batch([build(players=2, seed_byte=4)]))
            first = games_batch([replace(built, rows=built.rows[:5])])
            await asyncio.to_thread(writer.write, first)
            for start in range(5, len(built.rows), 7):  # group commits of up to 7 rows
                batch = Batch(rows=built.rows[start : start + 7])
                await asyncio.to_thread(writer.write, batch)
            while not heard or heard[-1] != (built.rows[0].game_id, len(built.rows)):
                await asyncio.sleep(0.05)
        finally:
            follower.stop()
            writer.close()

    asyncio.run(asyncio.wait_for(follow(), 30))
    game_id = built.rows[0].game_id
    commits = [5] + [min(start + 7, len(built.rows)) for start in range(5, len(built.rows), 7)]
    assert [seq for g, seq in heard if g == game_id] == commits  # each commit, its last seq
    assert len([g for g, _ in heard if g != game_id]) == 1  # the other game, once


def test_rows_committed_elsewhere_fold_onto_a_live_game() -> None:
    built = build(kind="menu-masters", players=3, seed_byte=5)
    whole = live_from_store(
        StoredGame(tuple(built.rows), built.seed, built.pack_bytes, built.names)
    )
    behind = live_from_store(
        StoredGame(tuple(built.rows[:9]), built.seed, built.pack_bytes, built.names)
    )
    woken = asyncio.Queue[None](1)  # a watcher's wake-up (it reads the rows itself)
    behind.watchers.add(woken)
    assert not behind.follow_on(built.rows[10:])  # a gap: nothing changes
    assert not behind.follow_on([replace(built.rows[9], state_hash="00" * 32)])
    assert behind.last_seq == 9 and woken.empty()
    assert behind.follow_on(built.rows[9:])
    assert behind.rows == whole.rows and behind.facts == whole.facts
    assert behind.tables == whole.tables and behind.over
    assert woken.qsize() == 1  # woken once for all the rows
    assert behind.command_ids == whole.command_ids


def test_notifications_of_another_form_are_ignored() -> None:
    assert parse("g_1 12") == ("g_1", 12)
    assert parse("g_1") is None and parse("") is None and parse("g_1 x") is None
