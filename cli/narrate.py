"""The CLI's one narrator: a game's rows in plain words, and the table after a seq."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from feastlog.replay import games
from feastlog.replay.engine import Fact
from feastlog.replay.narrative import header, row_lines
from feastlog.replay.record import Row
from feastlog.v1 import record_pb2


@dataclass(frozen=True)
class Seen:
    """One row as a viewer saw it: its seq, kind, actor, facts and the table after it."""

    seq: int
    kind: str
    actor: str
    facts: Sequence[Fact]
    view: dict[str, Any]


class Narrator:
    """Tells a game's rows, one at a time, from its genesis on."""

    def __init__(self, genesis: record_pb2.Genesis) -> None:
        self.genesis = genesis
        self.engine = games.engine(genesis.game_kind)
        self.names = [s.name for s in genesis.seats]

    def opening(self) -> list[str]:
        """The game, its seats, ruleset and seed commitment."""
        return header(self.genesis, self.engine)

    def row(self, seen: Seen) -> list[str]:
        """The lines one row's facts give."""
        row = Row(self.genesis.game_id, seen.seq, seen.kind, seen.actor, "", b"", "", "", "", "")
        return row_lines(self.engine, row, seen.facts, self.names)

    def story(self, rows: Iterable[Seen]) -> list[str]:
        """The opening and every row."""
        lines = self.opening()
        for seen in rows:
            lines += self.row(seen)
        return lines


def table_lines(view: dict[str, Any], seq: int, viewer: str) -> list[str]:
    """The table after ``seq`` as ``viewer`` saw it, as indented JSON under a heading."""
    heading = f"-- the table after seq {seq}, as {viewer} saw it --"
    return [heading, *json.dumps(view, indent=1, sort_keys=True).splitlines()]


def plural(count: int, noun: str) -> str:
    """``1 row``, ``2 rows``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"
