"""A consistent copy of a DuckDB file and its commit mark, made while it is served.

A copy is made in two steps.  ``copy_files`` runs where no commit can run meanwhile
(on the store's thread, or in the store's process under its commit lock; offline, under
DuckDB's read lock): it copies the database and its write-ahead log byte for byte, as a
commit left them (DuckDB writes the database itself only in a checkpoint, which takes the
same turn), and writes the copy a commit mark of what the source's last commit recorded.
That is a point in the log: every commit acknowledged before it, nothing half written.
Commits wait for the copy alone (the page cache's speed: unsynced, the copy is synced
when it is sealed).

``seal`` then runs while the server goes on committing: it opens the copy as a store is
opened (its log replayed, held to its mark, the tables it counts compared row by row with
the mark), checkpoints it into one file with a mark of its own, and only then moves it to
the name asked for.  A copy that falls short is deleted, never left under that name.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

from feastlog.service.store.duckdb import mark
from feastlog.service.store.errors import CannotOpenStore, DamagedLog

PARTIAL = ".partial"  # a copy being made or sealed, beside where it goes


@dataclass(frozen=True)
class Copied:
    """The files copied while no commit ran."""

    partial: str  # the copy, before it is sealed
    bytes: int  # the database and its log, as copied
    paused_seconds: float  # how long commits waited
    recorded: mark.Tally | None  # what the source's last commit recorded (None: no mark)


@dataclass(frozen=True)
class Sealed:
    """A copy opened, held to its mark, checkpointed and in place."""

    path: str
    held: mark.Tally


def parts(file: str | Path) -> tuple[Path, Path, Path]:
    """The database, its write-ahead log and its commit mark."""
    return Path(file), mark.wal_path(file), mark.mark_path(file)


def partial_of(out: str | Path) -> Path:
    """Where a copy going to ``out`` is made first."""
    return Path(f"{out}{PARTIAL}")


def taken(out: str | Path) -> Path | None:
    """The first of ``out``'s files (or its partial copy's) already there; None if none."""
    for part in (*parts(out), *parts(partial_of(out))):
        if part.exists() or part.is_symlink():
            return part
    return None


def copy_files(source: str, partial: Path) -> Copied:
    """Copy ``source``'s database and log to ``partial``, with a mark of what the source's
    last commit recorded: call it where no commit runs meanwhile."""
    started = time.monotonic()
    kept = mark.read(source)
    db, wal, _ = parts(source)
    to_db, to_wal, to_mark = parts(partial)
    try:
        copied = _copy_from(_kept_open(db), to_db)
    except OSError as failed:  # nothing of ours to remove: another copy may be under way
        raise CannotOpenStore(
            f"cannot write the copy {partial}: {failed.strerror or failed}", path=source
        ) from failed
    try:
        if wal.exists() and wal.stat().st_size:
            with wal.open("rb") as log:
                copied += _copy_from(log.fileno(), to_wal)
        if kept is not None:
            _write(to_mark, mark.encoded(kept.tally, mark.Files.of(partial)))
    except OSError as failed:
        remove(partial)
        raise CannotOpenStore(
            f"cannot write the copy {partial}: {failed.strerror or failed}", path=source
        ) from failed
    except BaseException:
        remove(partial)
        raise
    return Copied(str(partial), copied, time.monotonic() - started, kept.tally if kept else None)


def seal(copied: Copied, out: str | Path, replace: bool = False) -> Sealed:
    """Open the copy and hold it to what the source recorded; checkpoint it into one file
    with its own mark; move it to ``out`` (``replace``: over the files there)."""
    from feastlog.service.store.duckdb.log import Store

    partial = Path(copied.partial)
    try:
        store = Store(str(partial))  # its log replayed, held to its mark
        try:
            held = mark.held_by(store.con)
            recorded = copied.recorded
            if recorded is not None:
                missing = recorded.shortfall(held, mark.holds_row(store.con, recorded.last_row))
                if missing:
                    raise DamagedLog(
                        f"the copy of the database falls short of what its last commit "
                        f"recorded ({', '.join(missing)}): it was deleted",
                        path=str(out),
                    )
        finally:
            store.close()  # checkpointed: one file, and a mark of its own
        db, wal, commits = parts(partial)
        to_db, to_wal, to_commits = parts(out)
        wal.unlink(missing_ok=True)
        if replace:
            to_wal.unlink(missing_ok=True)  # an old log would be replayed into the copy
        elif taken(out) not in (None, *parts(partial)):
            raise CannotOpenStore(f"{taken(out)} appeared while the copy was made", path=str(out))
        _fsync(db)
        os.replace(db, to_db)
        if commits.exists():
            os.replace(commits, to_commits)
        _fsync_folder(to_db.parent)
    except OSError as failed:
        remove(partial)
        raise CannotOpenStore(
            f"cannot put the copy in place at {out}: {failed.strerror or failed}", path=str(out)
        ) from failed
    except BaseException:
        remove(partial)
        raise
    with contextlib.suppress(OSError):
        Path(f"{partial}.tmp").rmdir()  # DuckDB's spill folder, if it made one
    return Sealed(str(out), held)


def remove(partial: str | Path) -> None:
    """Delete a copy that will not be sealed."""
    for part in parts(partial):
        with contextlib.suppress(FileNotFoundError):
            part.unlink()


# The database files this process has read for a copy, each kept open by (device, inode)
# for as long as the process lives: closing any descriptor of a file releases every POSIX
# lock the process holds on it, DuckDB's own among them, and another process could then
# open the file the server is writing.
_KEPT: dict[tuple[int, int], int] = {}


def _kept_open(file: Path) -> int:
    """A descriptor of ``file`` to read it by, never closed (see ``_KEPT``)."""
    now = os.stat(file)
    key = (now.st_dev, now.st_ino)
    if key not in _KEPT:
        _KEPT[key] = os.open(file, os.O_RDONLY)
    return _KEPT[key]


def _copy_from(fd: int, target: Path) -> int:
    """Copy the file open on ``fd`` (from its start, leaving its offset) to a new
    owner-only file; its size.  Not synced: ``seal`` checkpoints the copy and syncs it
    before it takes its name, while commits go on."""
    out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        size = os.fstat(fd).st_size
        sent = 0
        while sent < size:
            n = os.sendfile(out, fd, sent, size - sent)
            if n == 0:
                break
            sent += n
    except BaseException:
        os.close(out)
        target.unlink(missing_ok=True)  # ours: made above
        raise
    os.close(out)
    return sent


def _write(target: Path, data: bytes) -> None:
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def _fsync(file: Path) -> None:
    fd = os.open(file, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_folder(folder: Path) -> None:
    with contextlib.suppress(OSError):
        _fsync(folder)
