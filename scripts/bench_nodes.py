"""Commands/s and p99 through nginx: the DuckDB default (one node), PostgreSQL with one
node and with two; the same client (``feastlog bench``'s submit-only load) in the same run.

    python -m scripts.bench_nodes [--games 32] [--kind bon-appetit] [--players 3]

Each setup gets nginx in front (deploy/feastlog.nginx.conf), so the client's path is the
same; every game's commands are worked out beforehand, so only SubmitCommand crosses the
wire. Two figures per setup: the most commands/s with ``--games`` games sending at once
(with p50 and p99 at that load), and p50/p99 at one offered rate for all setups (half of
what the DuckDB node took), where latency compares like with like.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import shutil
import signal
import sys
import tempfile
from pathlib import Path

from cli.bench import Submitted, submit_only
from scripts.cluster import (
    free_port,
    set_up_feastlog_role,
    start_nginx,
    start_node,
    start_postgres,
    stop_postgres,
    stop_process,
)


def measure(
    folder: Path, name: str, dbs: list[str], key: str, args: argparse.Namespace, offered: float
) -> tuple[Submitted, Submitted]:
    """Start ``dbs`` as nodes behind nginx; the full-rate and the fixed-rate runs."""
    nodes = [start_node(db, key, folder, i) for i, db in enumerate(dbs, start=1)]
    port = free_port()
    nginx = start_nginx(folder / f"nginx-{name}", port, [p for _, p in nodes])
    address = f"127.0.0.1:{port}"
    try:
        full = asyncio.run(submit_only(address, key, args.kind, args.games, args.players))
        rate = offered or full.per_second / 2
        fixed = asyncio.run(
            submit_only(address, key, args.kind, args.games, args.players, rate, args.games)
        )
    finally:
        stop_process(nginx, signal.SIGQUIT)
        for pid, _ in nodes:
            stop_process(pid)
    return full, fixed


def line(name: str, full: Submitted, fixed: Submitted) -> str:
    """One setup's figures."""
    return (
        f"| {name} | {full.per_second:,.0f} | {full.percentile(50):.1f} | "
        f"{full.percentile(99):.1f} | {fixed.offered:,.0f} | {fixed.percentile(50):.1f} | "
        f"{fixed.percentile(99):.1f} |"
    )


def main(argv: list[str] | None = None) -> int:
    """Run the three setups and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=32)
    parser.add_argument("--kind", default="bon-appetit")
    parser.add_argument("--players", type=int, default=3)
    args = parser.parse_args(argv)
    key = "org_" + secrets.token_urlsafe(32)
    rows = []
    with tempfile.TemporaryDirectory(prefix="feastlog-bench-") as tmp:
        folder = Path(tmp)
        postgres = start_postgres()
        try:
            full, fixed = measure(folder, "duckdb", [str(folder / "bench.duckdb")], key, args, 0)
            rows.append(line("DuckDB file, 1 node", full, fixed))
            offered = fixed.offered
            for count in (1, 2):
                dsn = set_up_feastlog_role(postgres, database=f"bench{count}")
                full, fixed = measure(folder, f"pg{count}", [dsn] * count, key, args, offered)
                rows.append(line(f"PostgreSQL, {count} node{'s' * (count > 1)}", full, fixed))
        finally:
            stop_postgres(postgres)
            shutil.rmtree(postgres.folder, ignore_errors=True)
    print(
        f"{args.games} {args.kind} games at once, submit-only, through nginx "
        "(cmd/s: the most taken; p50/p99 ms at that load, then at one offered rate)"
    )
    print("| setup | cmd/s | p50 | p99 | offered cmd/s | p50 | p99 |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
