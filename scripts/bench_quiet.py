"""Latency on a season's file with and without the writer's quiet checkpoints.

    python -m scripts.bench_quiet --store SEASON.duckdb [--seconds 110] [--runs 2]

DuckDB folds its write-ahead log into the file inside the commit that takes the log past
16 MB, and the commits behind it wait.  The server folds the log itself once nothing has
been committed for a moment (``service.store.writer.QUIET``).  This runs a paced load against a
``feastlog serve`` process on a copy of ``--store`` (a file kept by ``feastlog bench-scale
--keep DIR``), once with the quiet checkpoints off (``QUIET`` set beyond the run) and
once as shipped, alternately, and prints each run's latencies.

The load: 64 Bon Appetit! games at once, their commands worked out beforehand, sent in
spells of PLAY seconds at RATE commands/s with PAUSE seconds between spells (a round's
end, the next deal), as tables in a hall do.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import secrets
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from feastlog.cli.benchmarks.serving import Planned, plan_games
from feastlog.cli.wire import bearer, open_channel, spawn_server
from feastlog.v1 import game_service_pb2 as pb
from feastlog.v1 import game_service_pb2_grpc as pb_grpc

PLAY, PAUSE, RATE, LANES = 2.0, 0.6, 400.0, 64
OFF = 1e9  # QUIET beyond any run: the writer never finds a quiet moment


@dataclass
class Run:
    """One run's latencies (seconds) and the largest write-ahead log seen while it ran."""

    quiet: float
    latencies: list[float]
    largest_log: int

    def line(self) -> str:
        """The run in one line."""
        lat = sorted(self.latencies)
        n = len(lat)

        def ms(q: float) -> float:
            return 1000 * lat[min(n - 1, int(n * q))]

        name = "off" if self.quiet >= OFF else f"after {self.quiet:g} s quiet"
        over = sum(1 for x in lat if x > 0.05)
        return (
            f"quiet checkpoints {name}: {n} commands, p50 {ms(0.5):.1f} p99 {ms(0.99):.1f} "
            f"p99.9 {ms(0.999):.1f} max {1000 * lat[-1]:.0f} ms; {over} over 50 ms; "
            f"largest write-ahead log {self.largest_log >> 10} KiB"
        )


async def paced(address: str, key: str, seconds: float, log: Path) -> tuple[list[float], int]:
    """Play the paced load for ``seconds``; the latencies and the largest log seen."""
    async with open_channel(address) as channel:
        stub = pb_grpc.GameServiceStub(channel)
        planned: list[Planned] = []
        need = RATE * seconds * PLAY / (PLAY + PAUSE)
        while sum(len(g.commands) for g in planned) < need:
            planned += await plan_games(stub, key, "bon-appetit", LANES, 3, len(planned))
        gc.collect()
        gc.freeze()
        await asyncio.sleep(1.0)  # the tables sit down: a quiet second after the deals
        latencies: list[float] = []
        largest = 0
        gap = LANES / RATE
        cycle = PLAY + PAUSE
        start = time.perf_counter()

        async def watch() -> None:
            nonlocal largest
            while True:
                largest = max(largest, log.stat().st_size if log.exists() else 0)
                await asyncio.sleep(0.05)

        async def lane(i: int, games: list[Planned]) -> None:
            due = start + gap * (i + random.random()) / LANES
            for game in games:
                for n, (seat, command) in enumerate(game.commands):
                    while True:  # the next due time within a spell
                        due = max(due, time.perf_counter())
                        if due - start > seconds:
                            return
                        if (due - start) % cycle < PLAY:
                            break
                        due = start + ((due - start) // cycle + 1) * cycle + random.random() * gap
                    await asyncio.sleep(due - time.perf_counter())
                    request = pb.SubmitCommandRequest(
                        game_id=game.game_id, command_id=f"c{n}", command=command
                    )
                    sent = time.perf_counter()
                    await stub.SubmitCommand(request, metadata=bearer(game.tokens[seat]))
                    latencies.append(time.perf_counter() - sent)
                    due += gap

        watching = asyncio.create_task(watch())
        await asyncio.gather(*(lane(i, planned[i::LANES]) for i in range(LANES)))
        watching.cancel()
    gc.unfreeze()
    return latencies, largest


def one_run(store: Path, quiet: float, seconds: float) -> Run:
    """A server on a fresh copy of ``store``, the paced load, the server stopped."""
    key = "org_" + secrets.token_urlsafe(32)
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "season.duckdb"
        shutil.copy(store, db)
        try:
            proc, address = spawn_server(
                db, key, prelude=f"import feastlog.service.store.writer as w; w.QUIET = {quiet!r}"
            )
        except RuntimeError as failed:
            raise SystemExit(str(failed)) from failed
        try:
            latencies, largest = asyncio.run(paced(address, key, seconds, Path(f"{db}.wal")))
        finally:
            proc.terminate()
            proc.wait()
    return Run(quiet, latencies, largest)


def main() -> None:
    """Alternate runs without and with the quiet checkpoints; one line per run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True, help="a season's DuckDB file")
    parser.add_argument("--seconds", type=float, default=110.0)
    parser.add_argument("--runs", type=int, default=2, help="runs of each")
    args = parser.parse_args()
    if not args.store.is_file():
        raise SystemExit(f"{args.store}: no such file (feastlog bench-scale --keep DIR makes one)")
    from feastlog.service.store import writer

    for _ in range(args.runs):
        for quiet in (OFF, writer.QUIET):
            print(one_run(args.store, quiet, args.seconds).line(), flush=True)


if __name__ == "__main__":
    main()
