"""Work over every game of a file, spread over processes: audit --all, projection rebuild.

Each worker opens the file read-only and reads its own share of the games in one
ordered, streamed scan (``Store.scan`` with ``part``), so no rows cross between
processes: only the results (audit reports, projection rows) come back.  This process
is one of the workers of ``over_games``, once the others have started.  Results come
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

from feastlog.replay.record.history import command_of, genesis_of, seed_of
from feastlog.replay.record.rows import COMMAND, GENESIS, SEED_REVEAL
from feastlog.service import runtime
from feastlog.service.store import StoredGame, projection
from feastlog.service.store.duckdb import Store, outcomes
from feastlog.service.store.port import is_postgres, open_store
from feastlog.v1 import record_pb2

T = TypeVar("T")
PROGRESS_EVERY = 25  # games between two progress messages from a worker
DONE = None  # a worker's last message on its progress queue: its share is done
Part = tuple[tuple[int, int] | None, tuple[int, int] | None]  # a worker's (part, share)


def default_workers() -> int:
    """Every core this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


PER_CORE = 4  # the most workers a core is given, however many are asked for


def workers_for(asked: int | None, items: int) -> int:
    """Processes for ``items`` pieces of work: as many as asked (default: every core),
    never more than the pieces nor PER_CORE a core.  Each is a process start and a share
    of the machine: 24 workers for one game took 15 s against 0.9, and 1,000 ran the
    load average to 86."""
    cores = default_workers()
    return max(1, min(asked or cores, PER_CORE * cores, items))


# The progress queue of a worker process, set when the pool starts it (a queue can only
# reach a process as it starts; a manager process to carry it costs a process start).
_PROGRESS: Any = None


def _hear(progress: Any) -> None:
    """Pool initializer: keep the queue this worker reports its progress on."""
    global _PROGRESS
    _PROGRESS = progress


def _share(
    path: str, work: Callable[[StoredGame], T], part: Part, game_kind: str
) -> list[tuple[int, T]]:
    """One worker's share: (place in the game list, result) for each of its games."""
    done: list[tuple[int, T]] = []
    try:
        store = open_store(path, read_only=True)
        try:
            with runtime.bulk_collection():
                for n, stored in store.scan_numbered(part[0], game_kind, share=part[1]):
                    done.append((n, work(stored)))
                    if _PROGRESS is not None and len(done) % PROGRESS_EVERY == 0:
                        _PROGRESS.put(PROGRESS_EVERY)
        finally:
            store.close()
    finally:
        _said_done(len(done))
    return done


def _said_done(done: int) -> None:
    """A worker's last progress: the games not yet told, then DONE (also when it failed),
    so the pool's owner knows at once that this share's result is on its way."""
    if _PROGRESS is not None:
        _PROGRESS.put(done % PROGRESS_EVERY)
        _PROGRESS.put(DONE)


def threads() -> int:
    """The threads this process runs, as the kernel counts them (DuckDB's and gRPC's
    threads included, which ``threading`` does not see)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:  # not on Linux: count none as known
        return 0


def worker_context() -> Any:
    """How worker processes start: forked when this process runs one thread, else spawned.

    A fork copies a process with every module imported, so a worker starts in a few
    milliseconds instead of importing the project and opening DuckDB again (about 0.7 s
    of CPU a worker, which on a 300-game file cost more than the worker saved). A fork
    is safe only with no other thread running (one could hold a lock the child inherits
    held): a process with an open DuckDB connection or a gRPC channel runs several, and
    its workers are spawned as before.
    """
    return multiprocessing.get_context("fork" if threads() == 1 else "spawn")


def sampled(every: int) -> tuple[int, int] | None:
    """The scan part of every ``every``-th game of the list (None: every game)."""
    return (0, every) if every > 1 else None


def shares_of(path: str, workers: int, every: int) -> list[Part]:
    """Each worker's scan of the sample (``every``): the k-th of ``workers`` runs of
    consecutive games of about as many rows each, in a file nobody writes to meanwhile
    (dealt k modulo n, games of different lengths gave one of two workers a tenth more
    rows, and a 300-row game more).  A database servers write to is dealt as before: each
    worker's scan is its own transaction, and runs counted in two snapshots could meet."""
    if is_postgres(path):
        return [((k * every, workers * every), None) for k in range(workers)]
    return [(sampled(every), (k, workers)) for k in range(workers)]


def over_games(
    path: str,
    work: Callable[[StoredGame], T],
    workers: int = 1,
    game_kind: str = "",
    advance: Callable[[int], None] = lambda _: None,
    every: int = 1,
) -> Iterator[T]:
    """``work(game)`` for every game with rows, in the order of the game list.

    ``work`` must be a module-level function (it is sent to the worker processes);
    ``advance(k)`` is told whenever k more games are done.  ``every=k`` takes only every
    k-th game of the list: a sample spread over the whole file, read by the same scans.
    """
    if workers <= 1:
        store = open_store(path, read_only=True)
        try:
            with runtime.bulk_collection():
                for _, stored in store.scan_numbered(sampled(every), game_kind):
                    yield work(stored)
                    advance(1)
        finally:
            store.close()
        return
    # This process is worker 0, once the others have started: a worker of its own would
    # cost a start, the copies a forked process makes of what it touches, and its results
    # sent back, while this one waited.
    parts = shares_of(path, workers, every)
    context = worker_context()
    progress = context.Queue()
    with context.Pool(workers - 1, initializer=_hear, initargs=(progress,)) as pool:
        shares = [pool.apply_async(_share, (path, work, part, game_kind)) for part in parts[1:]]
        own, waiting = _own_share(path, work, parts[0], game_kind, (progress, len(shares)), advance)
        _follow(shares, progress, advance, waiting)
        results = [own] + [s.get() for s in shares]
    for _, result in heapq.merge(*results, key=lambda found: found[0]):
        yield result


def _own_share(
    path: str,
    work: Callable[[StoredGame], T],
    part: Part,
    game_kind: str,
    others: tuple[Any, int],
    advance: Callable[[int], None],
) -> tuple[list[tuple[int, T]], int]:
    """This process's share, the other workers' progress (their queue, how many) passed
    on as it goes: (place in the game list, result) for each of its games, and how many
    of the others have yet to say they are done."""
    progress, waiting = others
    done: list[tuple[int, T]] = []
    store = open_store(path, read_only=True)
    try:
        with runtime.bulk_collection():
            for n, stored in store.scan_numbered(part[0], game_kind, share=part[1]):
                done.append((n, work(stored)))
                advance(1)
                if len(done) % PROGRESS_EVERY == 0:
                    waiting -= _heard(progress, advance)
    finally:
        store.close()
    return done, waiting


def _project_share(path: str, part: tuple[int, int] | None, into: str) -> int:
    """One worker's share of a projection rebuild, written to a file of its own."""
    progress = _PROGRESS
    told = 0

    def projected(games: Iterator[StoredGame]) -> Iterator[Any]:
        nonlocal told
        for stored in games:
            yield projection.rows_of_stored(stored)
            told += 1
            if progress is not None and told % PROGRESS_EVERY == 0:
                progress.put(PROGRESS_EVERY)

    try:
        store = open_store(path, read_only=True)
        try:
            with runtime.bulk_collection():
                return outcomes.write_file(into, projected(store.scan(part)))
        finally:
            store.close()
    finally:
        _said_done(told)


def rebuild_projection(
    path: str, workers: int = 1, advance: Callable[[int], None] = lambda _: None
) -> int:
    """Make a file's outcomes projection again from its log; returns the games projected.

    Each worker folds its share of the finished games into a file of its own while the
    log is read-only; then the file is opened for writing once and takes them all in.
    """
    if is_postgres(path):  # one transaction that holds writers off while it reads
        # imported here: the workers of a DuckDB file's bulk work never need psycopg
        from feastlog.service.store.postgres import PgStore

        database = PgStore(path)
        try:
            return database.rebuild_projection_from_log()
        finally:
            database.close()
    with tempfile.TemporaryDirectory(prefix="feastlog-projection-") as folder:
        shares = [str(Path(folder) / f"share{k}.duckdb") for k in range(max(workers, 1))]
        if workers <= 1:
            _hear(_Advance(advance))
            try:
                _project_share(path, None, shares[0])
            finally:
                _hear(None)
        else:
            context = worker_context()
            progress = context.Queue()
            with context.Pool(workers, initializer=_hear, initargs=(progress,)) as pool:
                done = [
                    pool.apply_async(_project_share, (path, (k, workers), into))
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

    def put(self, count: int | None) -> None:
        """Tell the progress bar (DONE tells it nothing)."""
        if count is not DONE:
            self.advance(count)


def _heard(progress: Any, advance: Callable[[int], None]) -> int:
    """Pass on the progress waiting on the queue, without waiting: the DONEs it held."""
    done = 0
    with contextlib.suppress(queue.Empty):
        while True:
            said = progress.get_nowait()
            if said is DONE:
                done += 1
            else:
                advance(said)
    return done


def _follow(
    shares: list[Any], progress: Any, advance: Callable[[int], None], waiting: int = -1
) -> None:
    """Pass workers' progress on until each share has said it is done (``waiting``: the
    shares yet to say so, every one by default).

    Each worker's DONE comes after the rest of its progress, just before its result:
    waiting for them wastes no time (polling for the results and then for progress still
    on its way cost 0.3 s an audit, a third of a 300-game file's with two workers).  A
    worker that ends without a word (killed) is seen on a quiet queue.
    """
    waiting = len(shares) if waiting < 0 else waiting
    while waiting > 0:
        try:
            said = progress.get(timeout=0.2)
        except queue.Empty:
            if all(s.ready() for s in shares):
                return
            continue
        if said is DONE:
            waiting -= 1
        else:
            advance(said)


def read_and_decode(path: str, game_kind: str = "", every: int = 1) -> tuple[int, float]:
    """The baseline for bulk work: (rows, seconds) to read every row in one ordered scan
    and decode each body with protobuf, doing nothing else (``every``: as ``over_games``)."""
    decoders = {GENESIS: genesis_of, COMMAND: command_of, SEED_REVEAL: seed_of}
    store = open_store(path, read_only=True)
    try:
        with runtime.bulk_collection():  # as the work it is the baseline of
            start = time.perf_counter()
            rows = 0
            for stored in store.scan(sampled(every), game_kind):
                for row in stored.rows:
                    # a body that does not decode costs the same; the audit names it
                    with contextlib.suppress(DecodeError, KeyError):
                        decoders[row.kind](row)
                rows += len(stored.rows)
            return rows, time.perf_counter() - start
    finally:
        store.close()


def plain_read_and_decode(path: str) -> tuple[int, float]:
    """(rows, seconds) of the plainest ordered read of a DuckDB file's log with decoding:
    ``SELECT kind, body FROM events ORDER BY game_id, seq``, each body decoded by protobuf;
    no row values, no games, no seeds or packs.  What ``read_and_decode`` (``Store.scan``,
    which export, import and rebuilds ride on) and the audit are measured against."""
    decoders = {
        GENESIS: record_pb2.Genesis.FromString,
        COMMAND: record_pb2.Command.FromString,
        SEED_REVEAL: record_pb2.SeedReveal.FromString,
    }
    store = Store(path, read_only=True)
    try:
        with runtime.bulk_collection():
            start = time.perf_counter()
            rows = 0
            for kind, body in store.bodies():
                with contextlib.suppress(DecodeError, KeyError):
                    decoders[kind](body)
                rows += 1
            return rows, time.perf_counter() - start
    finally:
        store.close()
