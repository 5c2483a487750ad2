"""The DuckDB event store: the only package that speaks to DuckDB (an adapter of the
store port, ``service.store``).

Tables:
- ``events``: every game's rows (genesis, commands, seed reveal), keyed by (game_id, seq),
  each under its record's format version (the ``commitment`` column is empty in format 1);
- ``rejections``: refused commands, outside the chain;
- ``seats``: seat names and the sha256 of each seat token (never the token);
- ``seeds``: each game's server seed, kept out of the rows until the reveal row;
- ``packs``: content packs by sha256, so every record can be refolded and exported;
- ``pending_games`` and ``seat_entropy``: games created with seat entropy that wait for
  every seat's contribution; the genesis row is written when the last one arrives;
- ``games``: one line per game in the order games were created (or imported), for the
  paginated game list: kind, tournament, players, created-at;
- ``arbiters``: named arbiters' keys by sha256 (never the key), added and revoked;
- ``seat_codes`` and ``seat_sessions``: seat links' unused one-time codes and the browser
  sessions they opened, by sha256 (never a code or a session);
- ``meta``: what this file holds (the outcomes projection's version);
- the outcomes projection (``service/store/projection.py``), written in the same commit as the
  row that ends each game.

Indexes on ``events(game_id)`` and ``seats(token_sha256)`` make loading one game and
finding a seat token point look-ups, so nothing at start-up reads every game.  Bulk
readers (audit --all, export --all, projection rebuild) read ``events`` in one ordered,
streamed scan (``Store.scan``), never a query per game.

A ``Store`` is used from one thread at a time (the service gives it its own thread).
Driver errors are translated here, once (``service.store.errors``), into the store's own
errors; the service maps them to gRPC statuses in its error table.

- ``log``: the ``Store`` (writes in one transaction per batch, loads, scans, the list);
- ``schema``: the tables' DDL and a row's columns;
- ``opening``: the path checked, the file opened, owner-only files;
- ``mark``: the commit mark beside the file (what its last commit left), which a file
  whose write-ahead log lost commits is refused against, and ``recover``;
- ``outcomes``: the outcomes projection's SQL (insert, rebuild, stats, standings);
- ``errors``: DuckDB's errors translated into the store's own (``service.store.errors``).
"""

from feastlog.service.store.duckdb.log import Store
from feastlog.service.store.duckdb.schema import SCHEMA

__all__ = ["SCHEMA", "Store"]
