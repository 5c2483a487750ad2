"""What ``feastlog bench-audit`` measures: ``audit --all`` throughput with one worker and with every
core, beside one ordered scan of the same rows with protobuf decoding (what DuckDB and
protobuf can do, the fair baseline), and the time to answer a state-at-seq query for a
~300-row game.

The games are built without a server (seeded random legal play through the fold, the
same rows the service writes), replicated with fresh ids (each its own chain) and
stored in a temporary DuckDB file through the store's bulk writes.
"""

from __future__ import annotations

import asyncio
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import click
import grpc

from feastlog.client import AsyncClient, calls
from feastlog.replay.games.engine import Viewer
from feastlog.replay.record.visibility import seen
from feastlog.service.app.bulk import plain_read_and_decode, read_and_decode
from feastlog.service.app.offline import OfflineFile
from feastlog.service.app.season import audit_all
from feastlog.service.bench.data import Built, build, build_store, store_games
from feastlog.service.grpc.server import create_server


def _median_ms(fn: Callable[[], object], times: int) -> float:
    """The median wall time of ``fn`` in milliseconds."""
    spent = []
    for _ in range(times):
        start = time.perf_counter()
        fn()
        spent.append((time.perf_counter() - start) * 1000)
    return statistics.median(spent)


async def _grpc_state_at_ms(path: Path, game_id: str, seq: int, times: int) -> float:
    """Median ms of ReplayService.GetStateAt as the arbiter, through a real server."""
    running = await create_server(str(path), "127.0.0.1:0")
    try:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{running.port}")
        key = running.organiser_key
        async with AsyncClient(
            channel=channel, organiser_key=key, retries=0, timeout=None
        ) as client:
            call = calls.state_at(game_id, seq, "seat:1")  # made once, sent each time
            await client.run(call)  # loads (folds) the game once
            spent = []
            for _ in range(times):
                start = time.perf_counter()
                await client.run(call)
                spent.append((time.perf_counter() - start) * 1000)
            return statistics.median(spent)
    finally:
        await running.stop()


def cpu_seconds() -> float:
    """CPU seconds used by this process and its finished children (the audit's workers)."""
    own, children = (
        resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def templates() -> list[Built]:
    """Twelve verified finished Bon Appetit! games, 2 to 4 players (the games replicated)."""
    return [build(players=2 + i % 3, seed_byte=i + 1) for i in range(12)]


def measure(folder: Path, count: int, workers: int) -> list[str]:
    """Run the measurements in ``folder``; the lines of the report."""
    path = folder / "bench.duckdb"
    # count finished games, each its own chain; and a real 300-row record, still
    # running: a Menu Masters table of 4 after 299 commands
    build_store(path, count, templates())
    long_game = build("menu-masters", players=4, seed_byte=200, stop_after=299, game_id="g_long")
    store_games(path, [long_game])
    # in one run, and each audit between two read scans (their mean is its baseline), so
    # that a machine whose load changes weighs on both sides of each ratio alike
    rows, _ = read_and_decode(str(path))
    found = [f"{count + 1} stored games, {rows:,} rows"]
    plain_rates, scan_rates = [], []
    for chosen in dict.fromkeys((1, workers)):
        spent = cpu_seconds()
        before = read_and_decode(str(path))[1]
        read_cpu = cpu_seconds() - spent
        plain = plain_read_and_decode(str(path))[1]
        spent = cpu_seconds()
        reports, speed = audit_all(str(path), chosen, baseline=False)
        audit_cpu = cpu_seconds() - spent
        plain += plain_read_and_decode(str(path))[1]
        read_rate = 2 * rows / (before + read_and_decode(str(path))[1])
        plain_rate = 2 * rows / plain
        plain_rates.append(plain_rate)
        scan_rates.append(read_rate)
        failed = [r for r in reports if not r["ok"]]
        if failed:
            raise click.ClickException(f"a benchmark game does not verify: {failed[0]}")
        found.append(
            f"audit --all (chain, seed, rules, every state hash), {chosen} worker"
            f"{'s' if chosen > 1 else ''}: {speed.rate:,.0f} rows/s; "
            f"{speed.rate / plain_rate:.3f} of a plain ordered read + decode "
            f"(SELECT kind, body ... ORDER BY game_id, seq) at {plain_rate:,.0f} rows/s, "
            f"{speed.rate / read_rate:.3f} of Store.scan + decode at {read_rate:,.0f} rows/s; "
            f"per CPU second, whatever else runs: "
            f"{rows / audit_cpu:,.0f} rows audited, {rows / read_cpu:,.0f} scanned + decoded"
        )
    found.append(
        f"Store.scan (rows, games, seeds and packs, what export, import and rebuilds read) "
        f"at {statistics.median(scan_rates) / statistics.median(plain_rates):.2f} of the "
        f"plain read's rows/s"
    )
    game = OfflineFile(str(path)).folded("g_long")
    seq = game.last_seq // 2
    live_ms = _median_ms(lambda: seen(game, seq, Viewer.of_seat(1)), 50)
    cold_ms = _median_ms(
        lambda: seen(OfflineFile(str(path)).folded("g_long"), seq, Viewer.of_seat(1)), 7
    )
    grpc_ms = asyncio.run(_grpc_state_at_ms(path, "g_long", seq, 50))
    found.append(
        f"state at seq {seq} of a {game.last_seq}-row game, as seat:1: "
        f"{grpc_ms:.2f} ms over gRPC (GetStateAt, loaded game), {live_ms:.3f} ms of it the "
        f"in-memory lookup; {cold_ms:.1f} ms folding the file offline (CLI) (medians)"
    )
    return found


def run(count: int, workers: int) -> list[str]:
    """Audit --all rows/s (1 and ``workers``) beside one ordered read+decode scan of the
    same rows; state-at-seq time for a 300-row game: the report's lines."""
    with tempfile.TemporaryDirectory() as folder:
        return measure(Path(folder), count, workers)
