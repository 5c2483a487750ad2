"""Commits/s of several writers on one PostgreSQL database, the store alone: what the log
tree's positions cost when nodes commit at once, without the rules, gRPC and nginx that
take a node's CPU in ``bench_nodes``.

    python -m scripts.bench_commits [--writers 1,2,4] [--seconds 5] [--rows 3]

Each writer is a process of its own with its own ``PgStore`` (a node's store), writing
one game of its own, a commit of ``--rows`` rows at a time, one after another, for
``--seconds``; the figures are commits/s in all and each commit's p50/p99 in ms. A fresh
database for each count, on a PostgreSQL server started for the run (fsync on, as it
comes).
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import sys
import time

from feastlog.replay.record.rows import Row
from feastlog.service.store import Batch
from feastlog.service.store.postgres import PgStore
from scripts.cluster import set_up_feastlog_role, start_postgres, stop_postgres


def row(game_id: str, seq: int) -> Row:
    """A row as the store keeps it (no rules here)."""
    return Row(game_id, seq, "command", "seat:0", f"c{seq}", b"x" * 40, "t", "p", f"h{seq}", "s")


def writer(dsn: str, k: int, rows: int, start: float, seconds: float, out: object) -> None:
    """Commit until ``start + seconds``: the commits' times (s), sent to ``out``."""
    store = PgStore(dsn, pool_size=2)
    times = []
    seq = 0
    try:
        while time.time() < start:
            time.sleep(0.001)
        while time.time() < start + seconds:
            batch = Batch(rows=[row(f"w{k}", seq + i + 1) for i in range(rows)])
            began = time.perf_counter()
            store.write(batch)
            times.append(time.perf_counter() - began)
            seq += rows
    finally:
        store.close()
    out.put(times)  # type: ignore[attr-defined]


def measure(dsn: str, writers: int, rows: int, seconds: float) -> tuple[float, float, float]:
    """(commits/s in all, p50 ms, p99 ms) of ``writers`` writing at once."""
    queue: multiprocessing.Queue[list[float]] = multiprocessing.Queue()
    start = time.time() + 1.5  # every writer's store open by then
    procs = [
        multiprocessing.Process(target=writer, args=(dsn, k, rows, start, seconds, queue))
        for k in range(writers)
    ]
    for p in procs:
        p.start()
    times = sorted(t for _ in procs for t in queue.get())
    for p in procs:
        p.join()
    return (
        len(times) / seconds,
        1000 * times[len(times) // 2],
        1000 * times[min(len(times) - 1, int(len(times) * 0.99))],
    )


def main(argv: list[str] | None = None) -> int:
    """Start PostgreSQL, measure each count of writers, print a table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writers", default="1,2,4")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rows", type=int, default=3)
    args = parser.parse_args(argv)
    postgres = start_postgres()
    lines = []
    try:
        for count in (int(w) for w in args.writers.split(",")):
            dsn = set_up_feastlog_role(postgres, database=f"commits{count}")
            rate, p50, p99 = measure(dsn, count, args.rows, args.seconds)
            lines.append(f"| {count} | {rate:,.0f} | {p50:.2f} | {p99:.2f} |")
    finally:
        stop_postgres(postgres)
        shutil.rmtree(postgres.folder, ignore_errors=True)
    print(f"commits of {args.rows} rows, {args.seconds:g} s a count of writers")
    print("| writers | commits/s | p50 ms | p99 ms |")
    print("|---|---|---|---|")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
