"""The one stream of committed rows: every commit's rows once, in the log's order, each
with its position in the log (its leaf in the log tree).

The writer (``writer.Database``) publishes each commit it made; on a shared store
(PostgreSQL) the rows other nodes committed are read by position and published the same
way, in their place (``Database.catch_up``).  Everything that acts after a commit is a
subscriber: the live games in memory, the clocks' timers and the calls' watchers, the
tournaments, the log tree, the feed.  No feature is called from the commit path by name.

A subscriber is called on the event loop, in log order, before the writer answers the
commit's waiters, so a write's memory follows the store whatever became of its caller.
It returns at once (work that waits goes to a task of its own) and should not raise: an
error is logged, and the other subscribers are called all the same.

The eventsourcing library's notification log and its followers, and KurrentDB's ``$all``
with its checkpoints, are the shape: a subscriber that acts keeps its own position and
catches up from the store by position (``EventStore.rows_from``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from feastlog.replay.record.rows import Row
from feastlog.service.store.records import Batch

log = logging.getLogger("feastlog.stream")


@dataclass(frozen=True)
class Committed:
    """One commit on the stream: its rows (``Batch.appended``: the genesis rows of the
    games it made, then its rows) from log position ``position`` on.

    ``batch`` is what this node committed (None: rows another node committed, read back
    by position); ``folded`` is what this node folded for them before it committed, by
    game id (the tables and facts after each row: ``LiveGames`` takes them rather than
    fold the rows again).
    """

    position: int
    rows: tuple[Row, ...]
    batch: Batch | None = None
    folded: Mapping[str, Any] = field(default_factory=dict)

    @property
    def end(self) -> int:
        """The position after the last row."""
        return self.position + len(self.rows)

    @property
    def local(self) -> bool:
        """Whether this node committed it."""
        return self.batch is not None


Subscriber = Callable[[Committed], None]


class CommitStream:
    """The node's stream: publishes each position once, in order, to every subscriber."""

    def __init__(self, position: int = 0) -> None:
        self.position = position  # the next position to publish: the log's size here
        self._subscribers: list[tuple[str, Subscriber]] = []

    def subscribe(self, name: str, subscriber: Subscriber) -> None:
        """Call ``subscriber`` with every commit from now on (``name``: for the log)."""
        self._subscribers.append((name, subscriber))

    def unsubscribe(self, subscriber: Subscriber) -> None:
        """Stop calling ``subscriber``."""
        self._subscribers = [(n, s) for n, s in self._subscribers if s != subscriber]

    def publish(self, commit: Committed) -> None:
        """Hand a commit to every subscriber; rows already published are left out (a
        commit of this node that another node's catch-up read back first), and a commit
        that appended no row (refusals alone, seat entropy) goes out as it is."""
        if commit.rows:
            if commit.end <= self.position:
                return
            if commit.position < self.position:
                skip = self.position - commit.position
                commit = Committed(self.position, commit.rows[skip:], commit.batch, commit.folded)
            self.position = commit.end
        for name, subscriber in self._subscribers:
            try:
                subscriber(commit)
            except Exception:
                log.exception("the stream's subscriber %s failed on a commit", name)
