"""A serving process's DuckDB store, in a child process of its own.

DuckDB's Python binding takes and drops the interpreter lock many times per statement; in
a server whose event loop keeps that lock busy, each wait costs milliseconds, and a group
commit took four times as long as on an idle process.  So a server on a DuckDB file opens
it in a child process (``child``) that serves the store's methods over four socket pairs,
each served by a thread of its own in the child:

- ``commits``: group commits, sent and awaited by the event loop itself, so no thread of
  the server has to win the interpreter lock for a commit;
- ``calls``: the store's other methods, from the server's store thread (``Database.call``);
- ``reads``: the second connection (``store.reader()``), from the read thread, so a long
  read never holds up a group commit;
- ``lookups``: seat tokens and arbiter keys, from the event loop on first use of each.

``commits`` and ``calls`` take turns on the writing connection, as they took turns on the
store thread.  A message is a pickle after its length (``wire``).  A reply carries the log records
the call made (logged again in the server, so incidents are in its log) and the result or
the store's own error, which arrives as itself (``StoreConflict``, ``StoreUnavailable``
with its incident id, ``CannotOpenStore`` with its one line).

The child dies with the server: the kernel kills it when its parent dies
(``PR_SET_PDEATHSIG``) and it exits at the end of its sockets, so a server killed with -9
leaves no process holding the file's lock.  Offline commands and PostgreSQL (whose driver
lets go of the interpreter lock while it waits) keep their store in process.
"""

from feastlog.service.store.process.client import (
    ProcessStore,
    StoreClient,
    StoreGone,
    games_to_register,
)

__all__ = ["ProcessStore", "StoreClient", "StoreGone", "games_to_register"]
