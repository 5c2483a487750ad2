"""Views and facts as typed protobuf messages, converted from (and back to) their JSON form.

Every game's view (``engine.view``) and facts are JSON-able dicts, sent as
``google.protobuf.Struct``; ``feastlog.v1`` also has a message for each, mirroring the
dict key by key (``proto/feastlog/v1/*_view.proto``). One generic conversion serves every
game, driven by the message descriptors; docs/api.md states its rules:

- a JSON object is a message; its keys are the field names (a field whose ``json_name`` is
  set to something other than protobuf's default names its key instead: ``produce-stand``);
- a key that is absent or null is an unset field (fields that can be absent have presence:
  ``optional`` scalars, messages);
- a JSON array is a repeated field, or an ``Int32List`` / ``StringList`` (a message of one
  repeated field named ``values``) where the array itself may be absent;
- a fact ``{"type": T, ...}`` is a oneof member named T holding the other keys.

A key the message does not have is an error, never dropped: the tests fold seeded games of
every kind and check that every view and fact round-trips exactly, so the two cannot drift.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from feastlog.replay.games.engine import Fact
from feastlog.v1 import view_pb2

RECORD_FACTS = (
    "ruling",
    "seed_revealed",
    "call",
    "call_answered",
    "rewound",
)  # facts of the record itself, in any game


class NotTyped(ValueError):
    """A view or fact that does not fit its message: a key or value the .proto lacks."""


def _camel(name: str) -> str:
    """protobuf's default json_name: lowerCamelCase of the field name."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def key_of(field: FieldDescriptor) -> str:
    """The JSON key of a field: its name, or its json_name where the .proto sets one."""
    return field.json_name if field.json_name != _camel(field.name) else field.name


@functools.cache
def _keys(descriptor: Descriptor) -> dict[str, FieldDescriptor]:
    """A message's fields by JSON key (views are converted often: looked up once)."""
    return {key_of(f): f for f in descriptor.fields}


@functools.cache
def _layout(descriptor: Descriptor) -> tuple[tuple[FieldDescriptor, str, str], ...]:
    """Each field with its JSON key and how ``plain`` reads it."""
    out = []
    for field in descriptor.fields:
        target = field.message_type
        if field.is_repeated:
            how = "messages" if target else "scalars"
        elif target is None:
            how = "optional" if field.has_presence else "scalar"
        else:
            how = "list" if is_list(target) else "message"
        out.append((field, key_of(field), how))
    return tuple(out)


def is_list(descriptor: Descriptor) -> bool:
    """Whether a message is a list that may be absent: one repeated field, ``values``."""
    fields = descriptor.fields
    return len(fields) == 1 and fields[0].name == "values" and fields[0].is_repeated


def fill(message: Message, data: Mapping[str, Any], path: str = "") -> Message:
    """Set ``message`` from a JSON-able dict; NotTyped names the first key that does not fit."""
    fields = _keys(message.DESCRIPTOR)
    for key, value in data.items():
        where = f"{path}.{key}" if path else key
        field = fields.get(key)
        if field is None:
            raise NotTyped(f"{message.DESCRIPTOR.full_name} has no field for {where!r}")
        if value is None:
            if not field.has_presence:
                raise NotTyped(f"{where} is null but {field.full_name} cannot be unset")
            continue
        _set(message, field, value, where)
    return message


# How ``_set`` fills a field, worked out once per field (views and facts are filled on
# every answer): a map (refused), repeated scalars, repeated messages, a scalar, a list
# message (``Int32List``...) or a message.
_MAP, _SCALARS, _MESSAGES, _SCALAR, _LIST, _MESSAGE = range(6)


@functools.cache
def _plan(field: FieldDescriptor) -> tuple[int, str, type | None]:
    """How to fill ``field``: its mode, its name and the Python type its scalars take."""
    target = field.message_type
    wanted = _PYTHON_TYPES.get(field.cpp_type)
    if field.is_repeated:
        if target is None:
            return _SCALARS, field.name, wanted
        return (_MAP if target.GetOptions().map_entry else _MESSAGES), field.name, None
    if target is None:
        return _SCALAR, field.name, wanted
    return (_LIST if is_list(target) else _MESSAGE), field.name, None


def _set(message: Message, field: FieldDescriptor, value: Any, where: str) -> None:
    mode, name, wanted = _plan(field)
    if mode == _SCALAR:
        # bool is an int in Python: an int field takes no bool, a bool field no int
        if wanted is None or type(value) is not wanted:
            _scalar(field, value, where)  # raises, naming the field
        setattr(message, name, value)
        return
    if mode == _MAP:
        raise NotTyped(f"{where}: maps are not used in views")  # keys are fields, see key_of
    if mode in (_SCALARS, _MESSAGES):
        if not isinstance(value, list):
            raise NotTyped(f"{where} should be a list")
        items = getattr(message, name)
        if mode == _SCALARS:
            for i, item in enumerate(value):
                if wanted is None or type(item) is not wanted:
                    _scalar(field, item, f"{where}[{i}]")  # raises
            items.extend(value)
        else:
            for i, item in enumerate(value):
                fill(items.add(), _object(item, f"{where}[{i}]"), f"{where}[{i}]")
        return
    inner = getattr(message, name)
    inner.SetInParent()
    if mode == _LIST:
        fill(inner, {"values": value}, where)
    else:
        fill(inner, _object(value, where), where)


def _object(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise NotTyped(f"{where} should be an object")
    return value


_PYTHON_TYPES: dict[int, type] = {
    FieldDescriptor.CPPTYPE_INT32: int,
    FieldDescriptor.CPPTYPE_INT64: int,
    FieldDescriptor.CPPTYPE_UINT32: int,
    FieldDescriptor.CPPTYPE_UINT64: int,
    FieldDescriptor.CPPTYPE_BOOL: bool,
    FieldDescriptor.CPPTYPE_STRING: str,
}


def _scalar(field: FieldDescriptor, value: Any, where: str) -> Any:
    wanted = _PYTHON_TYPES.get(field.cpp_type)
    # bool is an int in Python: an int field takes no bool, a bool field no int
    if wanted is None or type(value) is not wanted:
        raise NotTyped(f"{where} is {type(value).__name__}, not what {field.full_name} holds")
    return value


def plain(message: Message) -> dict[str, Any]:
    """The JSON-able dict a message mirrors: unset fields with presence are left out."""
    out: dict[str, Any] = {}
    for field, key, how in _layout(message.DESCRIPTOR):
        value = getattr(message, field.name)
        if how == "scalars":
            out[key] = list(value)
        elif how == "messages":
            out[key] = [plain(v) for v in value]
        elif how == "scalar":
            out[key] = value
        elif not message.HasField(field.name):
            continue
        elif how == "optional":
            out[key] = value
        elif how == "list":
            out[key] = plain(value)["values"]
        else:
            out[key] = plain(value)
    return out


def without_nulls(data: Any) -> Any:
    """``data`` with every null-valued key left out: what a round trip gives back."""
    if isinstance(data, Mapping):
        return {k: without_nulls(v) for k, v in data.items() if v is not None}
    if isinstance(data, list):
        return [without_nulls(v) for v in data]
    return data


def member_of(kind: str) -> str:
    """The TableView and Fact member of a game kind: its name, hyphens as underscores."""
    return kind.replace("-", "_")


def view_message(game_field: str, view: Mapping[str, Any]) -> view_pb2.TableView:
    """A game's view (``engine.view``) as a TableView; ``game_field`` is its member.

    A game with no member (one this API does not type yet) gives an empty TableView: its
    views travel as the Struct beside it.
    """
    out = view_pb2.TableView()
    if game_field not in view_pb2.TableView.DESCRIPTOR.fields_by_name:
        return out
    fill(getattr(out, game_field), view, "view")
    getattr(out, game_field).SetInParent()
    return out


def view_dict(message: view_pb2.TableView) -> dict[str, Any]:
    """A TableView as the view dict it mirrors."""
    which = message.WhichOneof("game")
    if which is None:
        raise NotTyped("the TableView holds no game's view")
    return plain(getattr(message, which))


@functools.cache
def _member(game_field: str, kind: str) -> bool:
    """Whether a fact of ``kind`` is a member of Fact's ``fact`` oneof, or of the oneof of
    its ``game_field`` message: the facts protobuf's own constructor can build."""
    fields = view_pb2.Fact.DESCRIPTOR.fields_by_name
    if kind in RECORD_FACTS:
        return True
    game = fields[game_field].message_type if game_field in fields else None
    if game is None:
        return False
    field = game.fields_by_name.get(kind)
    return field is not None and field.containing_oneof is not None


def fact_message(game_field: str, fact: Fact) -> view_pb2.Fact:
    """A fact as a Fact: the record's own (rulings, the seed reveal) or the game's (member
    ``game_field``; none for a game with no member).

    Every accepted command's answer carries its facts typed, so the usual case is built in
    one call of protobuf's constructor (in C: about 4 us a fact, against 15 field by
    field).  It takes nested dicts and lists as they are, refuses unknown keys and wrong
    types as ``checked_fact_message`` does, and leaves a null key unset.  Where a fact
    needs more than that (a key spelled by a ``json_name``, an ``Int32List``) or does not
    fit at all, ``checked_fact_message`` builds it, or names what does not fit.
    """
    kind = fact.get("type")
    if type(kind) is str and _member(game_field, kind):
        body = {k: v for k, v in fact.items() if k != "type"}
        member: dict[str, Any] = (
            {kind: body} if kind in RECORD_FACTS else {game_field: {kind: body}}
        )
        try:
            return view_pb2.Fact(**member)
        except (ValueError, TypeError, OverflowError):
            pass  # built field by field below, which explains a refusal
    return checked_fact_message(game_field, fact)


def checked_fact_message(game_field: str, fact: Fact) -> view_pb2.Fact:
    """``fact_message`` field by field: NotTyped names the first key that does not fit
    (a null one included, where the field cannot be unset)."""
    kind = fact.get("type")
    body = {k: v for k, v in fact.items() if k != "type"}
    out = view_pb2.Fact()
    if kind in RECORD_FACTS:
        fill(getattr(out, str(kind)), body, str(kind))
        getattr(out, str(kind)).SetInParent()
        return out
    if game_field not in view_pb2.Fact.DESCRIPTOR.fields_by_name:
        return out  # a game this API does not type yet: the fact travels as its Struct
    game = getattr(out, game_field)
    field = game.DESCRIPTOR.fields_by_name.get(str(kind))
    if field is None or field.containing_oneof is None:
        raise NotTyped(f"{game.DESCRIPTOR.full_name} has no fact {kind!r}")
    fill(getattr(game, field.name), body, str(kind))
    getattr(game, field.name).SetInParent()
    return out


def fact_dict(message: view_pb2.Fact) -> Fact:
    """A Fact as the fact dict it mirrors."""
    which = message.WhichOneof("fact")
    if which is None:
        raise NotTyped("the Fact holds no fact")
    inner = getattr(message, which)
    if which in RECORD_FACTS:
        return {"type": which, **plain(inner)}
    kind = inner.WhichOneof("fact")
    if kind is None:
        raise NotTyped(f"the {which} fact holds no fact")
    return {"type": kind, **plain(getattr(inner, kind))}
