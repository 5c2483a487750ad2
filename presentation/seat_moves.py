"""The seat page's moves: each legal command as the choices a player makes, in words.

Pure: a game's legal commands (``Replays.legal``) go in, and each comes out as its protobuf
JSON (what the page sends back, unchanged) with the steps a player takes to choose it,
in order: what to do, then each part of it (a store, a card from the hand or the market,
a Menu and each of its ingredients card by card, a Recipe, an Item and its target).
A Bon Appetit! bid is chosen the way the gems are put down: how many of each colour.
The page (``presentation/page/seat.js``) builds a tree of these steps, so a player only
ever sees the choices that still lead to a legal command.  Nothing here decides what is
legal or who sees what: the list is the rules engine's, for the caller's own seat.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import EnumDescriptor, FieldDescriptor
from google.protobuf.message import Message

from feastlog.presentation.page_cards import Face, faces_for
from feastlog.replay.games.engine import Engine
from feastlog.v1 import record_pb2

Step = dict[str, str]  # {"ask": the question, "pick": the answer}, both in words

# How a few values read to a player where the enum's own name would not.
PLACEMENTS = {
    "LINE": "stand in line",
    "OWN": "own the store",
    "COLLECT_COIN": "collect a coin",
}
# A Bon Appetit! bid: a number of gems of each colour (the command lists them sorted).
GEM_COLOURS = ("BLUE", "GREEN", "RED", "YELLOW")


def words(name: str) -> str:
    """A protobuf field name as words: ``take_from_market`` -> ``take from market``."""
    return name.replace("_ids", "").replace("_id", "").replace("_", " ")


def one_of(name: str) -> str:
    """The name of one member of a repeated field: ``fulfilments`` -> ``fulfilment``."""
    said = words(name)
    return said[:-1] if said.endswith("s") else said


def enum_word(enum: EnumDescriptor, number: int) -> str:
    """An enum value without its type's prefix, in words: ``BON_APPETIT_GEM_RED`` -> ``red``."""
    names = [v.name for v in enum.values]
    prefix = names[0].removesuffix("UNSPECIFIED")
    value = enum.values_by_number[number].name.removeprefix(prefix)
    return PLACEMENTS.get(value) or value.lower().replace("_", " ")


def card_word(key: str, faces: dict[str, Face]) -> str:
    """A card as its face names it (its id where the pack has no face for it)."""
    face = faces.get(key)
    if face is None:
        return key
    if "name" in face:
        return str(face["name"])
    if "ingredients" in face:  # a Menu Masters ingredient card: what it gives, its stars
        stars = "/".join(str(s) for s in face.get("stars") or [])
        return f"{' or '.join(face['ingredients'])} ({stars}★) {key}"
    return key


def _value(field: FieldDescriptor, value: Any, faces: dict[str, Face]) -> str:
    """One scalar value in words."""
    if field.enum_type is not None:
        return enum_word(field.enum_type, int(value))
    if field.type == FieldDescriptor.TYPE_STRING:
        return card_word(str(value), faces)
    return str(value)


def _gem_steps(field: FieldDescriptor, gems: Sequence[int]) -> list[Step]:
    """A bid's gems as a count per colour."""
    enum = field.enum_type
    assert enum is not None  # the caller checked: gems are an enum
    prefix = enum.values[0].name.removesuffix("UNSPECIFIED")
    said = [enum.values_by_number[g].name.removeprefix(prefix) for g in gems]
    return [{"ask": f"{c.lower()} gems", "pick": str(said.count(c))} for c in GEM_COLOURS]


def _part(context: str, field: FieldDescriptor, i: int) -> str:
    """The question of a repeated field's ``i``-th member: ``menu 1 · fulfilment 2``."""
    said = f"{one_of(field.name)} {i}"
    return f"{context} · {said}" if context else said


def message_steps(message: Message, faces: dict[str, Face], context: str = "") -> list[Step]:
    """The choices that make ``message``, field by field in field-number order."""
    out: list[Step] = []
    for field, value in sorted(message.ListFields(), key=lambda fv: fv[0].number):
        ask = f"{context} · {words(field.name)}" if context else words(field.name)
        if field.containing_oneof is not None and field.type == FieldDescriptor.TYPE_MESSAGE:
            out.append({"ask": context or "what you do", "pick": words(field.name)})
            out += message_steps(value, faces, context)
        elif field.name == "gems" and field.enum_type is not None:
            out += _gem_steps(field, value)
        elif field.is_repeated and field.type == FieldDescriptor.TYPE_MESSAGE:
            for i, item in enumerate(value, 1):
                out += message_steps(item, faces, _part(context, field, i))
        elif field.is_repeated:
            for i, item in enumerate(value, 1):
                out.append({"ask": _part(context, field, i), "pick": _value(field, item, faces)})
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            out += message_steps(value, faces, ask)
        else:
            out.append({"ask": ask, "pick": _value(field, value, faces)})
    return out


def _with_empty_bid(message: Message, faces: dict[str, Face]) -> list[Step]:
    """A bid of no gems still says so, colour by colour (its message has no fields set)."""
    steps = message_steps(message, faces)
    which = message.WhichOneof("action")
    if which in ("bid", "tie_break_bid") and len(steps) == 1:
        steps += [{"ask": f"{c.lower()} gems", "pick": "0"} for c in GEM_COLOURS]
    return steps


def move_options(
    engine: Engine, pack: Any, commands: Sequence[record_pb2.Command]
) -> list[dict[str, Any]]:
    """Each legal command as the page offers it: its JSON, its steps, whether it is sealed."""
    field = engine.spec.command_field
    inners = [getattr(c, field) for c in commands]
    faces = faces_for(engine.spec.kind, pack, [json_format.MessageToDict(m) for m in inners])
    return [
        {
            "command": json_format.MessageToDict(command, preserving_proto_field_name=True),
            "steps": _with_empty_bid(inner, faces),
            "sealed": not engine.command_public(inner),
        }
        for command, inner in zip(commands, inners, strict=True)
    ]
