"""``feastlog bench``: service throughput beside the health check, and the fold rate."""

from __future__ import annotations

import asyncio
import secrets
import statistics
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cli.client import new_game, play_with_bots, spawn_server
from feastlog.v1 import game_service_pb2_grpc as pb_grpc
from replay.history import refold
from service.store import Store

NAMES = ("Ann", "Brian", "Celia", "Dev", "Eve", "Farid")


@dataclass(frozen=True)
class Throughput:
    """One concurrency level: commands through the service and health checks, per second."""

    games: int
    commands: int
    seconds: float
    health_per_second: float

    @property
    def per_second(self) -> float:
        """Commands submitted per second."""
        return self.commands / self.seconds


def start_server(db_path: Path, key: str) -> tuple[subprocess.Popen[str], str]:
    """The benchmark's server, in its own process."""
    try:
        return spawn_server(db_path, key)
    except RuntimeError as failed:
        raise click.ClickException(str(failed)) from failed


async def health_rate(channel: grpc.aio.Channel, seconds: float, concurrency: int) -> float:
    """Health checks per second with ``concurrency`` callers for ``seconds``."""
    health: Any = health_pb2_grpc.HealthStub(channel)  # its stubs do not declare Check
    done = 0
    deadline = time.perf_counter() + seconds

    async def caller() -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await health.Check(health_pb2.HealthCheckRequest())
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(caller() for _ in range(concurrency)))
    return done / (time.perf_counter() - start)


async def bot_rate(
    address: str, key: str, kind: str, games: int, players: int, seed: int
) -> Throughput:
    """Play ``games`` bot games at once; then health checks from the same client."""
    async with grpc.aio.insecure_channel(address) as channel:
        stub = pb_grpc.GameServiceStub(channel)
        names = list(NAMES[:players])
        created = [await new_game(stub, key, kind, names) for _ in range(games)]
        start = time.perf_counter()
        results = await asyncio.gather(
            *(
                play_with_bots(stub, g.game_id, [t.token for t in g.seat_tokens], seed + i)
                for i, g in enumerate(created)
            )
        )
        seconds = time.perf_counter() - start
        health = await health_rate(channel, min(max(seconds / 2, 1.0), 5.0), games)
    return Throughput(games, sum(r.commands for r in results), seconds, health)


def fold_rate(db_path: Path, repeats: int = 3) -> tuple[int, float]:
    """Events folded per second over every stored game (median of ``repeats``)."""
    store = Store(str(db_path), read_only=True)
    try:
        stored = [store.load(g) for g in store.game_ids()]
    finally:
        store.close()
    records = [s for s in stored if s is not None]
    events = sum(len(s.rows) for s in records)
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        for s in records:
            refold(s.rows, s.server_seed, s.pack_body)
        rates.append(events / (time.perf_counter() - start))
    return events, statistics.median(rates)


@click.command("bench")
@click.option("--kind", default="bon-appetit", show_default=True)
@click.option("--players", default=3, show_default=True, type=int)
@click.option(
    "--games",
    "levels",
    default="16,64",
    show_default=True,
    help="Concurrent games per level, comma-separated.",
)
@click.option("--seed", default=1, show_default=True, type=int, help="Bots' choices.")
def bench_command(kind: str, players: int, levels: str, seed: int) -> None:
    """Commands per second through a real server beside its health-check rate; fold rate."""
    key = "org_" + secrets.token_urlsafe(32)  # the server refuses a short key
    with tempfile.TemporaryDirectory() as tmp:
        db_path = Path(tmp) / "bench.duckdb"
        proc, address = start_server(db_path, key)
        try:
            results = [
                asyncio.run(bot_rate(address, key, kind, int(n), players, seed))
                for n in levels.split(",")
            ]
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        events, folded = fold_rate(db_path)
    for line in report(results, events, folded):
        click.echo(line)


def report(results: Sequence[Throughput], events: int, folded: float) -> list[str]:
    """The benchmark's lines."""
    lines = [f"{'games':>6} {'commands':>9} {'seconds':>8} {'cmd/s':>8} {'health/s':>9} ratio"]
    for r in results:
        lines.append(
            f"{r.games:>6} {r.commands:>9} {r.seconds:>8.2f} {r.per_second:>8.0f} "
            f"{r.health_per_second:>9.0f} {r.per_second / r.health_per_second:.3f}"
        )
    lines.append(f"fold: {events} stored events refolded at {folded:,.0f} events/s (median of 3)")
    return lines
