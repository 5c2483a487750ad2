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
import time
from pathlib import Path

from feastlog.cli.benchmarks.serving import Submitted, cpu_seconds, submit_only, with_children
from scripts.cluster import (
    Postgres,
    free_port,
    set_up_feastlog_role,
    start_nginx,
    start_node,
    start_postgres,
    stop_postgres,
    stop_process,
)


def postgres_pids(postgres: Postgres) -> list[int]:
    """The postmaster and its backends."""
    return with_children(
        int((Path(postgres.folder) / "data" / "postmaster.pid").read_text().split()[0])
    )


def measure(
    folder: Path,
    name: str,
    dbs: list[str],
    key: str,
    args: argparse.Namespace,
    offered: float,
    postgres: Postgres | None,
) -> tuple[Submitted, Submitted, str]:
    """Start ``dbs`` as nodes behind nginx; the full-rate and the fixed-rate runs, and
    where the CPU went in the full-rate run (seconds per 1,000 commands)."""
    nodes = [start_node(db, key, folder, i) for i, db in enumerate(dbs, start=1)]
    port = free_port()
    nginx = start_nginx(folder / f"nginx-{name}", port, [p for _, p in nodes])
    address = f"127.0.0.1:{port}"
    try:
        parts = {
            # a node on a DuckDB file commits in a store process of its own: its CPU too
            "nodes": [p for pid, _ in nodes for p in with_children(pid)],
            "postgres": postgres_pids(postgres) if postgres else [],
            "nginx": with_children(nginx),
        }
        before = {part: cpu_seconds(pids) or 0.0 for part, pids in parts.items()}
        client = time.process_time()
        full = asyncio.run(submit_only(address, key, args.kind, args.games, args.players))
        client = time.process_time() - client
        used = {part: (cpu_seconds(pids) or 0.0) - before[part] for part, pids in parts.items()}
        used["client"] = client  # planning the games' commands included
        per = 1000 / full.commands
        where = ", ".join(f"{part} {seconds * per:.2f}" for part, seconds in used.items())
        rate = offered or full.per_second / 2
        fixed = asyncio.run(
            submit_only(address, key, args.kind, args.games, args.players, rate, args.games)
        )
    finally:
        stop_process(nginx, signal.SIGQUIT)
        for pid, _ in nodes:
            stop_process(pid)
    return full, fixed, where


def line(name: str, full: Submitted, fixed: Submitted, where: str) -> str:
    """One setup's figures."""
    return (
        f"| {name} | {full.per_second:,.0f} | {full.percentile(50):.1f} | "
        f"{full.percentile(99):.1f} | {fixed.offered:,.0f} | {fixed.percentile(50):.1f} | "
        f"{fixed.percentile(99):.1f} | {where} |"
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
            duckdb = [str(folder / "bench.duckdb")]
            full, fixed, where = measure(folder, "duckdb", duckdb, key, args, 0, None)
            rows.append(line("DuckDB file, 1 node", full, fixed, where))
            offered = fixed.offered
            for count in (1, 2):
                dsn = set_up_feastlog_role(postgres, database=f"bench{count}")
                nodes = [dsn] * count
                full, fixed, where = measure(
                    folder, f"pg{count}", nodes, key, args, offered, postgres
                )
                name = f"PostgreSQL, {count} node{'s' * (count > 1)}"
                rows.append(line(name, full, fixed, where))
        finally:
            stop_postgres(postgres)
            shutil.rmtree(postgres.folder, ignore_errors=True)
    print(
        f"{args.games} {args.kind} games at once, submit-only, through nginx "
        "(cmd/s: the most taken; p50/p99 ms at that load, then at one offered rate; "
        "CPU seconds per 1,000 commands at the most taken)"
    )
    print("| setup | cmd/s | p50 | p99 | offered cmd/s | p50 | p99 | CPU s / 1,000 commands |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main())
