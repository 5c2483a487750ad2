"""The group-commit writer: the store on its own thread, one transaction per group.

One writer task takes every batch that is waiting and commits it in one transaction
(group commit), so throughput is not bound by one fsync per command; batches that create
or end a game (several statements) go in a second transaction after the plain ones.  A
command is acknowledged only after its row is committed.  A store that lives in another
process (a server's DuckDB file, served by its child: ``process/``) says how the event
loop commits to it (``EventStore.commit``): the event loop sends each group there and
awaits the answer itself.  Other stores commit on the store's own thread.  Reads that
may take a while go through a second connection on a thread of their own.  When nothing
has been committed for a moment, the writer folds the write-ahead log into the file, so
that commands seldom wait for a checkpoint.

Each commit goes out on the node's stream of committed rows (``stream.py``), with its
rows' positions in the log, before its waiters are answered; on a shared store the rows
other nodes committed go out in their place first, read back by position
(``catch_up``).  Whatever acts after a commit subscribes there: nothing here names it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from feastlog.service import tracing
from feastlog.service.store import Batch, StoreConflict, StoreUnavailable
from feastlog.service.store.port import EventStore
from feastlog.service.store.records import Signed, Written
from feastlog.service.store.stream import CommitStream, Committed

T = TypeVar("T")

# Group commit under load.  A DuckDB commit costs about 2 ms of CPU however few rows it
# holds, and on a busy server CPU is what every game waits for: when the last group held
# BUSY_GROUP batches or more (commands are arriving faster than commits return), the
# writer lingers LINGER seconds before taking the next group, so that one commit carries
# more commands.  Measured with 64 games at once: the store's CPU per command fell from
# 450-730 to 415-435 µs.  A server at half that load makes groups of one to three and
# commits each at once: lingering after groups of four already (tried) cost it more in
# latency (half-load p99 median 53 ms against 40) than it gained at full load.
BUSY_GROUP = 6
LINGER = 0.003

# Checkpoints in quiet moments.  DuckDB folds its write-ahead log into the file inside
# the commit that takes the log past 16 MB, and every commit behind it waits too: 40-50 ms
# as a rule on a season's file, and 0.9 s when the fold completes one of DuckDB's row
# groups (every 122,880 rows: it compresses the whole group then).  Once nothing has been
# committed for QUIET seconds, the writer folds a log of QUIET_LOG bytes or more itself
# (5-10 ms), so that under a tournament's usual load, with pauses between commands, the
# commands seldom meet a checkpoint.
QUIET = 0.25
QUIET_LOG = 256 * 1024

# Rows read back by position at a time, when the stream catches up on other nodes' commits.
CATCH_UP_ROWS = 1000
FILL_TRIES, FILL_PAUSE = 3, 0.05  # reading back the rows before a commit of this node

log = logging.getLogger("feastlog.store")

Folded = Mapping[str, Any]  # what a node folded for the rows it commits, by game id
Waiting = tuple[Batch, "asyncio.Future[Signed | None]", Folded]


class Database:
    """The store on its own thread, with a group-commit writer.

    With a store in another process the thread only waits for its answers (it never runs
    the store itself), and group commits skip it (``EventStore.commit``).  Reads that may
    take a while (loading a cold game, a page of the game list, stats) go through a second
    connection on a thread of their own, so they never hold up a group commit.
    """

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self.reader = store.reader()
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="duckdb")
        self._reads = ThreadPoolExecutor(max_workers=1, thread_name_prefix="duckdb-read")
        self._waiting: list[Waiting] = []
        # each waiting batch's commit span, while traces are on (``service/tracing.py``)
        self._spans: dict[asyncio.Future[Signed | None], Any] = {}
        self.stream = CommitStream()  # every commit's rows, in the log's order
        self._publishing = asyncio.Lock()  # the writer and a catch-up take turns
        self._catching: asyncio.Task[None] | None = None
        self._catch_again = False
        self._wake = asyncio.Event()
        self._writer: asyncio.Task[None] | None = None
        self._writing = False
        self.commits = 0
        # told of each commit: its batches and its transaction's seconds (the metrics)
        self.on_commit: Callable[[int, float], None] | None = None
        self._last_group = 0  # batches in the last group commit
        self._quiet: asyncio.Task[None] | None = None
        self._checkpointing = False
        self._committed_at = 0.0  # the event loop's clock at the last commit
        self._checked_at_commit = 0  # ``commits`` when the log was last looked at
        self.checkpoints = 0

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a store method on the store's thread."""
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn, *args)

    async def read(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(reader, *args)`` on the read thread (``reader``: the second connection)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._reads, fn, self.reader, *args)

    def start(self) -> None:
        """Start the writer task and its quiet checkpoints."""
        self._writer = asyncio.create_task(self._write_loop(), name="feastlog-writer")
        self._quiet = asyncio.create_task(self._quiet_loop(), name="feastlog-checkpoints")

    @property
    def queued(self) -> int:
        """How many batches wait for the writer now."""
        return len(self._waiting)

    async def commit(self, batch: Batch, folded: Folded | None = None) -> Signed | None:
        """Queue a batch and return once it is committed and on the stream: with the
        receipt signatures of the commit it went in (its rows among them), when the
        store's process signs them.  ``folded``: what the caller folded for its rows, by
        game id, handed to the stream's subscribers with them (``Committed.folded``).

        A waiter that is cancelled only stops waiting: the batch is written (or refused)
        and published all the same, so the outcome never depends on who is still listening.
        """
        if tracing.TRACER is None:  # traces off: nothing more on the commit's path
            return await self._queued(batch, folded, None)
        with tracing.commit_span(len(batch.rows)) as span:
            return await self._queued(batch, folded, span)

    async def _queued(self, batch: Batch, folded: Folded | None, span: Any) -> Signed | None:
        """The batch queued for the writer, and its answer awaited (``span``: its commit
        span while traces are on, under which the store's write of it is recorded)."""
        done: asyncio.Future[Signed | None] = asyncio.get_running_loop().create_future()
        if span is not None:
            self._spans[done] = span
        self._waiting.append((batch, done, folded or {}))
        self._wake.set()
        try:
            return await asyncio.shield(done)
        finally:
            if span is not None:
                self._spans.pop(done, None)

    async def _write_loop(self) -> None:
        while True:
            await self._wake.wait()
            if self._last_group >= BUSY_GROUP:
                await asyncio.sleep(LINGER)
            self._wake.clear()
            waiting, self._waiting = self._waiting, []
            self._last_group = len(waiting)
            if not waiting:
                continue
            self._writing = True
            try:
                # batches that write only rows and refusals first, in one commit; then
                # the rest (a game created or ended: its outcome rows, several statements,
                # two to four times a plain commit's time), so that plain commands do not
                # wait for the heavier commit they happened to arrive with
                plain = [w for w in waiting if w[0].plain]
                heavier = [w for w in waiting if not w[0].plain]
                for group in (plain, heavier):
                    if group:
                        await self._write(group)
            except Exception as error:  # a bug here must not leave a waiter hanging
                for _, done, _ in waiting:
                    _settle(done, error)
            finally:
                self._writing = False

    async def _quiet_loop(self) -> None:
        """Fold the write-ahead log whenever nothing has been committed for QUIET seconds."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(QUIET)
            busy = self._waiting or self._writing
            since = loop.time() - self._committed_at
            if not busy and self.commits != self._checked_at_commit and since >= QUIET:
                await self._checkpoint()

    async def _checkpoint(self) -> None:
        """One quiet checkpoint; a failure is logged and left to DuckDB's own checkpoint."""
        self._checked_at_commit = self.commits
        self._checkpointing = True
        started = time.perf_counter()
        try:
            folded = await self.call(self.store.checkpoint, QUIET_LOG)
        except StoreUnavailable as error:  # its cause is logged under its incident id
            log.warning(
                "a checkpoint in a quiet moment failed (incident %s); the store will "
                "checkpoint at its threshold instead",
                error.metadata["incident_id"],
            )
        except Exception:
            log.exception("a checkpoint in a quiet moment failed")
        else:
            if folded:
                self.checkpoints += 1
                log.debug(
                    "folded %d KiB of write-ahead log into the file in %.0f ms",
                    folded // 1024,
                    1000 * (time.perf_counter() - started),
                )
        finally:
            self._checkpointing = False

    async def _traced(self, batch: Batch, group: list[Waiting]) -> Written:
        """``_commit``, recorded as each batch's ``feastlog.store.write`` span while traces
        are on (``service/tracing.py``)."""
        if not self._spans:
            return await self._commit(batch)
        began, failed = time.time_ns(), True
        try:
            written = await self._commit(batch)
            failed = False
            return written
        finally:
            spans = [self._spans.get(done) for _, done, _ in group]
            tracing.store_write(spans, began, time.time_ns(), failed)

    async def _write(self, waiting: list[Waiting]) -> None:
        """All waiting batches in one transaction; after a failure, each batch alone.

        Writing each alone after a failed group commit means a failing write fails only
        the commands it concerns, never another game's.
        """
        if len(waiting) > 1:
            merged = Batch()
            folded: dict[str, Any] = {}
            for batch, _, of_batch in waiting:
                merged.extend(batch)
                folded.update(of_batch)
            started = asyncio.get_running_loop().time()
            try:
                written = await self._traced(merged, waiting)
            except StoreConflict as error:
                # a batch clashed with what is stored (on a shared store: another node took
                # its seq first, as two nodes' timers for one deadline do): the log's
                # concurrency at work, not a failure; only that batch is refused below
                log.info(
                    "a group commit of %d batches clashed with the log (incident %s); "
                    "writing each alone",
                    len(waiting),
                    error.metadata["incident_id"],
                )
            except StoreUnavailable as error:  # its cause is logged under its incident id
                log.warning(
                    "a group commit of %d batches failed (incident %s); writing each alone",
                    len(waiting),
                    error.metadata["incident_id"],
                )
            except Exception:
                log.exception(
                    "a group commit of %d batches failed; writing each alone", len(waiting)
                )
            else:
                self._committed(len(waiting), started)
                await self._publish(merged, written, folded)
                for _, done, _ in waiting:
                    _settle(done, None, written.signed)
                return
        for batch, done, of_batch in waiting:
            started = asyncio.get_running_loop().time()
            try:
                written = await self._traced(batch, [(batch, done, of_batch)])
            except Exception as error:
                _settle(done, error)
            else:
                self._committed(1, started)
                await self._publish(batch, written, of_batch)
                _settle(done, None, written.signed)

    def _committed(self, batches: int, started: float) -> None:
        """Count a commit of ``batches`` begun at ``started`` and note when it was made."""
        self.commits += 1
        self._committed_at = asyncio.get_running_loop().time()
        if self.on_commit is not None:
            self.on_commit(batches, self._committed_at - started)

    async def _commit(self, batch: Batch) -> Written:
        """One transaction: sent by the event loop itself to a store in a child process
        (no thread of this process has to win the interpreter lock), else on the store's
        thread."""
        commit = self.store.commit
        if commit is not None:
            return await commit(batch)
        return Written(await self.call(self.store.write, batch))

    async def _publish(self, batch: Batch, written: Written, folded: Folded) -> None:
        """A commit on the stream, in its place: on a shared store, the rows other nodes
        committed before it go out first (read back by position)."""
        rows = tuple(batch.appended())
        position = written.first if written.first is not None else self.stream.position
        async with self._publishing:
            if self.store.shared and rows:
                await self._fill_before(position)
            self.stream.publish(Committed(position, rows, batch, folded))

    async def _fill_before(self, position: int) -> None:
        """Publish the rows other nodes committed before ``position``, trying the read a
        few times: given up, the commit goes out all the same (memory finds the rows it
        lacks at its next conflict, the tree at its next head), and the gap is logged."""
        for attempt in range(FILL_TRIES):
            try:
                await self._catch_up_to(position)
                return
            except Exception:
                if attempt + 1 == FILL_TRIES:
                    log.exception(
                        "the rows other nodes committed before log position %d could not "
                        "be read: the stream goes on past them",
                        position,
                    )
                    return
                await asyncio.sleep(FILL_PAUSE)

    def start_stream(self, position: int) -> None:
        """Begin the stream at the log's size (at start, before any commit of this node)."""
        self.stream.position = position

    def catch_up(self) -> None:
        """Publish the rows other nodes committed since the stream's position (a shared
        store's notification, or its listener reconnected): one catch-up at a time, run
        again when asked meanwhile."""
        if self._catching is not None and not self._catching.done():
            self._catch_again = True
            return
        self._catching = asyncio.get_running_loop().create_task(self._catching_up())

    async def _catching_up(self) -> None:
        while True:
            self._catch_again = False
            try:
                async with self._publishing:
                    await self._catch_up_to(None)
            except Exception:
                log.exception("the rows other nodes committed could not be read yet")
            if not self._catch_again:
                return

    async def _catch_up_to(self, position: int | None) -> None:
        """Publish every committed row from the stream's position up to ``position`` (not
        included; None: every one there is), read back from the store in log order."""
        while position is None or self.stream.position < position:
            at = self.stream.position
            found = await self.read(_rows_from, at)
            placed = [(p, r) for p, r in found if position is None or p < position]
            if not placed or placed[0][0] != at:
                return  # nothing more (or a place not committed yet): the next catch-up
            self.stream.publish(Committed(at, tuple(r for _, r in placed)))
            if len(found) < CATCH_UP_ROWS:
                return

    async def close(self) -> None:
        """Finish waiting writes, stop the writer and close the file."""
        while self._waiting or self._writing or self._checkpointing:
            await asyncio.sleep(0.01)
        for task in (self._writer, self._quiet, self._catching):
            if task is not None:
                task.cancel()
        if self._catching is not None:  # a catch-up reading other nodes' rows: let it end
            with contextlib.suppress(asyncio.CancelledError):
                await self._catching
        self._reads.shutdown(wait=True)
        await self.call(self.reader.close)
        await self.call(self.store.close)
        self._thread.shutdown(wait=True)


def _rows_from(store: EventStore, position: int) -> list[tuple[int, Any]]:
    """The committed rows from a log position on, on the read thread."""
    return store.rows_from(position, CATCH_UP_ROWS)


def _settle(
    done: asyncio.Future[Signed | None], error: BaseException | None, signed: Signed | None = None
) -> None:
    """Tell one waiter how its batch ended (and its commit's signatures)."""
    if done.done():
        return
    if error is None:
        done.set_result(signed)
    else:
        done.set_exception(error)
