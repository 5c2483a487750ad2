"""A batch that clashes with the shared log (a seq another node took first, as two nodes'
timers for one deadline do) is refused alone, quietly: the other games' batches of the
same group commit are recorded, and nothing is logged above INFO."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Any

import pytest

from feastlog.service.store import Batch, StoreConflict
from feastlog.service.store.postgres import PgStore
from feastlog.service.store.writer import Database
from tests.recordutil import build, games_batch


def test_a_batch_another_node_took_the_seq_of_is_refused_alone_and_quietly(
    postgres: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    clashing, other = build(players=2, seed_byte=21), build(players=2, seed_byte=22)
    first = games_batch([replace(b, rows=b.rows[:3]) for b in (clashing, other)])
    elsewhere = PgStore(postgres)  # the other node: it takes seq 4 of the first game
    elsewhere.write(first)
    elsewhere.write(Batch(rows=[clashing.rows[3]]))
    elsewhere.close()
    taken = replace(clashing.rows[3], command_id="mine", hash="ab" * 32)
    groups: list[int] = []

    async def run() -> Any:
        db = Database(PgStore(postgres))
        write = db.store.write

        def counted(batch: Batch) -> Any:
            groups.append(len(batch.rows))
            return write(batch)

        db.store.write = counted  # type: ignore[method-assign]
        db.start_stream(0)
        db.start()
        try:
            return await asyncio.gather(
                db.commit(Batch(rows=[taken])),
                db.commit(Batch(rows=[other.rows[3]])),
                return_exceptions=True,
            )
        finally:
            await db.close()

    refused, recorded = asyncio.run(asyncio.wait_for(run(), 30))
    assert isinstance(refused, StoreConflict) and "out of date" in str(refused)
    assert not isinstance(recorded, BaseException)
    assert groups[0] == 2  # both went in one group commit first, then each alone
    store = PgStore(postgres)
    try:
        assert store.rows(other.rows[0].game_id)[-1] == other.rows[3]
        assert store.rows(clashing.rows[0].game_id)[-1] == clashing.rows[3]  # the other node's
    finally:
        store.close()
    louder = [f"{r.levelname} {r.getMessage()}" for r in caplog.records if r.levelno > logging.INFO]
    assert louder == []
