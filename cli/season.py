"""A season in one file: audit, export and import every game in bulk; the projection.

``audit --all`` and ``export --all`` read the log in one ordered scan per worker;
``import`` verifies exported records on every core and writes them in bulk;
``projection rebuild`` makes the outcomes projection again from the log.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import click

from feastlog.cli.errors import FAILED, CliError, cannot_read, unreachable
from feastlog.cli.output import Bounded, echo_lines
from feastlog.replay.games.engine import how_many
from feastlog.service.app import bulk, season
from feastlog.service.app.errors import CannotOpenStore
from feastlog.service.app.season import RUNNING, ImportClash


class SeasonError(CliError):
    """Records that do not verify or clash with the file: nothing written, exit code 1."""

    def __init__(self, message: str) -> None:
        super().__init__(message, FAILED)


def progress(length: int, label: str) -> Any:
    """A progress bar on stderr (stdout stays clean for --json)."""
    bar: Any = click.progressbar(length=length, label=label, file=sys.stderr)
    return bar


def workers_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """--workers: processes to spread the games over (default: every core)."""
    return click.option(
        "--workers",
        type=Bounded(1),
        default=None,
        help="Processes to spread the games over (default: every core; at most 4 a core, "
        "and no more than the games).",
    )(command)


@contextmanager
def offline_file() -> Iterator[None]:
    """A file that is missing, damaged or held by a server: exit 3; a clash: exit 1."""
    try:
        yield
    except ImportClash as clash:
        raise SeasonError(clash.message) from clash
    except CannotOpenStore as unusable:
        raise unreachable(unusable.message) from unusable


def audit_file(
    db_path: str,
    workers: int | None,
    game_kind: str = "",
    baseline: bool = True,
    every: int = 1,
) -> tuple[list[dict[str, Any]], season.Throughput]:
    """Verify every game (``every``: every k-th) of a file over ``workers`` processes,
    with a progress bar."""
    with offline_file():
        games, _ = season.count(db_path)
        sampled = -(-games // every)
        chosen = bulk.workers_for(workers, sampled)
        with progress(sampled, "verifying") as bar:
            return season.audit_all(db_path, chosen, bar.update, game_kind, baseline, every)


def export_file(
    db_path: str, output: str, workers: int | None, every: int = 1
) -> tuple[int, int, int]:
    """Every game's record (``every``: every k-th) to a JSON Lines file, with a progress bar."""
    with offline_file():
        games, _ = season.count(db_path)
        sampled = -(-games // every)
        chosen = bulk.workers_for(workers, sampled)
        with progress(sampled, "exporting") as bar:
            return season.export_all(db_path, output, chosen, bar.update, every)


@click.command("import")
@click.argument("files", nargs=-1, required=True)  # missing, a folder, unreadable: exit 3
@click.option("--db", "db_path", default="feastlog.duckdb", show_default=True)
@workers_option
def import_command(files: Sequence[str], db_path: str, workers: int | None) -> None:
    """Verify exported records (FILE.json, or .jsonl from export --all) and load them in bulk.

    Every finished game's record is verified first; if any fails, nothing is written.
    Records of games still running (no seed yet) are left out, and games already in the
    file are skipped, so importing twice changes nothing.
    """
    try:
        items = season.record_texts(files)
    except OSError as bad_file:
        raise cannot_read(bad_file.filename or " ".join(files), bad_file) from None
    except UnicodeDecodeError as bad_text:
        raise cannot_read(" ".join(files), bad_text) from None
    start = time.perf_counter()
    with progress(len(items), "verifying") as bar:
        checked = season.verify_records(items, bulk.workers_for(workers, len(items)), bar.update)
    running = [c for c in checked if c.problem == RUNNING]
    echo_lines((f"{c.where}: {c.game_id}: {RUNNING}" for c in running), err=True)
    checked = [c for c in checked if c.problem != RUNNING]
    bad = [c for c in checked if c.problem]
    if bad:
        echo_lines((f"{c.where}: {c.problem}" for c in bad[:20]), err=True)
        failing = f"{len(bad)} of {how_many(len(checked), 'record')}"
        raise SeasonError(f"{failing} failed; nothing imported")
    with offline_file():
        added, rows, skipped = season.import_into(db_path, checked)
    seconds = time.perf_counter() - start
    click.echo(
        f"imported {how_many(added, 'game')}, {rows:,} rows in {seconds:.1f} s "
        f"({rows / seconds if seconds else 0:,.0f} rows/s); {skipped} already there"
        + (f"; {len(running)} still running, left out" if running else "")
    )


@click.group("projection")
def projection_group() -> None:
    """The outcomes projection (SQL tables of finished games' results) of a file."""


@projection_group.command("rebuild")
@click.option("--db", "db_path", default="feastlog.duckdb", show_default=True)
@workers_option
def projection_rebuild_command(db_path: str, workers: int | None) -> None:
    """Make the projection again from the log (after a schema change), with a progress bar."""
    with offline_file():
        games, _ = season.count(db_path)
    start = time.perf_counter()
    chosen = bulk.workers_for(workers, games)
    try:
        with progress(games, "projecting") as bar:
            done = bulk.rebuild_projection(db_path, chosen, bar.update)
    except CannotOpenStore as locked:
        raise unreachable(locked.message) from locked
    seconds = time.perf_counter() - start
    click.echo(f"projected {how_many(done, 'finished game')} of {games} in {seconds:.1f} s")
