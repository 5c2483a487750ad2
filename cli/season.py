"""A season in one file: audit, export and import every game in bulk; the projection.

``audit --all`` and ``export --all`` read the log in one ordered scan per worker;
``import`` verifies exported records on every core and writes them in bulk;
``projection rebuild`` makes the outcomes projection again from the log.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
from google.protobuf.message import DecodeError

from cli.errors import FAILED, CliError, unreachable
from replay import fold
from replay.engine import MalformedCommand, RuleViolation
from replay.export import BadExport, export_record, load_record, verify_document
from replay.history import refold
from replay.record import SEED_REVEAL
from service import bulk, projection
from service.audit_service import audit_stored
from service.errors import CannotOpenStore
from service.store import Batch, NewGame, Store, StoredGame


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
        type=click.IntRange(min=1),
        default=None,
        help="Processes to spread the games over (default: every core).",
    )(command)


def existing(db_path: str) -> str:
    """The path of a database that exists, or exit 3."""
    if not Path(db_path).exists():
        raise unreachable(f"no database at {db_path}")
    return db_path


def count(db_path: str) -> tuple[int, int]:
    """(games, rows) in a file no server holds."""
    store = open_store(db_path, read_only=True)
    try:
        return store.count_games()
    finally:
        store.close()


def open_store(db_path: str, read_only: bool) -> Store:
    """The file opened, or a plain error when a server holds it."""
    try:
        return Store(existing(db_path) if read_only else db_path, read_only=read_only)
    except CannotOpenStore as locked:
        raise unreachable(locked.message) from locked


def audit_report(stored: StoredGame) -> dict[str, Any]:
    """One game's audit report as data (sent back from a worker)."""
    return audit_stored(stored).to_dict()


@dataclass(frozen=True)
class Throughput:
    """How fast a bulk pass went beside the plain read + decode of the same rows."""

    rows: int
    seconds: float
    workers: int
    read_rows: int
    read_seconds: float

    @property
    def rate(self) -> float:
        """Rows per second of the pass."""
        return self.rows / self.seconds if self.seconds else 0.0

    @property
    def read_rate(self) -> float:
        """Rows per second of one scan with protobuf decoding and nothing else."""
        return self.read_rows / self.read_seconds if self.read_seconds else 0.0

    def line(self, what: str) -> str:
        """The throughput in one line."""
        ratio = self.rate / self.read_rate if self.read_rate else 0.0
        return (
            f"{what}: {self.rows:,} rows in {self.seconds:.1f} s, {self.rate:,.0f} rows/s with "
            f"{self.workers} worker{'s' if self.workers != 1 else ''}; one scan with protobuf "
            f"decoding reads the same rows at {self.read_rate:,.0f} rows/s ({ratio:.3f} of it)"
        )


def audit_all(
    db_path: str, workers: int | None, game_kind: str = "", baseline: bool = True
) -> tuple[list[dict[str, Any]], Throughput]:
    """Verify every game of a file over ``workers`` processes; reports in list order."""
    chosen = workers or bulk.default_workers()
    games, _ = count(db_path)
    start = time.perf_counter()
    with progress(games, "verifying") as bar:
        reports = list(bulk.over_games(db_path, audit_report, chosen, game_kind, bar.update))
    seconds = time.perf_counter() - start
    read_rows, read_seconds = bulk.read_and_decode(db_path, game_kind) if baseline else (0, 0.0)
    checked = sum(r["rows"] for r in reports)
    return reports, Throughput(checked, seconds, chosen, read_rows, read_seconds)


def export_line(stored: StoredGame) -> str:
    """A game's export document on one line (the seed only once revealed)."""
    outcome = None
    if stored.rows[-1].kind == SEED_REVEAL:
        try:
            table = refold(stored.rows, stored.server_seed, stored.pack_body).tables[-1]
            outcome = fold.outcome(table)
        except (DecodeError, RuleViolation, MalformedCommand, ValueError):
            pass  # a record that does not fold is exported as stored, claiming no result
    try:
        document = export_record(stored.rows, stored.pack_body, outcome)
    except DecodeError:
        return ""  # a row body that does not decode: nothing to export (audit names it)
    return json.dumps(document, sort_keys=True)


def export_all(db_path: str, output: str, workers: int | None) -> tuple[int, int, int]:
    """Write every game's record to a JSON Lines file, one game a line.

    Returns (games written, complete ones, records left out because a row does not decode).
    """
    games, _ = count(db_path)
    written = complete = broken = 0
    with Path(output).open("w") as out, progress(games, "exporting") as bar:
        for line in bulk.over_games(
            db_path, export_line, workers or bulk.default_workers(), "", bar.update
        ):
            out.write(line + "\n")
            written += 1
            complete += '"server_seed": null' not in line
    return written, complete, broken


def record_texts(paths: Sequence[str]) -> list[tuple[str, str]]:
    """(where, text) of every record in the files: a .jsonl holds one record a line."""
    found = []
    for path in paths:
        text = Path(path).read_text()
        if path.endswith(".jsonl"):
            found += [
                (f"{path}:{i}", line) for i, line in enumerate(text.splitlines(), 1) if line.strip()
            ]
        else:
            found.append((path, text))
    return found


@dataclass(frozen=True)
class Checked:
    """A record verified for import: its rows and what goes in with them, or why not."""

    where: str
    game_id: str
    problem: str
    rows: tuple[Any, ...] = ()
    pack_bytes: bytes = b""
    server_seed: bytes = b""
    projected: projection.Projected | None = None


def check_record(item: tuple[str, str]) -> Checked:
    """Verify one exported record (chain, seed, rules, states, claimed result)."""
    where, text = item
    try:
        record = load_record(text)
        report = verify_document(text)
    except BadExport as bad:
        return Checked(where, "", str(bad))
    if not report.ok:
        return Checked(where, report.game_id, report.summary())
    if record.server_seed is None:
        return Checked(where, report.game_id, RUNNING)
    stored = StoredGame(record.rows, record.server_seed, record.pack_bytes, ())
    return Checked(
        where,
        report.game_id,
        "",
        record.rows,
        record.pack_bytes,
        record.server_seed,
        projection.rows_of_stored(stored),
    )


def verify_records(
    items: Sequence[tuple[str, str]], workers: int, advance: Callable[[int], None]
) -> list[Checked]:
    """Verify records over ``workers`` processes, in the order given."""
    if workers <= 1 or len(items) < 2:
        out = []
        for item in items:
            out.append(check_record(item))
            advance(1)
        return out
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    with context.Pool(workers) as pool:
        out = []
        for checked in pool.imap(check_record, items, chunksize=8):
            out.append(checked)
            advance(1)
        return out


IMPORT_BATCH = 500  # games per transaction
RUNNING = "still running when exported (no seed): left out"


def import_checked(store: Store, records: Iterable[Checked]) -> tuple[int, int, int]:
    """Write verified records not already in the file: (games added, rows, already there).

    A game already there with the same rows is skipped (import is idempotent); one there
    with other rows is refused and nothing is written.
    """
    records = list(records)
    known = store.known_games([r.game_id for r in records])
    clashes = [r for r in records if r.game_id in known and known[r.game_id] != r.rows[-1].hash]
    if clashes:
        names = ", ".join(r.game_id for r in clashes[:5])
        raise SeasonError(
            f"{len(clashes)} game(s) already in the file with other rows: {names}; nothing imported"
        )
    fresh, seen = [], set()
    for r in records:
        if r.game_id not in known and r.game_id not in seen:
            fresh.append(r)
            seen.add(r.game_id)
    added_rows = 0
    for start in range(0, len(fresh), IMPORT_BATCH):
        batch = Batch()
        for r in fresh[start : start + IMPORT_BATCH]:
            batch.games.append(imported_game(r))
            batch.rows += r.rows[1:]
            batch.outcomes += r.projected or []
            added_rows += len(r.rows)
        store.write(batch)
    return len(fresh), added_rows, len(records) - len(fresh)


def imported_game(record: Checked) -> NewGame:
    """The game of an imported record: seats named, no token (it has ended)."""
    from replay.history import genesis_of

    genesis = genesis_of(record.rows[0])
    return NewGame(
        record.rows[0],
        [(s.name, "") for s in genesis.seats],
        record.server_seed,
        genesis.pack_sha256,
        genesis.game_kind,
        genesis.pack_id,
        record.pack_bytes,
    )


@click.command("import")
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--db", "db_path", default="feastlog.duckdb", show_default=True)
@workers_option
def import_command(files: Sequence[str], db_path: str, workers: int | None) -> None:
    """Verify exported records (FILE.json, or .jsonl from export --all) and load them in bulk.

    Every finished game's record is verified first; if any fails, nothing is written.
    Records of games still running (no seed yet) are left out, and games already in the
    file are skipped, so importing twice changes nothing.
    """
    try:
        items = record_texts(files)
    except (OSError, UnicodeDecodeError) as bad_file:
        raise unreachable(f"cannot read {getattr(bad_file, 'filename', '') or files}") from None
    start = time.perf_counter()
    with progress(len(items), "verifying") as bar:
        checked = verify_records(items, workers or bulk.default_workers(), bar.update)
    running = [c for c in checked if c.problem == RUNNING]
    for c in running:
        click.echo(f"{c.where}: {c.game_id}: {RUNNING}", err=True)
    checked = [c for c in checked if c.problem != RUNNING]
    bad = [c for c in checked if c.problem]
    if bad:
        for c in bad[:20]:
            click.echo(f"{c.where}: {c.problem}", err=True)
        raise SeasonError(f"{len(bad)} of {len(checked)} record(s) failed; nothing imported")
    store = open_store(db_path, read_only=False)
    try:
        added, rows, skipped = import_checked(store, checked)
    finally:
        store.close()
    seconds = time.perf_counter() - start
    click.echo(
        f"imported {added} game(s), {rows:,} rows in {seconds:.1f} s "
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
    games, _ = count(db_path)
    start = time.perf_counter()
    chosen = workers or bulk.default_workers()
    try:
        with progress(games, "projecting") as bar:
            done = bulk.rebuild_projection(db_path, chosen, bar.update)
    except CannotOpenStore as locked:
        raise unreachable(locked.message) from locked
    click.echo(
        f"projected {done} finished game(s) of {games} in {time.perf_counter() - start:.1f} s"
    )


SEASON_COMMANDS = (import_command, projection_group)
