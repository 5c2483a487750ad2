"""The store's own errors: what every adapter raises, whatever its driver.

Each adapter translates its driver's errors into these once, in its own ``errors``
module (``duckdb/errors.py``, ``postgres/errors.py``); the service maps them to gRPC
statuses in its error table.  A failure's cause goes to the server log under an incident
id; the error carries only the id.
"""

from __future__ import annotations


class StoreError(Exception):
    """A failure of the game store, in plain words, with metadata for the client."""

    def __init__(self, message: str, **metadata: str) -> None:
        super().__init__(message)
        self.message = message
        self.metadata = metadata


class CannotOpenStore(StoreError):
    """The DuckDB file cannot be opened: missing, damaged, read-only, not a database."""


class DamagedLog(CannotOpenStore):
    """The file's write-ahead log cannot be replayed whole: opening it would lose commits."""


class StoreLocked(CannotOpenStore):
    """The DuckDB file is held by another process."""


class StoreUnavailable(StoreError):
    """The store failed to read or write; the cause is in the server log under the incident."""


class StoreConflict(StoreUnavailable):
    """A write clashed with what is stored (a seq or key already taken): memory was behind."""
