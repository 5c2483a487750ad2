"""Canonical bytes of plain values and the state hash.

Canonical JSON: UTF-8, keys sorted, no insignificant white space, ASCII only.
Dataclasses become objects of their fields, tuples and lists arrays, frozensets sorted
arrays, bytes lower-case hex, enums their name.  The same value gives the same bytes on
any machine, which is what lets anyone re-derive every recorded state hash.

``canonical_bytes_slow`` is the definition (``json.dumps`` of ``to_plain``);
``canonical_bytes`` gives the same bytes for every value, faster: one encoder per type,
looked up once, and the encoding of every immutable part (frozen dataclasses, tuples of
immutable parts) remembered by identity, so a state hash re-encodes only what changed
since the state before it.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from json.encoder import encode_basestring_ascii as _str  # what json.dumps writes for a str
from typing import Any

_FIELDS: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...] | None:
    """A dataclass's field names, looked up once per class."""
    names = _FIELDS.get(cls)
    if names is None and dataclasses.is_dataclass(cls):
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def to_plain(value: Any) -> Any:
    """The value as JSON-able data: dicts with str keys, lists, str, int, bool, None."""
    cls = type(value)
    if cls is str or cls is int or cls is bool or value is None:
        return value
    if cls is tuple or cls is list:
        return [to_plain(v) for v in value]
    names = _field_names(cls)
    if names is not None:
        return {name: to_plain(getattr(value, name)) for name in names}
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        raise TypeError("floats have no canonical form here; use integers")
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (frozenset, set)):
        return sorted(to_plain(v) for v in value)
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    raise TypeError(f"no canonical form for {type(value).__name__}")


def canonical_bytes(value: Any) -> bytes:
    """Canonical JSON bytes of ``value``."""
    return _encode(value).encode("ascii")


def canonical_object(pairs: Sequence[tuple[str, Any]]) -> bytes:
    """Canonical JSON bytes of the object with these (key, value) pairs, keys given sorted.

    For a record's fixed shapes (a row, a commitment): the same bytes as
    ``canonical_bytes(dict(pairs))`` without sorting the keys again.
    """
    text = ",".join(
        [
            _str(k) + ":" + (_str(v) if type(v) is str else _get(type(v), _first)(v))
            for k, v in pairs
        ]
    )
    return ("{" + text + "}").encode("ascii")


def canonical_fields(value: Any, names: Sequence[str], *extra: tuple[str, Any]) -> bytes:
    """``canonical_object`` of ``value``'s attributes ``names`` (given sorted), each under
    its name, and the ``extra`` pairs (a signed message's ``type``) put among them in key
    order: the bytes of a fixed shape that a row or a signed message names field by field.
    """
    pairs = [(name, getattr(value, name)) for name in names]
    return canonical_object(sorted([*pairs, *extra], key=_key) if extra else pairs)


def _key(pair: tuple[str, Any]) -> str:
    return pair[0]


def canonical_bytes_slow(value: Any) -> bytes:
    """Canonical JSON bytes through ``json.dumps``: the reference ``canonical_bytes`` matches."""
    return _dumps(to_plain(value)).encode("ascii")


def _dumps(plain: Any) -> str:
    return json.dumps(plain, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


# The encoding of immutable values by identity: (the value, its text).  Each entry holds
# the value itself, so its id cannot be reused while the entry lives.  Successive game
# states share most of their parts, so most of a state hash is found here.
# Two generations: when the young one is full it becomes the older one, and a value
# found only in the older one moves back to the young one.  A fold needs only the parts
# of the state before, and a server the parts of each live game's last state, so a few
# thousand entries serve both; a large memory would cost more in garbage collection
# (every entry holds objects the collector keeps visiting) than it saves.
_ENCODED: dict[int, tuple[Any, str]] = {}
_OLDER: dict[int, tuple[Any, str]] = {}
_GENERATION = 4096
# Bumped whenever a value that may change later (a list, dict, set, a dataclass that is
# not frozen, anything unusual) is encoded: a container is remembered only when encoding
# its parts left this unchanged, so nothing that can change is ever served from memory.
# (CPython runs ``_changeable += 1`` with no thread switch: nothing is called in between.)
_changeable = 0
_SHORT_TUPLE = 4  # tuples shorter than this are cheaper to encode again than to remember


def _remember(value: Any, text: str) -> None:
    """Keep the encoding of an immutable value by identity."""
    global _ENCODED, _OLDER
    if len(_ENCODED) >= _GENERATION:
        _OLDER, _ENCODED = _ENCODED, {}
    _ENCODED[id(value)] = (value, text)


def _recall_older(value: Any) -> str | None:
    """The encoding of a value from the older generation (moved to the young one), or None."""
    found = _OLDER.get(id(value))
    if found is None or found[0] is not value:
        return None
    _remember(value, found[1])
    return found[1]


def _encode(value: Any) -> str:
    """The canonical JSON text of any value."""
    return _ENCODERS.get(type(value), _first)(value)


def _first(value: Any) -> str:
    """The text of a value whose type has no encoder yet: choose one, then use it."""
    return _encoder_for(type(value))(value)


_LONG_TEXT = 256  # longer strings (a pack's text in a state) are remembered by identity


def _text(value: str) -> str:
    if len(value) < _LONG_TEXT:
        return _str(value)
    found = _ENCODED.get(id(value))
    if found is not None and found[0] is value:
        return found[1]
    text = _recall_older(value)
    if text is None:
        text = _str(value)
        _remember(value, text)
    return text


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _none(value: None) -> str:
    return "null"


def _bytes(value: bytes) -> str:
    return '"' + value.hex() + '"'


def _items(value: tuple[Any, ...] | list[Any]) -> str:
    """The elements of an array, each encoded, between commas."""
    kinds = set(map(type, value))
    if len(kinds) == 1:  # one type: one encoder for all (str, int: all in C)
        kind = type(value[0])
        return ",".join(map(_str if kind is str else _get(kind, _first), value))
    return ",".join([_get(type(v), _first)(v) for v in value])


def _tuple(value: tuple[Any, ...]) -> str:
    if len(value) < _SHORT_TUPLE:
        # most tuples of a state are short (a hand, a sealed bid, an Rng counter): no
        # loop for none or one part, and short strings written at once
        if not value:
            return "[]"
        if len(value) == 1:
            v = value[0]
            return "[" + (_str(v) if type(v) is str else _get(type(v), _first)(v)) + "]"
        return (
            "["
            + ",".join([_str(v) if type(v) is str else _get(type(v), _first)(v) for v in value])
            + "]"
        )
    found = _ENCODED.get(id(value))
    if found is not None and found[0] is value:
        return found[1]
    older = _recall_older(value)
    if older is not None:
        return older
    before = _changeable
    text = "[" + _items(value) + "]"
    if _changeable == before:
        _remember(value, text)
    return text


def _list(value: list[Any]) -> str:
    global _changeable
    _changeable += 1
    return "[" + _items(value) + "]"


def _mapping(value: Mapping[Any, Any]) -> str:
    global _changeable
    _changeable += 1
    plain = {str(k): v for k, v in value.items()}  # keys equal as text: the last one wins
    return "{" + ",".join([_str(k) + ":" + _encode(plain[k]) for k in sorted(plain)]) + "}"


def _frozenset(value: frozenset[Any]) -> str:
    if not value:
        return "[]"
    kinds = {type(v) for v in value}
    if kinds == {int} or kinds == {str}:
        return "[" + _items(sorted(value)) + "]"
    return _reference(value)


def _enum(value: enum.Enum) -> str:
    return _str(value.name)


def _reference(value: Any) -> str:
    """Anything else, the way the definition encodes it (and never remembered)."""
    global _changeable
    _changeable += 1
    return _dumps(to_plain(value))


def _dataclass(cls: type, names: tuple[str, ...]) -> Callable[[Any], str]:
    """The encoder of one dataclass: its fields in sorted order, each key written once.

    Written as the source of one function per class (as ``dataclasses`` writes
    ``__init__``): field by field, with no loop, since state hashes encode dataclasses
    millions of times.
    """
    ordered = sorted(names)
    params = getattr(cls, "__dataclass_params__", None)
    frozen = bool(params and params.frozen)
    # '{"a":' text of a ',"b":' text of b ... '}', joined once: a chain of + would copy a
    # large part (a pack's text) once for every field after it
    pieces: list[str] = []
    for i, name in enumerate(ordered):
        pieces.append(repr(("{" if i == 0 else ",") + _str(name) + ":"))
        pieces.append(f"_get(type(value.{name}), _first)(value.{name})")
    pieces.append(repr("}" if ordered else "{}"))
    body = '"".join((' + ", ".join(pieces) + ",))"
    if frozen:
        source = (
            "def encode(value):\n"
            "    found = _ENCODED.get(id(value))\n"
            "    if found is not None and found[0] is value:\n"
            "        return found[1]\n"
            "    older = _recall_older(value)\n"
            "    if older is not None:\n"
            "        return older\n"
            "    before = _changeable\n"
            f"    text = {body}\n"
            "    if _changeable == before:\n"
            "        _remember(value, text)\n"
            "    return text\n"
        )
    else:
        source = (
            f"def encode(value):\n    global _changeable\n    _changeable += 1\n    return {body}\n"
        )
    made: dict[str, Any] = {}
    exec(source, globals(), made)  # names are a dataclass's fields: identifiers only
    encoder: Callable[[Any], str] = made["encode"]
    return encoder


_ENCODERS: dict[type, Callable[[Any], str]] = {
    str: _text,
    int: int.__repr__,
    bool: _bool,
    type(None): _none,
    tuple: _tuple,
    list: _list,
    dict: _mapping,
    frozenset: _frozenset,
    bytes: _bytes,
}


_get = _ENCODERS.get


def _encoder_for(cls: type) -> Callable[[Any], str]:
    """The encoder of a type met for the first time, chosen in ``to_plain``'s order."""
    names = _field_names(cls)
    if names is not None:
        encoder = _dataclass(cls, names)
    elif issubclass(cls, enum.Enum):
        encoder = _enum
    else:
        encoder = _reference
    _ENCODERS[cls] = encoder
    return encoder


def sha256_hex(data: bytes) -> str:
    """Lower-case hex sha256."""
    return hashlib.sha256(data).hexdigest()
