"""A season in one file, offline: every game audited, exported or imported in bulk.

``audit_all`` and ``export_all`` read the log in one ordered scan per worker
(``service/app/bulk.py``); ``verify_records`` checks exported records on every core and
``import_checked`` writes them in bulk. The CLI's ``audit --all``, ``export --all`` and
``import`` call these on a file no server holds.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from google.protobuf.message import DecodeError

from feastlog.replay.games.text import escaped
from feastlog.replay.record.export import (
    BadExport,
    export_record,
    read_export,
    read_record_file,
    records_in,
    verify_read,
)
from feastlog.replay.record.history import genesis_of
from feastlog.service.app import bulk
from feastlog.service.app.bounds import FIELDS
from feastlog.service.app.errors import CannotOpenStore, ServiceError
from feastlog.service.app.source import audit_stored
from feastlog.service.store import Batch, NewGame, StoredGame, projection
from feastlog.service.store import port as store_api
from feastlog.service.store.port import EventStore, exists
from feastlog.v1 import record_pb2


class ImportClash(ServiceError):
    """Records of games the file holds with other rows: nothing is imported."""

    reason = "IMPORT_CLASH"


def _nothing(done: int) -> None:
    """A progress callback that shows nothing."""


def count(db_path: str) -> tuple[int, int]:
    """(games, rows) in a file no server holds; CannotOpenStore when missing or held."""
    store = open_store(db_path, read_only=True)
    try:
        return store.count_games()
    finally:
        store.close()


def open_store(db_path: str, read_only: bool) -> EventStore:
    """The file (or PostgreSQL database) opened; CannotOpenStore when it is missing (to
    read) or a server holds the file."""
    if read_only and not exists(db_path):
        raise CannotOpenStore(f"no database at {db_path}")
    return store_api.open_store(db_path, read_only=read_only)


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
    db_path: str,
    workers: int | None,
    advance: Callable[[int], None] = _nothing,
    game_kind: str = "",
    baseline: bool = True,
    every: int = 1,
) -> tuple[list[dict[str, Any]], Throughput]:
    """Verify every game of a file over ``workers`` processes; reports in list order.

    ``every=k`` verifies every k-th game only (benchmarks of large files), the baseline
    reading the same games.
    """
    chosen = workers or bulk.default_workers()
    start = time.perf_counter()
    reports = list(bulk.over_games(db_path, audit_report, chosen, game_kind, advance, every))
    seconds = time.perf_counter() - start
    read_rows, read_seconds = (
        bulk.read_and_decode(db_path, game_kind, every) if baseline else (0, 0.0)
    )
    checked = sum(r["rows"] for r in reports)
    return reports, Throughput(checked, seconds, chosen, read_rows, read_seconds)


def export_line(stored: StoredGame) -> str:
    """A game's export document on one line (the seed only once revealed; a record that
    does not fold is exported as stored, claiming no result)."""
    try:
        document = export_record(stored.rows, stored.pack_body)
    except DecodeError:
        return ""  # a row body that does not decode: nothing to export (audit names it)
    return json.dumps(document, sort_keys=True)


def export_all(
    db_path: str,
    output: str,
    workers: int | None,
    advance: Callable[[int], None] = _nothing,
    every: int = 1,
) -> tuple[int, int, int]:
    """Write every game's record to a JSON Lines file, one game a line (``every=k``: every
    k-th game only, as ``audit_all``).

    Returns (games written, complete ones, records left out because a row does not decode).
    """
    written = complete = broken = 0
    with Path(output).open("w") as out:
        for line in bulk.over_games(
            db_path, export_line, workers or bulk.default_workers(), "", advance, every
        ):
            if not line:
                broken += 1
                continue
            out.write(line + "\n")
            written += 1
            complete += '"server_seed": null' not in line
    return written, complete, broken


def record_texts(paths: Sequence[str]) -> list[tuple[str, str]]:
    """(where, text) of every record in the files: a .jsonl holds one record a line."""
    found = []
    for path in paths:
        found += records_in(path, read_record_file(path))
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


def not_as_created(genesis: record_pb2.Genesis) -> str:
    """Why a verified record's names could not have come from CreateGame ('' if they
    could): a game id, tournament id or seat name that is empty where it may not be, too
    long, or not plain text (control, line-break, bidi or invisible format characters),
    or seats of one name.  A server never writes such a record; taken in, its names would
    reach every list and terminal that shows games.  Each name is held to the input
    policy of the request field it came from (``service.app.bounds``)."""
    checks = [
        ("game id", genesis.game_id, "game_id", True),
        ("tournament id", genesis.tournament_id, "tournament_id", False),
    ]
    checks += [(f"seat {i}'s name", s.name, "players", True) for i, s in enumerate(genesis.seats)]
    for what, text, name, required in checks:
        field = FIELDS[name]
        if required and not text.strip():
            return f"not imported: its {what} is empty, as no server makes one"
        if len(text) > field.bound:
            return f"not imported: its {what} is over {field.bound} characters"
        found = field.refused_character(text)
        if found is not None:
            return f"not imported: its {what} holds {found}, as no server makes one"
    names = [s.name.strip() for s in genesis.seats]
    if len(set(names)) != len(names):
        return "not imported: two seats have one name, as no server makes"
    return ""


def shown_id(game_id: str) -> str:
    """A game id as a line may show it: escaped when it is not plain text, cut when long."""
    return escaped(game_id)[:80]


def check_record(item: tuple[str, str]) -> Checked:
    """Verify one exported record (chain, seed, rules, states, claimed result)."""
    where, text = item
    try:
        document, record = read_export(text)  # read once, for the check and the import
        report = verify_read(document, record)
    except BadExport as bad:
        return Checked(where, "", str(bad))
    if not report.ok:
        return Checked(where, report.game_id, report.summary())
    if record.server_seed is None:
        return Checked(where, report.game_id, RUNNING)
    unlike = not_as_created(genesis_of(record.rows[0]))
    if unlike:
        return Checked(where, shown_id(report.game_id), unlike)
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
    with bulk.worker_context().Pool(workers) as pool:
        out = []
        for checked in pool.imap(check_record, items, chunksize=8):
            out.append(checked)
            advance(1)
        return out


IMPORT_BATCH = 500  # games per transaction
RUNNING = "still running when exported (no seed): left out"


def import_checked(store: EventStore, records: Iterable[Checked]) -> tuple[int, int, int]:
    """Write verified records not already in the file: (games added, rows, already there).

    A game already there with the same rows is skipped (import is idempotent); one there
    with other rows is refused (ImportClash) and nothing is written.
    """
    records = list(records)
    known = store.known_games([r.game_id for r in records])
    clashes = [r for r in records if r.game_id in known and known[r.game_id] != r.rows[-1].hash]
    if clashes:
        names = ", ".join(r.game_id for r in clashes[:5])
        raise ImportClash(
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
    from feastlog.replay.record.history import genesis_of

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


def import_into(db_path: str, records: Iterable[Checked]) -> tuple[int, int, int]:
    """``import_checked`` on a file opened for writing (made if missing), then closed."""
    store = open_store(db_path, read_only=False)
    try:
        return import_checked(store, records)
    finally:
        store.close()
