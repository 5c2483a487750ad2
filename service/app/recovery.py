"""Bringing back a DuckDB file whose write-ahead log is damaged: ``feastlog recover``.

The store refuses such a file, moving and deleting nothing (``service/store/duckdb/mark.py``
says how it knows); this is the use case that keeps the damaged log aside and opens
what the database holds without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from feastlog.service.store.duckdb.mark import Recovery


def recover_file(path: str) -> Recovery:
    """Recover the DuckDB file at ``path`` (see ``mark.recover``): what it holds now, what
    its last commit recorded, and the copies kept aside."""
    from feastlog.service.store.duckdb.mark import recover  # the driver, only when asked

    return recover(path)
