"""Work over every game of a file, spread over processes: audit --all, projection rebuild.

Each worker process opens the file read-only and reads its own share of the games in
one ordered, streamed scan (``Store.scan`` with ``part``), so no rows cross between
processes: only the results (audit reports, projection rows) come back.  Results come
back in the order of the game list whatever the number of workers, so one worker and
many report exactly the same.
"""

from __future__ import annotations

import contextlib
import heapq
import multiprocessing
import os
import queue
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from google.protobuf.message import DecodeError

from feastlog.replay.history import command_of, genesis_of, seed_of
from feastlog.replay.record import COMMAND, GENESIS, SEED_REVEAL
from feastlog.service import projection
from feastlog.service.store import Store, StoredGame, outcomes

T = TypeVar("T")
PROGRESS_EVERY = 25  # games between two progress messages from a worker


def default_workers() -> int:
    """Every core this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _share(
    path: str,
    work: Callable[[StoredGame], T],
    part: tuple[int, int] | None,
    game_kind: str,
    progress: Any,
) -> list[tuple[int, T]]:
    """One worker's share: (place in the game list, result) for each of its games."""
    store = Store(path, read_only=True)
    done: list[tuple[int, T]] = []
    try:
        for n, stored in store.scan_numbered(part, game_kind):
            done.append((n, work(stored)))
            if progress is not None and len(done) % PROGRESS_EVERY == 0:
                progress.put(PROGRESS_EVERY)
    finally:
        store.close()
    if progress is not None:
        progress.put(len(done) % PROGRESS_EVERY)
    return done


def over_games(
    path: str,
    work: Callable[[StoredGame], T],
    workers: int = 1,
    game_kind: str = "",
    advance: Callable[[int], None] = lambda _: None,
) -> Iterator[T]:
    """``work(game)`` for every game with rows, in the order of the game list.

    ``work`` must be a module-level function (it is sent to the worker processes);
    ``advance(k)`` is told whenever k more games are done.
    """
    if workers <= 1:
        store = Store(path, read_only=True)
        try:
            for _, stored in store.scan_numbered(None, game_kind):
                yield work(stored)
                advance(1)
        finally:
            store.close()
        return
    # spawn, not fork: a forked DuckDB or gRPC runtime is not safe to use
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager, context.Pool(workers) as pool:
        progress = manager.Queue()
        shares = [
            pool.apply_async(_share, (path, work, (k, workers), game_kind, progress))
            for k in range(workers)
        ]
        _follow(shares, progress, advance)
        results = [s.get() for s in shares]
    for _, result in heapq.merge(*results, key=lambda found: found[0]):
        yield result


def _project_share(path: str, part: tuple[int, int] | None, into: str, progress: Any) -> int:
    """One worker's share of a projection rebuild, written to a file of its own."""

    def projected() -> Iterator[Any]:
        for i, found in enumerate(over_games(path, projection.rows_of_stored), start=1):
            yield found
            if progress is not None and i % PROGRESS_EVERY == 0:
                progress.put(PROGRESS_EVERY)

    if part is None:
        return outcomes.write_file(into, projected())
    store = Store(path, read_only=True)
    try:

        def mine() -> Iterator[Any]:
            for i, (_, stored) in enumerate(store.scan_numbered(part), start=1):
                yield projection.rows_of_stored(stored)
                if progress is not None and i % PROGRESS_EVERY == 0:
                    progress.put(PROGRESS_EVERY)

        return outcomes.write_file(into, mine())
    finally:
        store.close()


def rebuild_projection(
    path: str, workers: int = 1, advance: Callable[[int], None] = lambda _: None
) -> int:
    """Make a file's outcomes projection again from its log; returns the games projected.

    Each worker folds its share of the finished games into a file of its own while the
    log is read-only; then the file is opened for writing once and takes them all in.
    """
    with tempfile.TemporaryDirectory(prefix="feastlog-projection-") as folder:
        shares = [str(Path(folder) / f"share{k}.duckdb") for k in range(max(workers, 1))]
        if workers <= 1:
            _project_share(path, None, shares[0], _Advance(advance))
        else:
            context = multiprocessing.get_context("spawn")
            with context.Manager() as manager, context.Pool(workers) as pool:
                progress = manager.Queue()
                done = [
                    pool.apply_async(_project_share, (path, (k, workers), into, progress))
                    for k, into in enumerate(shares)
                ]
                _follow(done, progress, advance)
                for d in done:
                    d.get()
        store = Store(path)
        try:
            return store.adopt_projection(shares)
        finally:
            store.close()


class _Advance:
    """A progress sink in this process with the interface of a queue."""

    def __init__(self, advance: Callable[[int], None]) -> None:
        self.advance = advance

    def put(self, count: int) -> None:
        """Tell the progress bar."""
        self.advance(count)


def _follow(shares: list[Any], progress: Any, advance: Callable[[int], None]) -> None:
    """Pass workers' progress on until every share is done."""
    while not all(s.ready() for s in shares):
        try:
            advance(progress.get(timeout=0.2))
        except queue.Empty:
            continue
    while not progress.empty():
        advance(progress.get())


def read_and_decode(path: str, game_kind: str = "") -> tuple[int, float]:
    """The baseline for bulk work: (rows, seconds) to read every row in one ordered scan
    and decode each body with protobuf, doing nothing else."""
    decoders = {GENESIS: genesis_of, COMMAND: command_of, SEED_REVEAL: seed_of}
    store = Store(path, read_only=True)
    try:
        start = time.perf_counter()
        rows = 0
        for stored in store.scan(None, game_kind):
            for row in stored.rows:
                # a body that does not decode costs the same; the audit names it
                with contextlib.suppress(DecodeError, KeyError):
                    decoders[row.kind](row)
            rows += len(stored.rows)
        return rows, time.perf_counter() - start
    finally:
        store.close()
