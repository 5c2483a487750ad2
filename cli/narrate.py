"""The CLI's one narrator: a game's rows in plain words, and the table after a seq."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message

from feastlog.presentation.narrative import header, row_lines
from feastlog.replay import games
from feastlog.replay.games.engine import Fact
from feastlog.replay.games.enums import prefix_of
from feastlog.replay.record.rows import Row
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


def command_words(command: Message, name: Callable[[str], str] = str) -> str:
    """A command in a few words, for a menu of moves: ``bid: gems green, red``.

    Generic over the games: the move's name, then each field set, enum values without
    their type's prefix (``BON_APPETIT_GEM_RED`` → ``red``), in lower case; strings (card
    ids) through ``name`` (``cli.cards.CardNames.of``: ``ingredient-beef-4`` → ``Beef``).
    """
    found = _move(command)
    if found is None:
        return "(no command)"
    game, moves, move_name = found
    if move_name is None:  # a game whose command is one message of fields
        return _fields_text(moves, name) or game.replace("_", " ")
    said = _fields_text(getattr(moves, move_name), name)
    move = move_name.replace("_", " ")
    return f"{move}: {said}" if said else move


def move_name(command: Message) -> str:
    """The name of a command's move (``discard down``), or of its game's command."""
    found = _move(command)
    if found is None:
        return "(no command)"
    game, _, move = found
    return (move or game).replace("_", " ")


def _move(command: Message) -> tuple[str, Message, str | None] | None:
    """A command's game, its game's command message and the move set in it (None for a
    game whose command is one message of fields); None for a command of no game."""
    game = command.WhichOneof("game")
    if game is None:
        return None
    moves = getattr(command, game)
    oneofs = moves.DESCRIPTOR.oneofs
    return game, moves, moves.WhichOneof(oneofs[0].name) if len(oneofs) == 1 else None


def _fields_text(message: Message, name: Callable[[str], str] = str) -> str:
    """``field value, value; field value`` for each field set, in declaration order."""
    parts = []
    for field, value in message.ListFields():
        values = list(value) if field.is_repeated else [value]
        shown = [_value_text(field, v, name) for v in values]
        parts.append(f"{field.name.replace('_', ' ')} {', '.join(shown)}")
    return "; ".join(parts)


def _value_text(field: Any, value: Any, name: Callable[[str], str] = str) -> str:
    if field.enum_type is not None:
        return enum_words(field.enum_type, value)
    if field.message_type is not None:
        return "(" + _fields_text(value, name) + ")"
    if isinstance(value, str):
        return name(value)
    return str(value)


def enum_words(enum_type: Any, value: int) -> str:
    """An enum value without its type's prefix, in lower case: ``red``."""
    known = enum_type.values_by_number.get(value)
    if known is None:  # a number this build's enum does not name
        return str(value)
    spelled: str = known.name
    return spelled.removeprefix(prefix_of(enum_type)).lower().replace("_", " ")


def view_lines(view: dict[str, Any], me: int) -> list[str]:
    """The table and this seat's own place at it, a line each of ``name: value``.

    The seats' list (the one whose entries have a seat and a name) is shown as one line
    per seat, in seat order, this seat's line named ``you``.
    """
    places: list[dict[str, Any]] = next(
        (
            v
            for v in view.values()
            if isinstance(v, list)
            and v
            and isinstance(v[0], dict)
            and "seat" in v[0]
            and "name" in v[0]
        ),
        [],
    )
    lines = ["the table:"]
    for key, value in sorted(view.items()):
        if value is places or key in ("pack", "options", "kind"):
            continue
        lines.append(f"  {key.replace('_', ' ')}: {_plain(value)}")
    for place in places:
        seat, name = place.get("seat"), place.get("name")
        who = "you" if seat == me else f"seat {seat} {name}"
        rest = {k: v for k, v in place.items() if k not in ("seat", "name")}
        lines.append(
            f"  {who}: "
            + "; ".join(f"{k.replace('_', ' ')} {_plain(v)}" for k, v in sorted(rest.items()))
        )
    return lines


def _plain(value: Any, inner: bool = False) -> str:
    """A view's value in words: lists comma-separated; a record as ``Head (key value, ...)``
    headed by its name or id where it has one; lists of records separated by ``;``.
    Inside a record (``inner``), lists go in brackets so that its parts stay apart."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        if not value:
            return "none"
        records = any(isinstance(v, (dict, list)) for v in value)
        text = ("; " if records else ", ").join(_plain(v, True) for v in value)
        return f"[{text}]" if inner and len(value) > 1 else text
    if isinstance(value, dict):
        head_key = next((k for k in ("name", "id") if k in value), None)
        parts = ", ".join(
            f"{k.replace('_', ' ')} {_plain(v, True)}"
            for k, v in sorted(value.items())
            if k != head_key
        )
        if head_key is None:
            return (f"({parts})" if inner else parts) or "none"
        head = str(value[head_key])
        return f"{head} ({parts})" if parts else head
    return str(value)
