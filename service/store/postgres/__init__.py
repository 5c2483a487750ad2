"""The PostgreSQL event store: one log that any number of feastlog nodes share.

Chosen by ``--db postgresql://USER:PASSWORD@HOST:PORT/DATABASE``. The tables are those of
the DuckDB store (``service/store/``), in a schema of their own, ``feastlog``, owned
by the role feastlog connects as:

- ``events`` is keyed by (game_id, seq), and a unique index on (game_id, actor,
  command_id) for non-empty ids holds each sender's command ids once per game. These
  keys, not any node's memory, are what keep two nodes from forking a game or
  appending a command twice: a write that clashes raises ``StoreConflict``, and the
  service reloads the game and answers as the command's semantics say;
- ``games`` numbers games with an identity column, so nodes never hand out the same place;
- ``seat_codes`` and ``seat_sessions`` hold seat links by sha256, for every node: a code is
  spent by one conditional delete that opens its session, so exactly one node wins it;
- the outcomes projection (``service/store/projection.py``) is written in the same transaction
  as the row that ends each game.

Secrets (server seeds, seat-token hashes, sealed commands before the reveal) stay
feastlog's: the schema and every table are owner-only. Opening the store for writing
revokes every privilege PUBLIC or another role holds on them, with a warning naming what
was taken back (superusers can read everything; see docs/scaling.md for the setup).

Connections come from a pool (psycopg_pool), so the store may be used from any thread.
Bulk readers read ``events`` in one ordered scan through a server-side cursor. Driver
errors are translated once, in ``errors``.

- ``log``: ``PgStore`` (a pool of connections; writes, loads, the list, stats);
- ``schema``: the tables' DDL (the DuckDB store's, in PostgreSQL's types);
- ``opening``: the schema made, protected and brought up to date, under a lock;
- ``writes``: what a group commit writes (its rows pending, with no place in the tree);
- ``placing``: the rows pending placed in the log tree after their commit, in batches,
  by whichever node holds the placement lock, and the notifications;
- ``scans``: the one ordered, streamed scan bulk readers use;
- ``errors``: psycopg's errors translated into the store's own.
"""

from feastlog.service.store.postgres.log import PgStore
from feastlog.service.store.postgres.schema import NOTIFY_CHANNEL, SCHEMA_NAME

__all__ = ["NOTIFY_CHANNEL", "SCHEMA_NAME", "PgStore"]
