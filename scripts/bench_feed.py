"""A thousand feeds on one node: the server's memory and another client's latency with
and without them (issue 43).

    python -m scripts.bench_feed [--subscribers 1000] [--slow 100] [--rate 20]
                                 [--seconds 30] [--ring ROWS]

A ``feastlog serve`` process on a fresh file.  The probe (this process) plays Bon Appetit!
games at ``--rate`` commands/s, their commands worked out beforehand: each command's
``SubmitCommand`` is timed, then a ``GetView`` of another game, and one feed of its own
(``WatchAll``) times each row from its ``recorded_at`` to its arrival.  It runs twice:
alone, then beside ``--subscribers`` feeds opened by another process, of which ``--slow``
read one row every ``SLOW_GAP`` seconds and the rest read every row as it comes (their
rows' lag is timed the same way).  The server's RSS is read from ``/proc`` every half
second.  ``--ring`` sets the node's ring (``feed.RING_ROWS``) so that slow feeds are
passed within the run and ended FELL_BEHIND.  Prints one line a phase, and the machine's
load average.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from feastlog.cli.benchmarks.serving import Planned, plan_games
from feastlog.cli.wire import bearer, open_channel, spawn_server
from feastlog.v1 import feed_service_pb2 as fpb
from feastlog.v1 import feed_service_pb2_grpc as fpb_grpc
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc

SLOW_GAP = 2.0  # seconds a slow feed waits between rows
CHANNELS = 20  # the subscribers' connections (their streams spread over them)
GAMES = 24  # games played at once by the probe


def lag_of(event: Any) -> float:
    """Seconds from a row's ``recorded_at`` (the server's clock, this machine's) to now."""
    at = datetime.datetime.fromisoformat(event.recorded_at.replace("Z", "+00:00"))
    return time.time() - at.timestamp()


def quantiles(values: list[float]) -> str:
    """p50 / p99 / max in ms."""
    if not values:
        return "none"
    got = sorted(values)

    def q(x: float) -> float:
        return 1000 * got[min(len(got) - 1, int(len(got) * x))]

    return f"{q(0.5):.1f} / {q(0.99):.1f} / {1000 * got[-1]:.0f} ms"


def rss_mib(pid: int) -> float:
    """A process's resident memory, MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


@dataclass
class Phase:
    """What the probe measured in one phase."""

    submits: list[float] = field(default_factory=list)
    views: list[float] = field(default_factory=list)
    feed_lags: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)

    def line(self, name: str) -> str:
        """The phase in one line."""
        return (
            f"{name}: {len(self.submits)} commands; SubmitCommand p50/p99/max "
            f"{quantiles(self.submits)}; GetView {quantiles(self.views)}; the probe's feed "
            f"lag {quantiles(self.feed_lags)}; server RSS {min(self.rss):.0f} to "
            f"{max(self.rss):.0f} MiB"
        )


async def probe_feed(address: str, games: set[str], phase: Phase, stop: asyncio.Event) -> None:
    """The probe's own feed: the lag of each command row of this phase's games."""
    async with open_channel(address) as channel:
        call = fpb_grpc.FeedServiceStub(channel).WatchAll(fpb.WatchAllRequest())
        async for reply in call:
            if stop.is_set():
                call.cancel()
                return
            if reply.game_id in games and reply.event.seq > 1:  # the games were made before
                phase.feed_lags.append(lag_of(reply.event))


async def play(
    address: str, planned: list[Planned], rate: float, seconds: float, phase: Phase, pid: int
) -> None:
    """Paced commands (round robin over the games), each timed, then a timed GetView."""
    async with open_channel(address) as channel:
        stub = pb_grpc.GameServiceStub(channel)
        stop = asyncio.Event()
        games = {g.game_id for g in planned}
        feed = asyncio.create_task(probe_feed(address, games, phase, stop))
        await asyncio.sleep(1.0)
        next_of = {g.game_id: 0 for g in planned}
        start = time.perf_counter()
        sampled = 0.0
        sent = 0
        while time.perf_counter() - start < seconds:
            game = planned[sent % len(planned)]
            at = next_of[game.game_id]
            if at >= len(game.commands):
                sent += 1
                if all(next_of[g.game_id] >= len(g.commands) for g in planned):
                    break
                continue
            seat, command = game.commands[at]
            request = pb.SubmitCommandRequest(
                game_id=game.game_id, command_id=f"c{at}", command=command, expected_seq=at + 1
            )
            t = time.perf_counter()
            await stub.SubmitCommand(request, metadata=bearer(game.tokens[seat]))
            phase.submits.append(time.perf_counter() - t)
            next_of[game.game_id] = at + 1
            other = planned[(sent + 1) % len(planned)].game_id
            t = time.perf_counter()
            await stub.GetView(pb.GetViewRequest(game_id=other))
            phase.views.append(time.perf_counter() - t)
            if time.perf_counter() - sampled > 0.5:
                phase.rss.append(rss_mib(pid))
                sampled = time.perf_counter()
            sent += 1
            wait = start + sent / rate - time.perf_counter()
            if wait > 0:
                await asyncio.sleep(wait)
        await asyncio.sleep(1.0)  # the last rows reach the probe's feed
        stop.set()
        feed.cancel()


async def position_after(address: str, rows: int) -> str:
    """The position after the log's first ``rows`` rows, as a feed gives it (the feeds
    start there, the log's last row their first: live, not from the log's start)."""
    async with open_channel(address) as channel:
        call = fpb_grpc.FeedServiceStub(channel).WatchAll(fpb.WatchAllRequest())
        position = ""
        read = 0
        async for reply in call:
            position, read = reply.position, read + 1
            if read == rows:
                call.cancel()
                break
        return position


async def subscribe(
    address: str, count: int, slow: int, seconds: float, skip: int
) -> dict[str, Any]:
    """``count`` feeds (the first ``slow`` slow ones) from the position after the first
    ``skip`` rows, for ``seconds`` once all are open: what each kind read, their lag, and
    how many the server ended and why."""
    position = await position_after(address, skip) if skip else ""
    channels = [grpc.aio.insecure_channel(address) for _ in range(CHANNELS)]
    lags: list[float] = []
    read = {"fast": 0, "slow": 0}
    ended: dict[str, int] = {}
    opened = 0
    all_open = asyncio.Event()
    go = asyncio.Event()

    async def one(n: int) -> None:
        nonlocal opened
        stub = fpb_grpc.FeedServiceStub(channels[n % CHANNELS])
        call = stub.WatchAll(fpb.WatchAllRequest(position=position))
        is_slow = n < slow
        first = True
        try:
            async for reply in call:
                if first:
                    first = False
                    opened += 1
                    if opened == count:
                        all_open.set()
                if is_slow:
                    read["slow"] += 1
                    await asyncio.sleep(SLOW_GAP)
                else:
                    read["fast"] += 1
                    if go.is_set():
                        lags.append(lag_of(reply.event))
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.CANCELLED:
                reason = f"{error.code().name}"
                if "fell behind" in (error.details() or ""):
                    reason += " FELL_BEHIND"
                ended[reason] = ended.get(reason, 0) + 1

    tasks = [asyncio.create_task(one(n)) for n in range(count)]
    await asyncio.wait_for(all_open.wait(), timeout=300)
    print("open", flush=True)
    await asyncio.sleep(5.0)  # every fast feed reads what the log held, then is live
    go.set()
    await asyncio.sleep(seconds)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for channel in channels:
        await channel.close()
    live = sorted(lags)
    return {"read": read, "ended": ended, "lag": quantiles([x for x in live if x < 60])}


async def bench(args: argparse.Namespace) -> None:
    """Both phases against one server."""
    key = "org_" + secrets.token_urlsafe(24)
    folder = Path(tempfile.mkdtemp(prefix="feastlog-bench-feed-"))
    ring = f"import feastlog.service.app.feed as f; f.RING_ROWS = {args.ring}"
    prelude = ring if args.ring else ""
    server, address = spawn_server(folder / "feed.duckdb", key, prelude)
    try:
        async with open_channel(address) as channel:
            stub = pb_grpc.GameServiceStub(channel)
            need = 2 * args.rate * args.seconds + 2 * GAMES
            planned: list[Planned] = []
            while sum(len(g.commands) for g in planned) < need:
                planned += await plan_games(stub, key, "bon-appetit", GAMES, 3, len(planned))
        half = len(planned) // 2
        print(f"load average {os.getloadavg()}", flush=True)
        alone = Phase()
        await play(address, planned[:half], args.rate, args.seconds, alone, server.pid)
        print(alone.line("alone"), flush=True)
        others = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "scripts.bench_feed",
                "--subscribe",
                address,
                "--subscribers",
                str(args.subscribers),
                "--slow",
                str(args.slow),
                "--seconds",
                str(args.seconds + 4),
                "--skip",
                str(len(planned) + len(alone.submits) - 1),  # each feed's first: the last
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert others.stdout is not None
        before = rss_mib(server.pid)
        assert others.stdout.readline().strip() == "open"
        opened = rss_mib(server.pid)
        if os.environ.get("BENCH_FEED_PROFILE"):  # where the server's time goes, beside them
            subprocess.Popen(
                [
                    "py-spy",
                    "record",
                    "-p",
                    str(server.pid),
                    "-d",
                    str(int(args.seconds)),
                    "-f",
                    "raw",
                    "-o",
                    os.environ["BENCH_FEED_PROFILE"],
                ],
            )
        await asyncio.sleep(5.0)
        beside = Phase()
        await play(address, planned[half:], args.rate, args.seconds, beside, server.pid)
        told = json.loads(others.stdout.read())
        others.wait(timeout=60)
        await asyncio.sleep(2.0)
        print(
            beside.line(f"beside {args.subscribers} feeds ({args.slow} slow)")
            + f"; RSS {before:.0f} MiB before they opened, {opened:.0f} once open, "
            f"{rss_mib(server.pid):.0f} after they closed",
            flush=True,
        )
        print(f"the feeds: {json.dumps(told)}", flush=True)
        print(f"load average {os.getloadavg()}", flush=True)
    finally:
        server.terminate()
        server.communicate(timeout=60)


def main() -> None:
    """Run the benchmark (or, with --subscribe, be its subscribers' process)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--slow", type=int, default=100)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--ring", type=int, default=0, help="the node's ring, rows (0: as shipped)")
    parser.add_argument("--subscribe", default="", help=argparse.SUPPRESS)
    parser.add_argument("--skip", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.subscribe:
        told = asyncio.run(
            subscribe(args.subscribe, args.subscribers, args.slow, args.seconds, args.skip)
        )
        print(json.dumps(told), flush=True)
        return
    asyncio.run(bench(args))


if __name__ == "__main__":
    main()
