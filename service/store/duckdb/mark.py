"""The commit mark: what the file held after its last commit, kept outside DuckDB's log.

DuckDB replays its write-ahead log when it opens a file, and refuses a log in which an
entry's checksum fails.  But it reads a log whose header it cannot parse, and a log cut
short, as a crash in the middle of a write: it replays what it can (nothing, for a
damaged header or a file of random bytes) and opens the file without a word.  The
commits in the rest are gone, and the next write or checkpoint deletes the evidence.
DuckDB's replay swallows a serialization error as a torn write and rethrows every other
error (``wal_replay.cpp``; its ``abort_on_wal_failure`` cannot be set from SQL or
Python, duckdb/duckdb#25432), and truncates the log to what it replayed at its first
write (duckdb/duckdb#14785).  ``tests/store/test_damaged_wal.py`` damages a real server's log
every way and holds each open to "every acknowledged game, or refused, nothing touched".

So the store keeps, in ``FILE.commits`` beside the database, a *tally* of what its
append-only tables held after its last commit (rows, games listed, refusals, seat
entropy), the last row's game, seq and hash, and what the named arbiters were.  It is
written after every commit, in place and without an fsync: it trails the log, never
leads it, so a file that holds less than its mark has lost commits that were
acknowledged.  Before a store is opened for writing (and when one is opened to read)
the file as DuckDB opens it is held to the mark; a shortfall refuses the open, with
nothing moved, written or deleted, and ``feastlog recover`` is the way on
(``recover`` below).

The mark holds counts, times and hashes the record already makes public, never a seed,
token digest or command.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import logging
import os
import re
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import duckdb

from feastlog.service.files import hold_private_umask, release_private_umask, tighten
from feastlog.service.store.duckdb.errors import open_error
from feastlog.service.store.errors import CannotOpenStore, DamagedLog
from feastlog.service.store.port import MARK_SUFFIX, WAL_SUFFIX

SUFFIX = MARK_SUFFIX
FORMAT = 1
SIZE = 1024  # the mark is written in place, padded to this size: one write, never torn
# The first bytes of every write-ahead log DuckDB writes (its version entry: field 100,
# the entry type WAL_VERSION, then field 101).  A log that does not begin so has lost its
# header, and DuckDB would replay none of it.
WAL_HEADER = bytes.fromhex("6400626500")

# The append-only tables a tally counts, and how: a file without one (its log lost
# before the table was checkpointed) holds none of it.
COUNTED = {
    "events": "count(*)",
    "games": "coalesce(max(n), 0)",
    "rejections": "count(*)",
    "seat_entropy": "count(*)",
}

# A row's place in the tally: an empty file has none.
NO_ROW = ("", 0, "")
# The tally's counts, as Tally names them and as a refusal or a recovery says them.
COUNTS = {
    "games": "games",
    "rows": "rows",
    "refusals": "refused commands",
    "entropy": "seat entropies",
}


@dataclass(frozen=True)
class Tally:
    """How much a file's append-only tables hold, its last row, and its arbiters."""

    rows: int = 0
    games: int = 0
    refusals: int = 0
    entropy: int = 0
    last_row: tuple[str, int, str] = NO_ROW  # game_id, seq, hash of the last row written
    # the arbiters table's digest (names and times, never a key's digest); two while a
    # change is being committed: the one before and the one after
    arbiters: tuple[str, ...] = field(default=())

    def shortfall(self, held: Tally, last_row_held: bool) -> list[str]:
        """What this mark records that ``held`` (the file as opened) lacks, in words."""
        missing = [
            f"{have} of {want} {COUNTS[name]}"
            for name, (want, have) in self.against(held).items()
            if have < want
        ]
        if self.last_row != NO_ROW and not last_row_held and not missing:
            game_id, seq, _ = self.last_row
            missing.append(f"row {seq} of {game_id} missing or changed")
        if self.arbiters and held.arbiters[0] not in self.arbiters:
            missing.append("the named arbiters not as last changed")
        return missing

    def against(self, held: Tally) -> dict[str, tuple[int, int]]:
        """Each count: (what this tally records, what ``held`` holds)."""
        return {name: (getattr(self, name), getattr(held, name)) for name in COUNTS}

    def after(self, rows: Sequence[Any], games: int, refusals: int, entropy: int) -> Tally:
        """The tally once a commit of these rows, games, refusals and entropies is in."""
        last = rows[-1] if rows else None
        return replace(
            self,
            rows=self.rows + len(rows),
            games=self.games + games,
            refusals=self.refusals + refusals,
            entropy=self.entropy + entropy,
            last_row=(last.game_id, last.seq, last.hash) if last else self.last_row,
        )


def mark_path(file: str | Path) -> Path:
    """Where the mark of the database ``file`` lives."""
    return Path(f"{file}{SUFFIX}")


def wal_path(file: str | Path) -> Path:
    """Where DuckDB keeps the write-ahead log of ``file``."""
    return Path(f"{file}{WAL_SUFFIX}")


def _tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    """The tables the file open on ``con`` has (a lost log may have held them all)."""
    return {str(r[0]) for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}


def held_by(con: duckdb.DuckDBPyConnection) -> Tally:
    """The tally of the file open on ``con``."""
    present = _tables(con)
    parts = [f"(SELECT {how} FROM {t})" if t in present else "0" for t, how in COUNTED.items()]
    found = con.execute(f"SELECT {', '.join(parts)}").fetchone()
    rows, games, refusals, entropy = (int(v) for v in found) if found else (0, 0, 0, 0)
    return Tally(rows, games, refusals, entropy, arbiters=(arbiters_digest(con),))


def arbiters_digest(con: duckdb.DuckDBPyConnection, change: tuple[str, ...] = ()) -> str:
    """A digest of the named arbiters, their times and revocations (no key's digest).

    ``change``: (name, added_at) or (name, added_at, revoked_at) as a change would leave
    that arbiter, for the digest the table will have once it is committed.
    """
    found = (
        con.execute("SELECT name, added_at, revoked_at FROM arbiters").fetchall()
        if "arbiters" in _tables(con)
        else []
    )
    table = {str(r[0]): [str(r[1]), str(r[2])] for r in found}
    if change:
        name, *times = change
        before = table.get(name, ["", ""])
        table[name] = [times[0] or before[0], times[1] if len(times) > 1 else ""]
    text = json.dumps(sorted(table.items()), separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def holds_row(con: duckdb.DuckDBPyConnection, last_row: tuple[str, int, str]) -> bool:
    """Whether the file holds the row the mark names, with the hash the mark gives it."""
    game_id, seq, digest = last_row
    if not game_id:
        return True
    if "events" not in _tables(con):
        return False
    found = con.execute(
        "SELECT hash FROM events WHERE game_id = ? AND seq = ?", [game_id, seq]
    ).fetchone()
    return found is not None and str(found[0]) == digest


@dataclass(frozen=True)
class Files:
    """The database file and its log as the last write left them."""

    wal_bytes: int  # the log's size (0: none)
    db_size: int
    db_mtime_ns: int  # changes when a checkpoint (ours or anyone's) rewrites the file

    @classmethod
    def of(cls, file: str | Path) -> Files:
        """The files beside ``file`` as they are now."""
        db = os.stat(file)
        return cls(_size(wal_path(file)), db.st_size, db.st_mtime_ns)


def _size(part: Path) -> int:
    try:
        return part.stat().st_size
    except FileNotFoundError:
        return 0


@dataclass(frozen=True)
class Kept:
    """A mark as read back: the tally, and the files as that commit left them."""

    tally: Tally
    files: Files


def read(file: str | Path) -> Kept | None:
    """The mark beside ``file`` (None: none is there); refused when it is unreadable."""
    path = mark_path(file)
    try:
        text = path.read_bytes()[:SIZE]
    except FileNotFoundError:
        return None
    except OSError as failed:
        raise CannotOpenStore(
            f"cannot read {path} (what {file} held after its last commit): "
            f"{failed.strerror or failed}",
            path=str(file),
        ) from failed
    try:
        line, _, check = text.rstrip().rpartition(b" ")
        if hashlib.sha256(line).hexdigest().encode() != check:
            raise ValueError("check")
        body = json.loads(line)
        if body["format"] != FORMAT:
            raise ValueError("format")
        game_id, seq, digest = body["last_row"]
        tally = Tally(
            rows=int(body["rows"]),
            games=int(body["games"]),
            refusals=int(body["refusals"]),
            entropy=int(body["entropy"]),
            last_row=(str(game_id), int(seq), str(digest)),
            arbiters=tuple(str(a) for a in body["arbiters"]),
        )
        return Kept(tally, Files(*(int(v) for v in body["files"])))
    except (ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError) as damaged:
        raise DamagedLog(
            f"{path} (what {file} held after its last commit) is damaged, so {file} "
            f"cannot be checked against it: run feastlog recover --db {file}",
            path=str(file),
        ) from damaged


def encoded(tally: Tally, files: Files) -> bytes:
    """The mark's bytes: one line, its JSON and the JSON's sha256, padded to ``SIZE``."""
    body = json.dumps(
        {
            "format": FORMAT,
            "rows": tally.rows,
            "games": tally.games,
            "refusals": tally.refusals,
            "entropy": tally.entropy,
            "last_row": tally.last_row,
            "arbiters": tally.arbiters,
            "files": (files.wal_bytes, files.db_size, files.db_mtime_ns),
        },
        separators=(",", ":"),
    ).encode()
    line = body + b" " + hashlib.sha256(body).hexdigest().encode()
    if len(line) >= SIZE:  # a game id is at most 64 bytes: the line stays far below
        raise ValueError("the commit mark outgrew its size")
    return line + b" " * (SIZE - 1 - len(line)) + b"\n"


class Mark:
    """The mark of a file open for writing: the tally, written after each commit."""

    def __init__(self, file: str, tally: Tally) -> None:
        self.file = file
        self.tally = tally
        path = mark_path(file)
        try:
            self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as failed:
            raise CannotOpenStore(
                f"cannot write {path} (what {file} holds after each commit): "
                f"{failed.strerror or failed}",
                path=file,
            ) from failed
        try:
            notice = tighten(path)
            self.write(tally)
        except BaseException:
            os.close(self._fd)
            raise
        if notice:
            logging.getLogger("feastlog.store").warning(notice)

    def write(self, tally: Tally) -> None:
        """Record ``tally`` as what the file holds, with the files as they are now (one
        write in place; no fsync: the mark trails DuckDB's log, which its commit synced)."""
        self.tally = tally
        try:
            os.pwrite(self._fd, encoded(tally, Files.of(self.file)), 0)
        except OSError as failed:  # the commit is in: a mark left behind only trails it
            logging.getLogger("feastlog.store").warning(
                "cannot write %s (%s): it trails the file until a later commit writes it",
                mark_path(self.file),
                failed.strerror or failed,
            )

    def close(self) -> None:
        """Stop writing the mark (it stays beside the file)."""
        os.close(self._fd)


def refusal(file: str | Path, missing: list[str], log_bytes: int) -> DamagedLog:
    """The one line that refuses a file holding less than its mark."""
    log = (
        f"{wal_path(file)} is damaged: opened with it,"
        if log_bytes
        else f"{wal_path(file)}, which the last commit left behind, is gone or empty:"
    )
    return DamagedLog(
        f"{log} {file} falls short of what its last commit recorded in {mark_path(file)} "
        f"({', '.join(missing)}), so acknowledged commits would be lost; nothing was "
        f"changed. feastlog recover --db {file} keeps the damaged log aside and opens "
        "what the database holds without it",
        path=str(file),
    )


def wal_header_lost(file: str | Path) -> bool:
    """Whether the write-ahead log beside ``file`` holds data but not DuckDB's header."""
    try:
        with wal_path(file).open("rb") as log:
            start = log.read(len(WAL_HEADER))
    except FileNotFoundError:
        return False
    return bool(start) and not WAL_HEADER.startswith(start[: len(WAL_HEADER)])


def check(file: str | Path, con: duckdb.DuckDBPyConnection) -> None:
    """Refuse the file open on ``con`` if its log held commits it has not replayed.

    Held to its mark: a file whose log holds data, and one whose log has vanished since the
    last commit left it while the database stayed as that commit left it (a checkpoint
    since, by anyone, rewrites the database and takes the log in).  A file with no mark
    (new, or last written by a feastlog before the mark) has only its log's header checked.
    """
    kept = read(file)
    log_bytes = _size(wal_path(file))
    if kept is None:
        if log_bytes and wal_header_lost(file):
            raise DamagedLog(
                f"{wal_path(file)} is damaged (it has lost DuckDB's header, so none of "
                f"it would be replayed); nothing was changed. feastlog recover --db {file} "
                "keeps it aside and opens what the database holds without it",
                path=str(file),
            )
        return
    if not log_bytes:
        files = Files.of(file)
        unchanged = (files.db_size, files.db_mtime_ns) == (
            kept.files.db_size,
            kept.files.db_mtime_ns,
        )
        if not (kept.files.wal_bytes and unchanged):
            return  # nothing to replay, and nothing left unreplayed
    try:
        missing = kept.tally.shortfall(held_by(con), holds_row(con, kept.tally.last_row))
    except duckdb.Error as error:  # a file without the tables the mark counts
        raise open_error(Path(file), error) from error
    if missing:
        raise refusal(file, missing, log_bytes)


# --- recovery -----------------------------------------------------------------------


@dataclass(frozen=True)
class Recovery:
    """What ``recover`` found and did."""

    database: str
    recorded: Tally | None  # what the mark said (None: no mark, or an unreadable one)
    held: Tally  # what the database holds now
    kept_aside: tuple[str, ...]  # copies of the damaged log and of the mark
    needed: bool  # False: the file opened whole against its mark; nothing was done

    @staticmethod
    def counts(tally: Tally) -> dict[str, int]:
        """A tally's counts by name (rows, games, refusals, entropy)."""
        return {name: int(getattr(tally, name)) for name in COUNTS}

    @staticmethod
    def in_words(counts: dict[str, int]) -> str:
        """Counts as a recovery says them: "3 games, 36 rows, …"."""
        return ", ".join(f"{n} {COUNTS[name]}" for name, n in counts.items())

    def lost(self) -> dict[str, int]:
        """What the mark recorded that the database no longer holds, by table."""
        if self.recorded is None:
            return {}
        pairs = self.recorded.against(self.held).items()
        return {name: want - have for name, (want, have) in pairs if want > have}


def recover(file: str, now: datetime.datetime | None = None) -> Recovery:
    """Bring a file whose log is damaged back to what its database can be shown to hold.

    The damaged log and the mark are first copied aside whole, as ``FILE.wal.damaged-STAMP``
    and ``FILE.commits.damaged-STAMP``.  Of the log, DuckDB then replays what it can: a
    log refused at an entry whose checksum fails is cut there and replayed up to it; a
    log it would not replay at all is removed (its copy stays).  The file is
    checkpointed and its mark made anew on the next open.  A file that opens whole
    against its mark is left untouched.
    """
    from feastlog.service.store.duckdb.opening import connect

    path = Path(file)
    if not path.is_file():
        raise CannotOpenStore(f"no database at {file}: pass --db with the damaged file", path=file)
    try:
        kept = read(file)
        recorded = kept.tally if kept else None
    except DamagedLog:
        kept = recorded = None  # an unreadable mark: the log is judged by DuckDB alone
    else:
        try:
            with _closing(connect(path, read_only=True)) as con:
                check(file, con)
                held = held_by(con)
            return Recovery(file, recorded, held, (), needed=False)
        except DamagedLog:
            pass
    stamp = (now or datetime.datetime.now(datetime.UTC)).strftime("%Y%m%dT%H%M%SZ")
    log = wal_path(file)
    aside = tuple(_keep_aside(part, stamp) for part in (log, mark_path(file)) if part.exists())
    _salvage(path, log)
    hold_private_umask()
    try:
        with _closing(duckdb.connect(str(path))) as con:
            con.execute("FORCE CHECKPOINT")
    finally:
        release_private_umask()
    log.unlink(missing_ok=True)  # a log DuckDB would not replay at all: its copy is aside
    mark_path(file).unlink(missing_ok=True)
    from feastlog.service.store.duckdb.log import Store

    store = Store(file)  # the tables made again where the lost log held them; a new mark
    try:
        held = held_by(store.con)
    finally:
        store.close()
    return Recovery(file, recorded, held, aside, needed=True)


def _keep_aside(part: Path, stamp: str) -> str:
    """Copy ``part`` aside, owner-only, under a name no other recovery has taken."""
    target = part.with_name(f"{part.name}.damaged-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = part.with_name(f"{part.name}.damaged-{stamp}-{n}")
    shutil.copyfile(part, target)
    os.chmod(target, 0o600)
    return str(target)


def _salvage(file: Path, log: Path) -> None:
    """Cut the log where DuckDB finds a corrupt entry, so that it replays what precedes
    it; remove it when DuckDB can replay none of it."""
    for _ in range(8):  # each cut leaves a log DuckDB replays, or one more entry to cut at
        if not log.exists():
            return
        try:
            duckdb.connect(str(file), read_only=True).close()
            return
        except duckdb.Error as error:
            found = re.search(r"entry at byte position (\d+)", str(error))
            at = int(found.group(1)) if found else None
            if at is None or at >= log.stat().st_size:
                break
            os.truncate(log, at)
    log.unlink(missing_ok=True)


@contextlib.contextmanager
def _closing(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    try:
        yield con
    finally:
        con.close()
