"""The store port: what the service needs of an event store, in its own words.

Everything a use case or the writer knows of storage is here, and none of it imports a
driver:

- ``port``: ``EventStore``, the protocol every adapter keeps, and ``open_store``, how a
  ``--db`` value picks an adapter (the adapter's driver is loaded only then);
- ``records``: the plain values that cross it (``Batch``, ``StoredGame``, ``Rejection``…);
- ``errors``: its errors (``CannotOpenStore``, ``StoreConflict``, ``StoreUnavailable``…);
- ``projection``: the outcomes projection's tables and a finished game's rows;
- ``writer``: ``Database``, the store on its own thread and the group-commit writer.

The adapters sit beside each other, each importing the port and never another adapter:
``duckdb/`` (a file, the embedded default), ``process/`` (a server's DuckDB file in a
child process), ``postgres/`` (one log many nodes share) and ``memory`` (in this
process, for tests of the use cases).  ``tests/test_store_contract.py`` holds every
adapter to the same contract.
"""

from feastlog.service.store.errors import (
    CannotOpenStore,
    DamagedLog,
    StoreConflict,
    StoreError,
    StoreLocked,
    StoreUnavailable,
)
from feastlog.service.store.port import EventStore, exists, is_postgres, open_store
from feastlog.service.store.records import (
    Batch,
    Listed,
    NewGame,
    PendingGame,
    Rejection,
    StoredGame,
)

__all__ = [
    "Batch",
    "CannotOpenStore",
    "DamagedLog",
    "EventStore",
    "Listed",
    "NewGame",
    "PendingGame",
    "Rejection",
    "StoreConflict",
    "StoreError",
    "StoreLocked",
    "StoreUnavailable",
    "StoredGame",
    "exists",
    "is_postgres",
    "open_store",
]
