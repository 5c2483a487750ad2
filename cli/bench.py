"""``feastlog bench``: service throughput beside the health check, and the fold rate.

The headline is submit-only: every game's commands are worked out beforehand (random
legal play folded locally from the game's supplied seed), so only ``SubmitCommand``
crosses the wire, 64 games at once; its rate is set beside the health-check rate of the
same server and client in the same run.  Then the same number of fresh games offer half
that rate (each command sent at its scheduled time) and the latencies' p50 and p99 are
reported.  The bot loop (GetView, ListLegalCommands, SubmitCommand per command) follows.
"""

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

from feastlog.cli.output import counts
from feastlog.cli.wire import bearer, new_game, open_channel, play_with_bots, spawn_server
from feastlog.replay.games import kinds
from feastlog.replay.history import refold
from feastlog.replay.record import COMMAND
from feastlog.service.benchdata import build, stored_games
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc
from feastlog.v1 import record_pb2

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
    async with open_channel(address) as channel:
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


@dataclass(frozen=True)
class Submitted:
    """Submit-only commands: how many, how fast, their latencies, the health rate beside."""

    games: int
    commands: int
    seconds: float
    latencies: list[float]
    health_per_second: float
    offered: float = 0.0  # commands/s offered (0: as fast as the server answers)

    @property
    def per_second(self) -> float:
        """Commands acknowledged per second."""
        return self.commands / self.seconds

    def percentile(self, p: float) -> float:
        """A latency percentile in milliseconds."""
        ordered = sorted(self.latencies)
        return 1000 * ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


@dataclass(frozen=True)
class Planned:
    """A game created with a supplied seed and the commands worked out for it beforehand."""

    game_id: str
    tokens: list[str]
    commands: list[tuple[int, record_pb2.Command]]


async def plan_games(
    stub: pb_grpc.GameServiceAsyncStub, key: str, kind: str, games: int, players: int, first: int
) -> list[Planned]:
    """Create games with supplied seeds; fold each locally to know its commands."""
    planned = []
    for i in range(first, first + games):
        built = build(kind, players, seed_byte=i % 250 + 1, game_id=f"g_plan{i}")
        reply = await new_game(stub, key, kind, list(built.names), built.seed)
        commands = [
            (int(r.actor.removeprefix("seat:")), record_pb2.Command.FromString(r.body))
            for r in built.rows
            if r.kind == COMMAND
        ]
        planned.append(Planned(reply.game_id, [t.token for t in reply.seat_tokens], commands))
    return planned


async def submit_only(
    address: str,
    key: str,
    kind: str,
    games: int,
    players: int,
    offered: float = 0.0,
    first: int = 0,
) -> Submitted:
    """Send precomputed commands of ``games`` games at once; only SubmitCommand on the wire.

    With ``offered`` > 0, commands go out at that total rate, each at its scheduled time.
    """
    async with open_channel(address) as channel:
        stub = pb_grpc.GameServiceStub(channel)
        planned = await plan_games(stub, key, kind, games, players, first)
        latencies: list[float] = []
        gap = games / offered if offered else 0.0
        start = time.perf_counter()

        async def play(i: int, game: Planned) -> int:
            due = start + gap * i / games
            for n, (seat, command) in enumerate(game.commands):
                if gap:
                    await asyncio.sleep(max(0.0, due - time.perf_counter()))
                    due += gap
                request = pb.SubmitCommandRequest(
                    game_id=game.game_id, command_id=f"c{n}", command=command
                )
                sent = time.perf_counter()
                await stub.SubmitCommand(request, metadata=bearer(game.tokens[seat]))
                latencies.append(time.perf_counter() - sent)
            return len(game.commands)

        done = await asyncio.gather(*(play(i, g) for i, g in enumerate(planned)))
        seconds = time.perf_counter() - start
        health = await health_rate(channel, min(max(seconds / 2, 1.0), 5.0), games)
    return Submitted(games, sum(done), seconds, latencies, health, offered)


def fold_rate(db_path: Path, repeats: int = 3) -> tuple[int, float]:
    """Events folded per second over every stored game (median of ``repeats``)."""
    records = stored_games(db_path)
    events = sum(len(s.rows) for s in records)
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        for s in records:
            refold(s.rows, s.server_seed, s.pack_body)
        rates.append(events / (time.perf_counter() - start))
    return events, statistics.median(rates)


@click.command("bench")
@click.option("--kind", default="bon-appetit", show_default=True, type=click.Choice(kinds()))
@click.option("--players", default=3, show_default=True, type=click.IntRange(2, 6))
@click.option(
    "--games",
    "levels",
    default="16,64",
    show_default=True,
    callback=counts,
    help="Concurrent games per level, comma-separated.",
)
@click.option("--seed", default=1, show_default=True, type=int, help="Bots' choices.")
@click.option(
    "--submit-games",
    default=64,
    show_default=True,
    type=click.IntRange(min=1),
    help="Games at once, submit-only.",
)
def bench_command(kind: str, players: int, levels: list[int], seed: int, submit_games: int) -> None:
    """Submit-only commands/s at 64 games beside the health-check rate, p99 at half that
    load; then the bot loop; the fold rate."""
    key = "org_" + secrets.token_urlsafe(32)  # the server refuses a short key
    with tempfile.TemporaryDirectory() as tmp:
        db_path = Path(tmp) / "bench.duckdb"
        proc, address = start_server(db_path, key)
        try:
            full = asyncio.run(submit_only(address, key, kind, submit_games, players))
            half = asyncio.run(
                submit_only(
                    address, key, kind, submit_games, players, full.per_second / 2, submit_games
                )
            )
            results = [asyncio.run(bot_rate(address, key, kind, n, players, seed)) for n in levels]
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        events, folded = fold_rate(db_path)
    for line in submit_report(full, half) + report(results, events, folded):
        click.echo(line)


def submit_report(full: Submitted, half: Submitted) -> list[str]:
    """The headline: submit-only capacity beside the health check, latency at half load."""
    return [
        f"submit-only, {full.games} games at once: {full.commands} commands in "
        f"{full.seconds:.2f} s = {full.per_second:,.0f} cmd/s; health checks "
        f"{full.health_per_second:,.0f}/s; ratio {full.per_second / full.health_per_second:.3f}"
        f" (p50 {full.percentile(50):.1f} ms, p99 {full.percentile(99):.1f} ms)",
        f"at half that load ({half.offered:,.0f} cmd/s offered, {half.per_second:,.0f} "
        f"acknowledged): p50 {half.percentile(50):.1f} ms, p99 {half.percentile(99):.1f} ms",
        "bot loop (GetView, ListLegalCommands, SubmitCommand per command):",
    ]


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
