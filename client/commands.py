"""Commands from JSON, with enum values by their short names as well as the protos' own.

The protos prefix every enum value with its type (``BON_APPETIT_GEM_RED``), as protobuf
style asks; a person typing a command writes ``red``.  ``command_from_json`` takes both
(any case; ``-`` or a space for ``_``), and refuses a name the enum does not have with
one ``FeastlogError`` naming the field, the enum and the names it takes, where protobuf's
own JSON parser (and others' clients, which send 0) would say only that it is invalid.
"""

from __future__ import annotations

import json
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor

from feastlog.client.errors import FeastlogError
from feastlog.replay.games.enums import prefix_of, taken
from feastlog.v1 import record_pb2


def enum_name(enum_type: EnumDescriptor, given: Any, field: str) -> Any:
    """The protos' name of an enum value given by its own or its short name (numbers as
    they are); FeastlogError for a name the enum does not have."""
    if not isinstance(given, str):
        return given
    if given in enum_type.values_by_name:
        return given
    wanted = given.strip().upper().replace("-", "_").replace(" ", "_")
    for name in (wanted, prefix_of(enum_type) + wanted):
        if name in enum_type.values_by_name and enum_type.values_by_name[name].number != 0:
            return name
    names = taken(enum_type)
    short = ", ".join(n.removeprefix(prefix_of(enum_type)).lower() for n in names)
    raise FeastlogError(
        f"{field}: {given!r} is not a {enum_type.full_name}: it takes {', '.join(names)} "
        f"(or {short})",
        "INVALID_ARGUMENT",
        "UNKNOWN_ENUM_NAME",
        {"field": field, "enum": enum_type.full_name},
    )


def with_enum_names(value: Any, message: Descriptor, path: str = "") -> Any:
    """A command's JSON with each enum value by the protos' name (see the module doc)."""
    if not isinstance(value, dict):
        return value
    fields = {f.json_name: f for f in message.fields} | {f.name: f for f in message.fields}
    out: dict[str, Any] = {}
    for key, item in value.items():
        field = fields.get(key)
        where = f"{path}.{field.name}" if path and field else (field.name if field else key)
        if field is None or (field.message_type and field.message_type.GetOptions().map_entry):
            out[key] = item
        elif field.enum_type is not None:
            out[key] = _each(item, field, lambda v, f=field, w=where: enum_name(f.enum_type, v, w))
        elif field.message_type is not None:
            out[key] = _each(
                item, field, lambda v, f=field, w=where: with_enum_names(v, f.message_type, w)
            )
        else:
            out[key] = item
    return out


def _each(item: Any, field: FieldDescriptor, change: Any) -> Any:
    """``change`` applied to a field's value, or to each of a repeated field's."""
    if field.is_repeated and isinstance(item, list):
        return [change(v) for v in item]
    return change(item)


def command_from_json(text: str, message: Any = None) -> Any:
    """A ``feastlog.v1.Command`` (or ``message``, another command message to fill) from
    JSON, enum values by their short names too; FeastlogError (INVALID_ARGUMENT) for JSON
    that is not one, naming the field."""
    target = message if message is not None else record_pb2.Command()
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as bad:
        raise FeastlogError(
            f"not a command: not JSON ({bad})", "INVALID_ARGUMENT", "BAD_JSON"
        ) from bad
    if not isinstance(raw, dict):
        raise FeastlogError(
            "not a command: a command is a JSON object", "INVALID_ARGUMENT", "BAD_JSON"
        )
    try:
        json_format.ParseDict(with_enum_names(raw, target.DESCRIPTOR), target)
    except json_format.ParseError as bad:
        raise FeastlogError(f"not a command: {bad}", "INVALID_ARGUMENT", "BAD_JSON") from bad
    return target
