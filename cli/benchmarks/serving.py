"""What ``feastlog bench`` measures: service throughput beside the health check, and the fold rate.

The headline is submit-only: every game's commands are worked out beforehand (random
legal play folded locally from the game's supplied seed), so only ``SubmitCommand``
crosses the wire, 64 games at once (each of the 64 lanes plays ``--rounds`` games one
after another, so the percentiles rest on thousands of latencies); its rate is set
beside the health-check rate of the same server and client in the same run (measured
just before and just after, averaged).  Then as
many fresh games offer half that rate on an open-loop schedule and the latencies' p50
and p99 are reported.  The bot loop (GetView, ListLegalCommands, SubmitCommand per
command) follows.

Beside the submit-only rate it says where the CPU went, per command and per health
check: the server's process, its store process, this client.  On a machine whose cores
are all busy the ratio follows the two: a command's CPU in all against a health check's.
"""

from __future__ import annotations

import asyncio
import gc
import math
import os
import secrets
import statistics
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import click

from feastlog.cli.wire import new_game, open_channel, play_with_bots, spawn_server
from feastlog.client import SPECTATOR, AsyncClient, calls
from feastlog.client.calls import Call
from feastlog.replay.record.history import refold
from feastlog.replay.record.rows import COMMAND
from feastlog.service.bench.data import build, stored_games
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


def with_children(pid: int) -> list[int]:
    """A process and its children now (a server's store process; PostgreSQL's backends)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:  # not Linux, or the process is gone
        children = []
    return [pid, *map(int, children)]


def cpu_seconds(pids: Sequence[int]) -> float | None:
    """User and system CPU seconds the processes (and their waited-for children) used so far;
    None where /proc cannot tell (not Linux)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            if not Path("/proc/self/stat").exists():
                return None
            continue  # gone: it used nothing more
        total += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return total / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class CpuShare:
    """CPU seconds per call, by process: a submitted command, and a health check beside it."""

    server: float  # the server's process: the event loop and gRPC's threads
    store: float  # its store process (a DuckDB file is held by a child of the server)
    client: float  # this process: the bench's own client
    check_server: float  # a health check: the server (and its store process, idle)
    check_client: float

    def line(self) -> str:
        """Where a command's CPU goes beside a health check's, in milliseconds."""
        command = self.server + self.store + self.client
        check = self.check_server + self.check_client
        return (
            f"CPU per command: server {1000 * self.server:.2f} ms, its store process "
            f"{1000 * self.store:.2f} ms, this client {1000 * self.client:.2f} ms "
            f"(in all {1000 * command:.2f}); per health check: server "
            f"{1000 * self.check_server:.2f} ms, client {1000 * self.check_client:.2f} ms "
            f"(in all {1000 * check:.2f}, {check / command:.2f} of a command's)"
        )


class CpuMeter:
    """CPU used by a server, its store process and this process between two readings."""

    def __init__(self, server: int) -> None:
        self.processes = with_children(server)  # the server, then its store process

    def read(self) -> tuple[float, float, float] | None:
        """(server, store process, client) CPU seconds so far; None where /proc cannot tell."""
        server = cpu_seconds(self.processes[:1])
        store = cpu_seconds(self.processes[1:])
        if server is None or store is None:
            return None
        return server, store, time.process_time()


def cpu_share(
    before_checks: tuple[float, float, float] | None,
    after_checks: tuple[float, float, float] | None,
    checks: float,
    after_commands: tuple[float, float, float] | None,
    commands: int,
) -> CpuShare | None:
    """The CPU per command and per health check from three readings (None if any is)."""
    if before_checks is None or after_checks is None or after_commands is None:
        return None
    check = [(b - a) / max(checks, 1) for a, b in zip(before_checks, after_checks, strict=True)]
    used = [(b - a) / max(commands, 1) for a, b in zip(after_checks, after_commands, strict=True)]
    return CpuShare(used[0], used[1], used[2], check[0] + check[1], check[2])


def start_server(db_path: Path, key: str) -> tuple[subprocess.Popen[str], str]:
    """The benchmark's server, in its own process."""
    try:
        return spawn_server(db_path, key)
    except RuntimeError as failed:
        raise click.ClickException(str(failed)) from failed


def bench_client(address: str, key: str = "") -> AsyncClient:
    """The load generator's client: its own channel, each call sent once (no retry, no
    deadline), as the organiser."""
    return AsyncClient(channel=open_channel(address), organiser_key=key, retries=0, timeout=None)


async def health_rate(client: AsyncClient, seconds: float, concurrency: int) -> float:
    """Health checks per second with ``concurrency`` callers for ``seconds``."""
    check = calls.health()  # made once, sent each time, with no credentials
    done = 0
    deadline = time.perf_counter() + seconds

    async def caller() -> None:
        nonlocal done
        while time.perf_counter() < deadline:
            await client.run(check, SPECTATOR)
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(caller() for _ in range(concurrency)))
    return done / (time.perf_counter() - start)


async def bot_rate(
    address: str, key: str, kind: str, games: int, players: int, seed: int
) -> Throughput:
    """Play ``games`` bot games at once; then health checks from the same client."""
    async with bench_client(address, key) as client:
        names = list(NAMES[:players])
        created = [await client.create_game(kind, names) for _ in range(games)]
        start = time.perf_counter()
        results = await asyncio.gather(
            *(
                play_with_bots(client.stubs["GameService"], g.game_id, g.tokens, seed + i)
                for i, g in enumerate(created)
            )
        )
        seconds = time.perf_counter() - start
        health = await health_rate(client, min(max(seconds / 2, 1.0), 5.0), games)
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
    skipped: int = 0  # schedule slots passed over because their game's last answer was late
    cpu: CpuShare | None = None  # where the CPU went (when the server's process was given)

    @property
    def per_second(self) -> float:
        """Commands acknowledged per second."""
        return self.commands / self.seconds

    def percentile(self, p: float) -> float:
        """A latency percentile in milliseconds (nearest rank)."""
        ordered = sorted(self.latencies)
        rank = max(1, math.ceil(p / 100 * len(ordered)))
        return 1000 * ordered[min(len(ordered), rank) - 1]


def next_slot(due: float, gap: float, now: float) -> float:
    """The first slot of a lane's schedule (``due``, ``due + gap``, ...) not already past.

    A command whose slot passed while its game's previous answer was awaited waits for
    the lane's next slot instead of going at once: the offered load never bursts to
    catch up, and the lanes stay spread over the gap as they were scheduled.
    """
    if now <= due:
        return due
    return due + math.ceil((now - due) / gap) * gap


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


def submitted(game_id: str, n: int, command: record_pb2.Command, typed_only: bool) -> Call[Any]:
    """A game's ``n``-th command (from 0) as a call whose reply is left unread."""
    return calls.submit(game_id, command, None, f"c{n}", typed_only).unread()


async def submit_only(
    address: str,
    key: str,
    kind: str,
    games: int,
    players: int,
    offered: float = 0.0,
    first: int = 0,
    rounds: int = 1,
    server: int | None = None,
    typed_only: bool = True,
) -> Submitted:
    """Send precomputed commands of ``games`` games at once; only SubmitCommand on the wire.

    Each of the ``games`` lanes plays ``rounds`` games one after another (planned games
    ``first`` to ``first + games * rounds - 1``).  With ``offered`` > 0 the commands go
    out on an open-loop schedule at that total rate: slot k at ``k / offered`` seconds,
    lane ``k % games``; a command is sent at its slot, or at its lane's next one when the
    game's previous answer came too late for it (``next_slot``).  ``server``: the server's
    process id, to tell where the CPU went (its process, its store's, this client's).
    ``typed_only``: ask for the typed facts alone (``typed_facts_only``), as the CLI does;
    False has every fact encoded a second time, as a Struct, the way older clients get it.
    """
    async with bench_client(address, key) as client:
        planned = await plan_games(
            client.stubs["GameService"], key, kind, games * rounds, players, first
        )
        # each command's call made beforehand, its reply to be left unread: only sending
        # it is timed
        lanes = [
            [
                [
                    (game.tokens[seat], submitted(game.game_id, n, command, typed_only))
                    for n, (seat, command) in enumerate(game.commands)
                ]
                for game in planned[i::games]
            ]
            for i in range(games)
        ]
        # planning's garbage collected now, and what is left frozen: a full collection of
        # this client's heap during the run would count as the server's latency
        gc.collect()
        gc.freeze()
        meter = CpuMeter(server) if server else None
        # the health rate before and after, averaged: other work on the machine comes and goes
        before_checks = meter.read() if meter else None
        checking = time.perf_counter()
        health_before = await health_rate(client, 2.0, games)
        checks = health_before * (time.perf_counter() - checking)
        after_checks = meter.read() if meter else None
        latencies: list[float] = []
        skipped = 0
        gap = games / offered if offered else 0.0
        start = time.perf_counter()

        async def play(i: int, lane: list[list[tuple[str, Call[Any]]]]) -> int:
            nonlocal skipped
            due = start + gap * i / games
            for game in lane:
                for token, call in game:
                    if gap:
                        slot = next_slot(due, gap, time.perf_counter())
                        skipped += round((slot - due) / gap)
                        await asyncio.sleep(slot - time.perf_counter())
                        due = slot + gap
                    sent = time.perf_counter()
                    await client.run(call, token)
                    latencies.append(time.perf_counter() - sent)
            return sum(len(g) for g in lane)

        done = await asyncio.gather(*(play(i, lane) for i, lane in enumerate(lanes)))
        seconds = time.perf_counter() - start
        after_commands = meter.read() if meter else None
        health_after = await health_rate(client, min(max(seconds / 2, 2.0), 5.0), games)
    gc.unfreeze()
    health = (health_before + health_after) / 2
    cpu = cpu_share(before_checks, after_checks, checks, after_commands, sum(done))
    return Submitted(games, sum(done), seconds, latencies, health, offered, skipped, cpu)


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


def run(
    kind: str,
    players: int,
    levels: list[int],
    seed: int,
    submit_games: int,
    rounds: int,
    typed_only: bool = True,
) -> list[str]:
    """Submit-only commands/s at ``submit_games`` games beside the health-check rate, p99
    at half that load; then the bot loop at each level; the fold rate: the report's lines."""
    key = "org_" + secrets.token_urlsafe(32)  # the server refuses a short key
    with tempfile.TemporaryDirectory() as tmp:
        db_path = Path(tmp) / "bench.duckdb"
        proc, address = start_server(db_path, key)
        lanes = partial(
            submit_only,
            address,
            key,
            kind,
            submit_games,
            players,
            rounds=rounds,
            typed_only=typed_only,
        )
        try:
            full = asyncio.run(lanes(server=proc.pid))
            half = asyncio.run(lanes(full.per_second / 2, first=submit_games * rounds))
            results = [asyncio.run(bot_rate(address, key, kind, n, players, seed)) for n in levels]
        finally:
            proc.terminate()
            proc.wait(timeout=30)
        events, folded = fold_rate(db_path)
    facts = "typed facts only" if typed_only else "every fact typed and as a Struct"
    return submit_report(full, half, facts) + report(results, events, folded)


def submit_report(full: Submitted, half: Submitted, facts: str) -> list[str]:
    """The headline: submit-only capacity beside the health check, latency at half load."""
    return [
        f"submit-only ({facts}), {full.games} games at once: {full.commands} commands in "
        f"{full.seconds:.2f} s = {full.per_second:,.0f} cmd/s; health checks "
        f"{full.health_per_second:,.0f}/s; ratio {full.per_second / full.health_per_second:.3f}"
        f" (p50 {full.percentile(50):.1f} ms, p99 {full.percentile(99):.1f} ms)",
        *([full.cpu.line()] if full.cpu else []),
        f"at half that load ({half.offered:,.0f} cmd/s offered, {half.per_second:,.0f} "
        f"acknowledged, {half.commands} commands, {half.skipped} slots passed over): "
        f"p50 {half.percentile(50):.1f} ms, p99 {half.percentile(99):.1f} ms",
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
