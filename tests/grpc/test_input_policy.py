"""One input policy: every string and bytes field of every request message of feastlog.v1's
services (found from the descriptors, nested messages and maps included) is named in
``service.app.bounds.FIELDS`` or takes a documented default, and the guard holds each of
them to its bound and its characters, short requests too.  A new text field cannot miss
either check."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from google.protobuf import message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor, ServiceDescriptor
from google.protobuf.message import Message

import feastlog.v1
from feastlog.service.app.bounds import (
    BYTES,
    FIELDS,
    OPTION,
    STRING,
    Characters,
    Field,
    checked,
    field_of,
)
from feastlog.service.app.errors import BadRequest, FieldTooLong
from feastlog.service.grpc.guard import Refused, check_fields, checked_deserializer, methods
from feastlog.v1 import record_pb2

TEXT = (FieldDescriptor.TYPE_STRING, FieldDescriptor.TYPE_BYTES)
# The game commands of the Command oneof: their words (card ids, ingredients, recipes)
# take the default STRING, which the rules then look up.  The arbiter's is the record's.
GAME_COMMANDS = {
    f.message_type.full_name
    for f in record_pb2.Command.DESCRIPTOR.oneofs_by_name["game"].fields
    if f.message_type is not None and f.message_type is not record_pb2.ArbiterCommand.DESCRIPTOR
}


def services() -> list[ServiceDescriptor]:
    """Every service of every module of feastlog.v1."""
    found = []
    for info in pkgutil.iter_modules(feastlog.v1.__path__):
        if info.name.endswith("_pb2"):
            module = importlib.import_module(f"feastlog.v1.{info.name}")
            found += list(module.DESCRIPTOR.services_by_name.values())
    return found


@dataclass(frozen=True)
class Reached:
    """A string or bytes field a request can carry, and how to set it in one."""

    request: Descriptor
    steps: tuple[FieldDescriptor, ...]  # from the request down to the field
    in_game_command: bool  # inside a game's own command (its words take STRING)
    map_part: str = ""  # "key" or "value" of a map's entry, else ""

    @property
    def field(self) -> FieldDescriptor:
        return self.steps[-1]

    @property
    def path(self) -> str:
        """The field as the guard names it: ``players[0]``, ``options key``, ``a.b[0].c``."""
        out = ""
        for step in self.steps:
            out = f"{out}.{step.name}" if out else step.name
            if step.is_repeated and not _is_map(step):
                out += "[0]"
        if self.map_part == "key":
            return f"{out} key"
        return f"{out}['k']" if self.map_part else out

    def rule(self) -> Field:
        """The rule the guard holds this field to."""
        named = FIELDS.get(self.field.name)
        if self.map_part:
            entry = _entry(self.field, self.map_part)
            return named or field_of(entry.name, entry.type == FieldDescriptor.TYPE_BYTES)
        return field_of(self.field.name, self.field.type == FieldDescriptor.TYPE_BYTES)

    def is_bytes(self) -> bool:
        if self.map_part:
            return _entry(self.field, self.map_part).type == FieldDescriptor.TYPE_BYTES
        return self.field.type == FieldDescriptor.TYPE_BYTES

    def request_with(self, value: Any) -> Message:
        """A request holding ``value`` in this field and nothing else."""
        request = message_factory.GetMessageClass(self.request)()
        holder: Any = request
        for step in self.steps[:-1]:
            inner = getattr(holder, step.name)
            holder = inner.add() if step.is_repeated else inner
        last = self.field
        if self.map_part == "key":
            getattr(holder, last.name)[value] = "" if isinstance(value, str) else b""
        elif self.map_part:
            getattr(holder, last.name)["k"] = value
        elif last.is_repeated:
            getattr(holder, last.name).append(value)
        else:
            setattr(holder, last.name, value)
        return request


def _entry(field: FieldDescriptor, part: str) -> FieldDescriptor:
    """The ``key`` or ``value`` field of a map's entry."""
    assert field.message_type is not None
    found: FieldDescriptor = field.message_type.fields_by_name[part]
    return found


def _is_map(field: FieldDescriptor) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def reached(
    request: Descriptor,
    descriptor: Descriptor,
    steps: tuple[FieldDescriptor, ...] = (),
    in_game: bool = False,
) -> Iterator[Reached]:
    """Every string or bytes field a message of this type holds, at any depth."""
    for field in descriptor.fields:
        here = (*steps, field)
        if _is_map(field):
            for part in ("key", "value"):
                if _entry(field, part).type in TEXT:
                    yield Reached(request, here, in_game, part)
        elif field.type in TEXT:
            yield Reached(request, here, in_game)
        elif field.message_type is not None:
            if any(s.message_type is field.message_type for s in steps):
                continue  # a recursive type: its fields were reached once already
            inner = in_game or field.message_type.full_name in GAME_COMMANDS
            yield from reached(request, field.message_type, here, inner)


REQUESTS = sorted(
    {m.input_type.full_name: m.input_type for s in services() for m in s.methods}.items()
)
REACHED = [r for _, request in REQUESTS for r in reached(request, request)]


def test_every_service_of_feastlog_v1_is_guarded() -> None:
    """The guard lists the services it wraps; every service the protos declare is one."""
    declared = {f"/{s.full_name}/{m.name}" for s in services() for m in s.methods}
    assert declared == {path for path, _ in methods()}
    assert len(REACHED) > 40  # the walk found the requests' fields, commands' words too


def test_every_request_text_field_is_named_in_the_policy_or_takes_a_documented_default() -> None:
    """A string or bytes field of a request is named in FIELDS, unless it is a word of a
    game's own command (STRING: card ids, ingredients, recipes) or the key or value of a
    named map.  So a new field of a request is declared, with its bound and characters,
    before any test passes."""
    unnamed = [
        f"{r.request.name}.{r.path}"
        for r in REACHED
        if r.field.name not in FIELDS and not r.in_game_command
    ]
    assert unnamed == []


def test_every_text_field_is_plain_and_every_bytes_field_bytes() -> None:
    """Strings hold plain text; a bytes field is not text (a seed, entropy, a pack)."""
    wrong = [
        f"{r.request.name}.{r.path}: {r.rule()}"
        for r in REACHED
        if (r.rule().characters is Characters.BYTES) != r.is_bytes()
    ]
    assert wrong == []
    assert STRING.characters is Characters.PLAIN and BYTES.characters is Characters.BYTES
    assert OPTION is FIELDS["options"]


@pytest.mark.parametrize(
    "place", [r for r in REACHED if not r.is_bytes()], ids=lambda r: f"{r.request.name}.{r.path}"
)
def test_every_string_field_is_refused_with_a_control_character_naming_it(place: Reached) -> None:
    """Every string field of every request, however short the request: a line break, an
    escape or a bidi override is BAD_REQUEST naming the field and the character, from
    the guard's check and from the checked deserializer every request passes."""
    for text, char in (("a\x1b[2J", "U+001B ESCAPE"), ("a\nb", "U+000A"), ("\u202eab", "U+202E")):
        request = place.request_with(text)
        with pytest.raises(BadRequest) as found:
            check_fields(request)
        assert type(found.value) is BadRequest
        assert found.value.metadata["field"] == place.path
        assert found.value.message.startswith(f"{place.path} holds {char}")
        read = checked_deserializer(type(request))(request.SerializeToString())
        assert isinstance(read, Refused) and read.error.metadata["field"] == place.path
    ordinary = place.request_with("Crème brûlée 李 🍮")
    check_fields(ordinary)
    assert checked_deserializer(type(ordinary))(ordinary.SerializeToString()) == ordinary


@pytest.mark.parametrize("place", REACHED, ids=lambda r: f"{r.request.name}.{r.path}")
def test_every_text_field_is_held_to_its_bound(place: Reached) -> None:
    rule = place.rule()
    unit: Any = b"z" if place.is_bytes() else "z"
    check_fields(place.request_with(unit * rule.bound))
    with pytest.raises(FieldTooLong) as found:
        check_fields(place.request_with(unit * (rule.bound + 1)))
    assert found.value.metadata == {"field": place.path, "limit": str(rule.bound)}


def test_an_input_from_elsewhere_is_held_to_the_same_rule() -> None:
    """The web pages' game id and tournament go through the same Field as a request's."""
    assert checked("game_id", "g_0123456789abcdef") == "g_0123456789abcdef"
    with pytest.raises(BadRequest) as found:
        checked("game_id", "g_\x1b[31m")
    assert found.value.metadata == {"field": "game_id"}
    assert found.value.message.startswith("game_id holds U+001B ESCAPE at character 3")
    with pytest.raises(FieldTooLong):
        checked("tournament_id", "t" * 65)
