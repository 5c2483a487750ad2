"""``feastlog bench-audit``: audit throughput beside reading and decoding the same rows,
and the time to answer a state-at-seq query for a ~300-row game.

The games are built without a server (seeded random legal play through the fold, the
same rows the service writes) and stored in a temporary DuckDB file.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import click
import grpc

from feastlog.replay.engine import Viewer
from feastlog.replay.visibility import seen
from feastlog.service.benchdata import build, decoded_rows, store_games, stored_games
from feastlog.service.offline import OfflineFile
from feastlog.service.reads import audit_stored
from feastlog.service.server import create_server
from feastlog.v1 import replay_service_pb2, replay_service_pb2_grpc


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
        async with grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as channel:
            stub = replay_service_pb2_grpc.ReplayServiceStub(channel)
            request = replay_service_pb2.GetStateAtRequest(
                game_id=game_id, seq=seq, viewer="seat:1"
            )
            meta = (("authorization", f"Bearer {running.organiser_key}"),)
            await stub.GetStateAt(request, metadata=meta)  # loads (folds) the game once
            spent = []
            for _ in range(times):
                start = time.perf_counter()
                await stub.GetStateAt(request, metadata=meta)
                spent.append((time.perf_counter() - start) * 1000)
            return statistics.median(spent)
    finally:
        await running.stop()


def measure(folder: Path, count: int) -> list[str]:
    """Run the measurements in ``folder``; the lines of the report."""
    path = folder / "bench.duckdb"
    # a real 300-row record, still running: a Menu Masters table of 4 after 299 commands
    long_game = build("menu-masters", players=4, seed_byte=200, stop_after=299, game_id="g_long")
    store_games(
        path, [build(players=2 + i % 3, seed_byte=i % 200) for i in range(count)] + [long_game]
    )
    start = time.perf_counter()
    rows = sum(decoded_rows(path))
    read_rate = rows / (time.perf_counter() - start)
    start = time.perf_counter()
    checked = 0
    stored = stored_games(path)
    ids = [g.rows[0].game_id for g in stored]
    for each in stored:
        report = audit_stored(each)
        assert report.ok, report.summary()
        checked += report.rows
    audit_rate = checked / (time.perf_counter() - start)
    game = OfflineFile(str(path)).folded("g_long")
    seq = game.last_seq // 2
    live_ms = _median_ms(lambda: seen(game, seq, Viewer.of_seat(1)), 50)
    cold_ms = _median_ms(
        lambda: seen(OfflineFile(str(path)).folded("g_long"), seq, Viewer.of_seat(1)), 7
    )
    grpc_ms = asyncio.run(_grpc_state_at_ms(path, "g_long", seq, 50))
    return [
        f"{len(ids)} stored games, {rows} rows",
        f"read + decode from DuckDB: {read_rate:,.0f} rows/s",
        f"audit (chain, seed, rules, every state hash): {audit_rate:,.0f} rows/s "
        f"({audit_rate / read_rate:.2f} of the read rate)",
        f"state at seq {seq} of a {game.last_seq}-row game, as seat:1: "
        f"{grpc_ms:.2f} ms over gRPC (GetStateAt, loaded game), {live_ms:.3f} ms of it the "
        f"in-memory lookup; {cold_ms:.1f} ms folding the file offline (CLI) (medians)",
    ]


@click.command("bench-audit")
@click.option("--games", "count", default=200, show_default=True, type=click.IntRange(min=1))
def bench_audit_command(count: int) -> None:
    """Audit throughput beside the DuckDB read rate; state-at-seq time for a 300-row game."""
    with tempfile.TemporaryDirectory() as folder:
        for line in measure(Path(folder), count):
            click.echo(line)
