"""Backup and restore of a DuckDB file: a consistent copy, on a running server or offline.

On a running server (``AdminService.Backup``, the organiser's), the copy is made between
two commits: on the store's thread, or in the store's process under its commit lock
(``service/store/duckdb/backup.py``), so that it holds every commit acknowledged before
the call and nothing half written; commits wait while the file is copied, and the copy
is then opened, held to its commit mark and checkpointed while the server goes on.  A
file no server holds is copied the same way under DuckDB's read lock (``back_up_file``).

``restore_file`` puts a backup in place of a file no server holds, unless that file's
log is longer than the backup's, or as long and different: a newer file is never lost.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from feastlog.service.app.errors import BadRequest
from feastlog.service.store.errors import CannotOpenStore, DamagedLog
from feastlog.service.store.port import is_memory, is_postgres

if TYPE_CHECKING:
    from feastlog.service.app.auth import Caller
    from feastlog.service.store.duckdb import mark
    from feastlog.service.store.duckdb.backup import Copied, Sealed
    from feastlog.service.store.writer import Database

PG_RECIPE = (
    "a PostgreSQL store is backed up with pg_dump or a base backup, not by feastlog: "
    "see docs/scaling.md"
)


@dataclass(frozen=True)
class Made:
    """A backup made: where, what it holds, what it cost the commits."""

    path: str
    games: int
    rows: int
    bytes: int
    paused_seconds: float


def out_path(path: str) -> Path:
    """Where a backup may go: an absolute path ending in ``.duckdb``, in an existing
    folder, no file of its name there (nor its log, mark or partial copy); else
    BadRequest naming ``path``."""
    from feastlog.service.store.duckdb import backup as copying  # the driver, when asked

    if not path or not os.path.isabs(path):
        raise BadRequest(
            f"a backup needs an absolute path on the server's machine (got {path!r})",
            field="path",
        )
    out = Path(path)
    if out.suffix != ".duckdb" or out.name == ".duckdb":
        # the server writes where the organiser says: never a file of another kind
        raise BadRequest(
            f"a backup's name ends in .duckdb (got {out.name!r})",
            field="path",
        )
    if not out.parent.is_dir():
        raise BadRequest(f"there is no folder {out.parent} to write the backup in", field="path")
    found = copying.taken(out)
    if found is not None:
        raise BadRequest(
            f"{found} exists: a backup never overwrites a file; pick another path",
            field="path",
        )
    return out


async def back_up(db: Database, caller: Caller, path: str) -> Made:
    """The organiser's backup of the server's file at ``path`` (``AdminService.Backup``)."""

    caller.require_organiser()
    out = out_path(path)
    copy = getattr(db.store, "backup_copy", None)
    if is_postgres(db.store.path) or copy is None:
        raise BadRequest(
            PG_RECIPE if is_postgres(db.store.path) else "this server keeps no file to back up",
            field="path",
        )
    # a caller that goes only stops waiting: the copy is sealed (or removed) all the same,
    # never left half made beside its name
    return await asyncio.shield(_copied_and_sealed(db, copy, out))


async def _copied_and_sealed(db: Database, copy: Any, out: Path) -> Made:
    from feastlog.service.store.duckdb import backup as copying

    copied: Copied = await db.call(copy, str(copying.partial_of(out)))
    sealed = await asyncio.to_thread(copying.seal, copied, out)
    return _made(copied, sealed)


def back_up_file(file: str, out: str) -> Made:
    """A backup of a file no server holds: copied under DuckDB's read lock, held to its
    mark first (a damaged file is refused, as every open refuses it)."""
    from feastlog.service.store.duckdb import backup as copying
    from feastlog.service.store.duckdb.log import Store

    if is_postgres(file) or is_memory(file):
        raise CannotOpenStore(PG_RECIPE, path=file)
    target = out_path(os.path.abspath(out))
    source = Store(file, read_only=True)  # held to its mark; no server can take it meanwhile
    try:
        copied = copying.copy_files(file, copying.partial_of(target))
    finally:
        source.close()
    return _made(copied, copying.seal(copied, target))


def _made(copied: Copied, sealed: Sealed) -> Made:
    return Made(
        sealed.path, sealed.held.games, sealed.held.rows, copied.bytes, copied.paused_seconds
    )


class NewerFile(Exception):
    """The file a backup would replace holds more of the log than the backup."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Restored:
    """A backup put in place: what the file holds now, and what it held before."""

    path: str
    games: int
    rows: int
    rows_before: int


def restore_file(backup: str, file: str) -> Restored:
    """Put ``backup`` in place of ``file`` (no server may hold it): refused with
    ``NewerFile`` when ``file`` holds a longer log than the backup, or one as long that
    ends in another row; ``CannotOpenStore`` when either cannot be used."""
    from feastlog.service.store.duckdb import backup as copying
    from feastlog.service.store.duckdb import mark
    from feastlog.service.store.duckdb.log import Store

    if is_postgres(file) or is_memory(file):
        raise CannotOpenStore(PG_RECIPE, path=file)
    if not Path(backup).is_file():
        raise CannotOpenStore(f"there is no backup at {backup}", path=backup)
    target = Path(os.path.abspath(file))
    before = _log_of(target)
    partial = copying.partial_of(target)
    copying.remove(partial)  # a restore cut short before this one
    source = Store(backup, read_only=True)  # the backup opens whole against its own mark
    try:
        held = mark.held_by(source.con)
        if before is not None:
            longer = before.rows > held.rows
            other = (
                before.rows == held.rows
                and before.last_row != mark.NO_ROW
                and not mark.holds_row(source.con, before.last_row)
            )
            if longer or other:
                why = (
                    f"holds {before.rows} rows, the backup {held.rows}"
                    if longer
                    else f"holds as many rows as the backup ({held.rows}) but ends in another"
                )
                raise NewerFile(
                    f"{file} {why}: it is newer than the backup, so restoring would lose "
                    f"commits; nothing was changed (move {file} aside to restore over it)"
                )
        copied = copying.copy_files(backup, partial)
    finally:
        source.close()
    sealed = copying.seal(copied, target, replace=True)
    return Restored(str(target), sealed.held.games, sealed.held.rows, before.rows if before else 0)


def _log_of(file: Path) -> mark.Tally | None:
    """How much of the log ``file`` holds or last recorded (its mark, else the file as
    DuckDB opens it); None when there is no file; refused while a server holds it."""
    from feastlog.service.store.duckdb import mark
    from feastlog.service.store.duckdb.opening import connect

    if not file.exists():
        return None
    try:
        con = connect(file, read_only=True)  # a server's lock refuses this
    except CannotOpenStore as refused:
        if "in use" in refused.message:
            raise CannotOpenStore(
                f"{file} is in use by a server: stop it before restoring over it "
                "(or back it up from the server with feastlog backup)",
                path=str(file),
            ) from refused
        con = None
    recorded: mark.Tally | None = None
    try:
        kept = mark.read(file)
        recorded = kept.tally if kept else None
    except DamagedLog:
        recorded = None
    try:
        held = mark.held_by(con) if con is not None else None
    except Exception:  # a damaged file: its mark says what it held
        held = None
    finally:
        if con is not None:
            con.close()
    if recorded is None and held is None:
        raise CannotOpenStore(
            f"{file} is not a feastlog database this can read: move it aside to restore there",
            path=str(file),
        )
    if recorded is None or (held is not None and held.rows > recorded.rows):
        assert held is not None
        return held
    return recorded
