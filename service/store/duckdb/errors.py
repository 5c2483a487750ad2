"""DuckDB's errors translated into the store's own (``service.store.errors``), once, here."""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, TypeVar

import duckdb

from feastlog.service.incidents import new_incident_id
from feastlog.service.store.errors import (
    CannotOpenStore,
    DamagedLog,
    StoreConflict,
    StoreLocked,
    StoreUnavailable,
)

if TYPE_CHECKING:
    from feastlog.service.store.duckdb.log import Store

P = ParamSpec("P")
R = TypeVar("R")
T = TypeVar("T")

log = logging.getLogger("feastlog.store")


def translated(method: Callable[P, R]) -> Callable[P, R]:
    """Translate the driver's errors into the store's own, once, here.

    The cause goes to the server log under an incident id; the error the client may see
    carries only the id.
    """

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except duckdb.Error as error:
            incident = new_incident_id()
            log.error(
                "incident %s: the store failed in %s: %s: %s",
                incident,
                method.__name__,
                type(error).__name__,
                error,
            )
            if isinstance(error, duckdb.ConstraintException):
                raise StoreConflict(
                    f"the game store refused a write that was out of date (incident {incident}); "
                    "try again",
                    incident_id=incident,
                ) from error
            if method.__name__ != "write":
                message = f"the game store failed to read (incident {incident}); try again"
            else:
                message = (
                    f"the game store failed to write (incident {incident}); try again: "
                    "a command sent again with its command_id is recorded once"
                )
            raise StoreUnavailable(message, incident_id=incident) from error

    return wrapper


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """End a failed transaction; one that already ended (a failed COMMIT) needs nothing."""
    # a transaction that is over already needs nothing: the first error is the one to report
    with contextlib.suppress(duckdb.Error):
        con.execute("ROLLBACK")


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """One transaction: committed when the block ends, rolled back when it raises."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise


def read_at_start(method: Callable[[Store], T]) -> Callable[[Store], T]:
    """A read the server makes before it serves: a driver error means the file is unusable."""

    @functools.wraps(method)
    def read(store: Store) -> T:
        try:
            return method(store)
        except duckdb.Error as error:
            raise open_error(Path(store.path), error) from error

    return read


def not_a_database(file: Path) -> CannotOpenStore:
    """A file that is there and is no DuckDB database (a read-only open of a file DuckDB
    reads as data asks for an in-memory database, and says so)."""
    empty = file.is_file() and file.stat().st_size == 0
    what = "is empty (0 bytes)" if empty else "is not a DuckDB database file"
    return CannotOpenStore(
        f"{file} {what}: move it away to start a new store there, or pass --db with the right file",
        path=str(file),
    )


def open_error(file: Path, error: duckdb.Error) -> CannotOpenStore:
    """A DuckDB error on opening ``file``, in one line that says what to do."""
    text = (str(error).splitlines() or [type(error).__name__])[0]
    lowered = text.lower()
    if "could not set lock" in lowered or "conflicting lock" in lowered:
        return StoreLocked(
            f"{file} is in use by another feastlog process (DuckDB allows one "
            "writer per file): stop that server, or talk to it with --server",
            path=str(file),
        )
    if "not a valid duckdb database" in lowered or "in-memory database" in lowered:
        return not_a_database(file)
    damaged = {
        "could not read enough bytes": "is truncated (it ends before its last block)",
        "corrupt": "is corrupt (a checksum does not match)",
        "checksum": "is corrupt (a checksum does not match)",
    }
    found = next((what for words, what in damaged.items() if words in lowered), None)
    if "replaying wal" in lowered:  # after a crash, DuckDB replays a second file: its log
        return DamagedLog(
            f"the write-ahead log {file}.wal {found or 'cannot be replayed'}; nothing was "
            f"changed: feastlog recover --db {file} keeps it aside and opens what the "
            "database holds without it (up to the damaged entry)",
            path=str(file),
        )
    if found:
        return CannotOpenStore(
            f"{file} {found}: restore it from a backup, or pass --db with another file",
            path=str(file),
        )
    if "permission denied" in lowered:
        return CannotOpenStore(
            f"cannot open {file}: permission denied: serve it as the user who owns it, or "
            "pass --db with another file",
            path=str(file),
        )
    return CannotOpenStore(f"cannot open {file}: {text}", path=str(file))
