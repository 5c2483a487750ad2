"""Opening a DuckDB file: the path checked first, the schema made, owner-only files."""

from __future__ import annotations

import logging
import os
import re
import stat
import time
from pathlib import Path

import duckdb

from feastlog.service.files import make_private_folder, mode_text, tighten
from feastlog.service.store import projection
from feastlog.service.store.duckdb.errors import not_a_database, open_error
from feastlog.service.store.duckdb.schema import INDEXES, MIGRATIONS, SCHEMA, SEAT_LINKS
from feastlog.service.store.errors import CannotOpenStore
from feastlog.service.store.port import STORE_PROCESS

log = logging.getLogger("feastlog.store")

# How long to wait for the store process of a server killed with -9 to let go of the file
# (the kernel kills it as its server dies; on a busy machine that takes a moment).
ORPHAN_WAIT = 10.0


def connect(file: Path, read_only: bool, threads: int = 0) -> duckdb.DuckDBPyConnection:
    """Connect to ``file`` (writing: in a 0700 folder made if missing, owner-only files).

    ``threads``: DuckDB's worker threads (0: one per core, DuckDB's default).
    """
    _check_path(file, read_only)
    con = _connect_when_free(file, read_only)
    try:
        if _in_memory(con):
            raise not_a_database(file)
        if threads:
            con.execute(f"SET threads TO {int(threads)}")
        if not read_only:
            con.execute(SCHEMA)
            con.execute(SEAT_LINKS)
            con.execute(MIGRATIONS)
            con.execute(INDEXES + projection.schema())
            _tighten_store_files(file)
    except BaseException as error:
        con.close()
        if isinstance(error, duckdb.Error):
            raise open_error(file, error) from error
        raise
    return con


def _connect_when_free(file: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    """Connect, after the store process of a server killed with -9 has let go of the file."""
    deadline = time.monotonic() + ORPHAN_WAIT
    while True:
        try:
            return duckdb.connect(str(file), read_only=read_only)
        except duckdb.Error as error:
            if time.monotonic() > deadline or not _held_by_orphan(str(error)):
                raise open_error(file, error) from error
        time.sleep(0.01)


def _held_by_orphan(error: str) -> bool:
    """Whether the lock DuckDB names is held by the store process of a server that has died
    (the kernel kills it as its server dies), or by a process that has ended since."""
    found = re.search(r"Conflicting lock is held in .*\(PID (\d+)\)", error)
    if not found:
        return False
    holder = Path("/proc") / found.group(1)
    try:
        args = (holder / "cmdline").read_bytes().split(b"\0")
        status = (holder / "status").read_text()
    except OSError:
        return True  # it has ended since
    if args == [b""]:
        return True  # it is ending: its memory is gone already
    try:
        parent = int(args[args.index(STORE_PROCESS.encode()) + 1])
    except (ValueError, IndexError):
        return False  # another program holds the file
    return f"\nPPid:\t{parent}\n" not in status  # else its server lives: the file is in use


def _in_memory(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether DuckDB opened no file at all: given an existing file it reads as data (a
    ``.json``, ``.csv`` or ``.parquet`` file), it opens an in-memory database instead, and
    every game written there would be lost when it closes."""
    found = con.execute(
        "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
    ).fetchone()
    return found is None or found[0] is None


def _check_path(file: Path, read_only: bool) -> None:
    """Refuse, in one line, a path DuckDB could not open or write; make a missing folder."""
    try:
        if file.is_dir():
            raise CannotOpenStore(
                f"{file} is a folder, not a database file: pass a file path "
                f"(for example --db {file / 'feastlog.duckdb'})",
                path=str(file),
            )
        if read_only:
            return
        make_private_folder(file.parent)
        if not file.parent.is_dir():
            raise CannotOpenStore(
                f"{file.parent} is a file, not a folder: pass --db with a path in a folder",
                path=str(file),
            )
        if file.exists() and not file.stat().st_mode & stat.S_IWUSR:
            raise CannotOpenStore(
                f"{file} is read-only (mode {mode_text(file.stat().st_mode)}): to serve it, "
                f"make it writable (chmod u+w {file}); offline commands read it as it is",
                path=str(file),
            )
        # os.access, unlike a mode check, also sees a read-only file system.
        if not os.access(file.parent, os.W_OK | os.X_OK):
            raise CannotOpenStore(
                f"cannot write in the folder {file.parent} (DuckDB keeps its write-ahead log "
                "beside the database): make it writable, or pass --db with another path",
                path=str(file),
            )
    except OSError as failed:
        raise CannotOpenStore(
            f"cannot open {file}: {failed.strerror or failed} ({failed.filename})", path=str(file)
        ) from failed


def _tighten_store_files(file: Path) -> None:
    """Make the database, its WAL and its spill folder owner-only, saying so when they were not."""
    for part in (file, Path(f"{file}.wal"), Path(f"{file}.tmp")):
        try:
            notice = tighten(part)
        except OSError as failed:
            raise CannotOpenStore(
                f"{part} can be read by other users and only its owner can change that: "
                f"chmod go-rwx {part} as its owner ({failed.strerror})",
                path=str(file),
            ) from failed
        if notice:
            log.warning(notice)
