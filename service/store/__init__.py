"""The store port: what the service needs of an event store, in its own words.

Everything a use case or the writer knows of storage is here, and none of it imports a
driver:

- ``port``: ``EventStore``, the protocol every adapter keeps, and ``open_store``, how a
  ``--db`` value picks an adapter (the adapter's driver is loaded only then);
- ``records``: the plain values that cross it (``Batch``, ``StoredGame``, ``Rejection``…);
- ``errors``: its errors (``CannotOpenStore``, ``StoreConflict``, ``StoreUnavailable``…);
- ``projection``: the outcomes projection's tables and a finished game's rows;
- ``sql``: the columns, queries and row readers both SQL adapters share (run by each
  with its own driver);
- ``writer``: ``Database``, the store on its own thread and the group-commit writer,
  which commits through the port alone (``EventStore.commit``: how the event loop
  commits to a store in another process).

The adapters sit beside each other, each importing the port and never another adapter:
``duckdb/`` (a file, the embedded default), ``process/`` (a server's DuckDB file in a
child process, which opens the DuckDB adapter when it runs), ``postgres/`` (one log
many nodes share) and ``memory`` (``--db memory:``, in this process, for tests of the
use cases and embedded use).  ``tests/store/test_store_contract.py`` holds every adapter to
the same contract, ``tests/store/test_store_port.py`` the port and adapters to their imports.
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
