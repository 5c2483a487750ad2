"""Group commit: every waiting batch in one commit, and more of them per commit under load."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

from feastlog.service.store import Batch, Rejection, writer
from feastlog.service.store.process import ProcessStore, games_to_register
from feastlog.service.store.writer import Database
from tests.recordutil import build, games_batch


class Recording:
    """A store that records how many refusals each commit carried (one per batch here)."""

    shared = False
    commit = None  # written on the store's thread, as a store in this process is

    def __init__(self) -> None:
        self.groups: list[int] = []
        self._lock = threading.Lock()

    def write(self, batch: Batch) -> None:
        with self._lock:
            self.groups.append(len(batch.rejections))

    def reader(self) -> Recording:
        return self

    def close(self) -> None:
        pass


def batch(n: int) -> Batch:
    """A batch of one stored refusal (what it holds does not matter here)."""
    refused = Rejection("g_x", n, "seat:0", f"c{n}", b"", "X", "x", "", "m", "now")
    return Batch(rejections=[refused])


async def commit_all(db: Database, first: int, count: int) -> None:
    await asyncio.gather(*(db.commit(batch(first + i)) for i in range(count)))


def run(scenario: Any) -> list[int]:
    store = Recording()

    async def main() -> None:
        db = Database(store)  # type: ignore[arg-type]
        db.start()
        try:
            await scenario(db)
        finally:
            await db.close()

    asyncio.run(main())
    return store.groups


def test_batches_waiting_together_are_committed_together() -> None:
    async def scenario(db: Database) -> None:
        await commit_all(db, 0, 6)

    assert run(scenario) == [6]


def test_a_quiet_server_commits_a_batch_at_once_without_lingering_for_more() -> None:
    async def scenario(db: Database) -> None:
        await db.commit(batch(0))  # a group of one: not busy
        loop = asyncio.get_running_loop()
        later: list[asyncio.Future[Any]] = []
        # another batch arrives a third of the way into what would be a linger
        loop.call_later(
            writer.LINGER / 3, lambda: later.append(asyncio.ensure_future(db.commit(batch(2))))
        )
        await db.commit(batch(1))
        await asyncio.sleep(writer.LINGER)
        await asyncio.gather(*later)

    assert run(scenario) == [1, 1, 1]


def test_after_a_large_group_the_writer_lingers_and_takes_the_late_batches_too() -> None:
    async def scenario(db: Database) -> None:
        await commit_all(db, 0, writer.BUSY_GROUP)  # one group of BUSY_GROUP: busy
        loop = asyncio.get_running_loop()
        later: list[asyncio.Future[Any]] = []
        # two more batches arrive a third of the way into the linger
        loop.call_later(
            writer.LINGER / 3,
            lambda: later.extend(asyncio.ensure_future(db.commit(batch(n))) for n in (11, 12)),
        )
        await db.commit(batch(10))
        await asyncio.gather(*later)

    assert run(scenario) == [writer.BUSY_GROUP, 3]


def test_plain_batches_are_committed_before_a_heavier_one_that_came_with_them() -> None:
    """A batch that ends a game (outcome rows: several statements) goes in a commit of its
    own after the plain batches that waited with it, which are acknowledged first."""
    written: list[tuple[int, int]] = []
    acknowledged: list[str] = []

    class Kinds(Recording):
        def write(self, batch: Batch) -> None:
            written.append((len(batch.rejections), len(batch.outcomes)))

    ending = Batch(outcomes=[("outcome_games", [["g_y"]])])
    assert batch(0).plain and not ending.plain

    async def main() -> None:
        db = Database(Kinds())  # type: ignore[arg-type]
        db.start()

        async def commit(name: str, made: Batch) -> None:
            await db.commit(made)
            acknowledged.append(name)

        try:
            await asyncio.gather(
                commit("ending", ending), commit("plain 1", batch(1)), commit("plain 2", batch(2))
            )
        finally:
            await db.close()

    asyncio.run(main())
    assert written == [(2, 0), (0, 1)]
    assert acknowledged == ["plain 1", "plain 2", "ending"]


class Checkpointing(Recording):
    """A recording store that also records the quiet checkpoints it is asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[int] = []

    def checkpoint(self, least: int) -> int:
        self.asked.append(least)
        return 4096


async def until(done: Any, seconds: float = 10.0) -> None:
    """Wait until ``done()`` holds (a loaded machine may take a while), or fail."""
    deadline = asyncio.get_running_loop().time() + seconds
    while not done():
        assert asyncio.get_running_loop().time() < deadline, "waited too long"
        await asyncio.sleep(0.01)


def test_a_quiet_writer_checkpoints_once_after_its_last_commit(monkeypatch: Any) -> None:
    monkeypatch.setattr(writer, "QUIET", 0.02)
    store = Checkpointing()

    async def main() -> None:
        db = Database(store)  # type: ignore[arg-type]
        db.start()
        try:
            await asyncio.sleep(writer.QUIET * 4)  # nothing written yet: nothing to fold
            assert store.asked == []
            await commit_all(db, 0, 3)
            await until(lambda: store.asked)
            await asyncio.sleep(writer.QUIET * 4)  # still quiet, nothing new: once is enough
            assert (store.asked, db.checkpoints) == ([writer.QUIET_LOG], 1)
        finally:
            await db.close()

    asyncio.run(main())


def test_a_busy_writer_leaves_checkpoints_to_the_quiet_moments(monkeypatch: Any) -> None:
    monkeypatch.setattr(writer, "QUIET", 0.5)
    store = Checkpointing()

    async def main() -> None:
        db = Database(store)  # type: ignore[arg-type]
        db.start()
        try:
            for n in range(60):  # a commit every 10 ms: never QUIET seconds without one
                await db.commit(batch(n))
                await asyncio.sleep(0.01)
            busy = list(store.asked)
            await until(lambda: store.asked)
            assert len(store.groups) == 60
            assert busy == []
            assert store.asked == [writer.QUIET_LOG]
        finally:
            await db.close()

    asyncio.run(main())


def test_a_failed_quiet_checkpoint_is_logged_and_the_writer_goes_on(
    monkeypatch: Any, caplog: Any
) -> None:
    monkeypatch.setattr(writer, "QUIET", 0.02)
    tried: list[int] = []

    class Failing(Recording):
        def checkpoint(self, least: int) -> int:
            tried.append(least)
            raise OSError("disk full")

    store = Failing()

    async def main() -> None:
        db = Database(store)  # type: ignore[arg-type]
        db.start()
        try:
            await db.commit(batch(0))
            await until(lambda: tried)
            await db.commit(batch(1))  # the writer still takes batches
        finally:
            await db.close()

    asyncio.run(main())
    assert store.groups == [1, 1]
    assert "a checkpoint in a quiet moment failed" in caplog.text


def test_a_servers_store_folds_its_log_into_the_file_when_the_tables_go_quiet(
    monkeypatch: Any, tmp_path: Path
) -> None:
    """The DuckDB file as a server holds it (in its store process): after a quiet moment
    the write-ahead log is empty, and every committed row is in the file."""
    monkeypatch.setattr(writer, "QUIET", 0.05)
    monkeypatch.setattr(writer, "QUIET_LOG", 1)
    path = tmp_path / "feastlog.duckdb"
    log = Path(f"{path}.wal")
    built = build(players=2, seed_byte=7, stop_after=5)

    async def main() -> None:
        db = Database(ProcessStore(str(path), games_to_register() or ()))
        db.start()
        try:
            await db.commit(games_batch([built]))
            assert log.stat().st_size > 0
            await until(lambda: db.checkpoints)
            assert db.checkpoints == 1
            assert not log.exists() or log.stat().st_size == 0
            assert db.store.rows(built.rows[0].game_id) == tuple(built.rows)
        finally:
            await db.close()

    asyncio.run(main())
