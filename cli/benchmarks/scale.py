"""What ``feastlog bench-scale`` measures: how a season file's figures grow with its games.

Stores are built fast and honestly: a few distinct games per kind are played from fixed
seeds (random legal commands through the fold) and verified; then each is replicated
with fresh game ids (the genesis names the new id, a tournament of 100 games and a
created-at time; every row is sealed again, so each replica's chain is its own) and
written through ``Store.write`` in batches, outcome rows included, as the service
writes them.  Replicas share their template's seed: the benchmark measures storage and
bulk paths, not fairness.

Then, on each store: file bytes per game; start-up of a real ``feastlog serve`` process;
``ListGames`` p99 (first pages, following tokens, filtered by kind and by tournament);
``GetStats`` and ``GetStandings`` seconds; memory per folded game; ``audit --all`` rows/s
with 1 and with every worker beside one read+decode scan of the same games (on a file
of more than 2,000 games, every k-th game of it, so that about 2,000 are audited: the
same scans over the whole log, the same verification); one ordered read+decode scan of
every row; import rows/s (of up to 1,000 games exported from the store, likewise
spread over it).  Replicas are sealed by worker processes while the store is written.
"""

from __future__ import annotations

import asyncio
import secrets
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from feastlog.cli.season import audit_file, export_file
from feastlog.cli.wire import open_channel, spawn_server
from feastlog.client import AsyncClient, calls
from feastlog.service.app import bulk
from feastlog.service.app.season import import_into, record_texts, verify_records
from feastlog.service.bench.data import (
    PER_TOURNAMENT,
    Built,
    audit_report_of,
    build,
    build_store,
    count_games,
)

KINDS = ("bon-appetit", "menu-masters", "picky-eaters")
TEMPLATES_PER_KIND = 4


def templates() -> list[Built]:
    """A few verified finished games of every kind."""
    found = []
    for k, kind in enumerate(KINDS):
        for i in range(TEMPLATES_PER_KIND):
            built = build(kind, players=2 + i % 3, seed_byte=10 * k + i + 1)
            report = audit_report_of(built)
            if not report.ok:
                raise click.ClickException(f"template {kind} {i} does not verify: {report}")
            found.append(built)
    return found


def rss_kib(pid: int) -> int:
    """A process's resident memory in KiB (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def served_figures(address: str, pid: int, games: int) -> dict[str, float]:
    """ListGames p99, stats and standings seconds, memory per folded game."""
    # a spectator's calls, each sent once
    async with AsyncClient(channel=open_channel(address), retries=0, timeout=None) as client:
        spent: list[float] = []
        token = ""
        for i in range(200):
            if i % 4 == 0:
                token = ""
            kind = KINDS[i % 3] if i % 5 == 1 else ""
            league = (
                f"league-{(i * 37) % max(1, games // PER_TOURNAMENT):04d}" if i % 5 == 2 else ""
            )
            # a filtered list starts at its first page: a token is bound to its filter, so
            # the unfiltered list's token is kept for its next page
            filtered = bool(kind or league)
            start = time.perf_counter()
            page = await client.run(calls.list_games(kind, league, 50, "" if filtered else token))
            spent.append(time.perf_counter() - start)
            if not filtered:
                token = page.next_page_token
        start = time.perf_counter()
        await client.run(calls.stats())
        stats_s = time.perf_counter() - start
        start = time.perf_counter()
        await client.run(calls.standings("league-0000"))
        standings_s = time.perf_counter() - start
        before = rss_kib(pid)
        folded = min(200, games)
        for number in range(folded):
            await client.run(calls.view(f"g_{number:016x}").unread())
        per_game = (rss_kib(pid) - before) / folded
    spent.sort()
    return {
        "list_p50_ms": 1000 * statistics.median(spent),
        "list_p99_ms": 1000 * spent[int(0.99 * len(spent))],
        "stats_s": stats_s,
        "standings_s": standings_s,
        "kib_per_game": per_game,
    }


AUDIT_SAMPLE = 2000  # games audited at most: every k-th game of a larger file
IMPORT_SAMPLE = 1000  # games exported and imported at most, likewise


def audited(path: Path, workers: int, every: int) -> tuple[float, float]:
    """``audit --all`` rows/s over every ``every``-th game, and the rows/s of a read+decode
    scan of the same games: the mean of one just before and one just after the audit, so
    that a machine whose load changes weighs on both sides of the ratio alike."""
    rows, before = bulk.read_and_decode(str(path), "", every)
    _, speed = audit_file(str(path), workers, every=every)
    return speed.rate, 2 * rows / (before + speed.read_seconds)


def measure(path: Path, games: int, rows: int, workers: int) -> dict[str, Any]:
    """Every figure of one store."""
    figures: dict[str, Any] = {"games": games, "rows": rows}
    figures["bytes_per_game"] = path.stat().st_size / games
    start = time.perf_counter()
    proc, address = spawn_server(path, secrets.token_urlsafe(32))
    figures["startup_s"] = time.perf_counter() - start
    try:
        figures.update(asyncio.run(served_figures(address, proc.pid, games)))
    finally:
        proc.terminate()
        proc.wait(timeout=60)
    # a large file's audit is timed on every k-th game: the same scans (over the whole
    # log, in order) and the same verification, in minutes rather than hours
    every = max(1, games // AUDIT_SAMPLE)
    one, read_1 = audited(path, 1, every)
    many, read_all = audited(path, workers, every)
    full_rows, full_seconds = bulk.read_and_decode(str(path))
    figures.update(
        audited=-(-games // every),
        audit_1=one,
        audit_all=many,
        workers=workers,
        read_decode=statistics.median([read_1, read_all]),
        ratio_1=one / read_1,
        ratio_all=many / read_all,
        full_scan=full_rows / full_seconds,
    )
    with tempfile.TemporaryDirectory() as folder:
        bundle = Path(folder) / "export.jsonl"
        export_file(str(path), str(bundle), workers, every=max(1, games // IMPORT_SAMPLE))
        start = time.perf_counter()
        checked = verify_records(record_texts([str(bundle)]), workers, lambda _: None)
        _, imported, _ = import_into(str(Path(folder) / "import.duckdb"), checked)
        figures["import_rows_s"] = imported / (time.perf_counter() - start)
    return figures


COLUMNS = (
    ("games", "{:,}"),
    ("bytes_per_game", "{:,.0f}"),
    ("startup_s", "{:.2f}"),
    ("list_p99_ms", "{:.1f}"),
    ("stats_s", "{:.3f}"),
    ("standings_s", "{:.3f}"),
    ("audited", "{:,}"),
    ("audit_1", "{:,.0f}"),
    ("audit_all", "{:,.0f}"),
    ("read_decode", "{:,.0f}"),
    ("ratio_all", "{:.3f}"),
    ("full_scan", "{:,.0f}"),
    ("import_rows_s", "{:,.0f}"),
    ("kib_per_game", "{:,.0f}"),
)
HEADINGS = (
    "games",
    "bytes/game",
    "start s",
    "list p99 ms",
    "stats s",
    "standings s",
    "games audited",
    "audit 1w rows/s",
    "audit all rows/s",
    "read+decode rows/s",
    "audit all / read",
    "full scan rows/s",
    "import rows/s",
    "KiB/folded game",
)


def table(found: list[dict[str, Any]]) -> list[str]:
    """The figures as a Markdown table."""
    lines = ["| " + " | ".join(HEADINGS) + " |", "|" + "---|" * len(HEADINGS)]
    for figures in found:
        cells = [fmt.format(figures[key]) for key, fmt in COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def run(
    sizes: list[int],
    keep: str | None,
    reuse: bool,
    workers: int,
    progress: Callable[[str], None] = lambda _: None,
) -> list[str]:
    """Build stores of each size (or reuse a --keep DIR's), measure each; the table's
    lines.  ``progress`` hears what is built and measured, as it happens."""
    made = templates()
    found = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(keep or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        for size in sizes:
            path = folder / f"season-{size}.duckdb"
            if not (reuse and path.exists() and count_games(path)[0] == size):
                path.unlink(missing_ok=True)
                built = build_store(path, size, made, workers)
                progress(f"built {size:,} games in {built:.1f} s")
            games, rows = count_games(path)
            progress(f"measuring {path}: {games:,} games, {rows:,} rows")
            found.append(measure(path, games, rows, workers))
            progress("\n".join(table(found[-1:])[2:]))
    return table(found)
