"""Canonical bytes of plain values and the state hash.

Canonical JSON: UTF-8, keys sorted, no insignificant white space, ASCII only.
Dataclasses become objects of their fields, tuples and lists arrays, frozensets sorted
arrays, bytes lower-case hex, enums their name.  The same value gives the same bytes on
any machine, which is what lets anyone re-derive every recorded state hash.
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
from collections.abc import Mapping
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


def canonical_bytes_slow(value: Any) -> bytes:
    """Canonical JSON bytes through ``json.dumps``: the reference ``canonical_bytes`` matches."""
    return json.dumps(
        to_plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=True
    ).encode("ascii")


# Encoded JSON of frozen dataclass instances, by identity.  Successive game states share
# most of their parts, so a state hash re-encodes only what changed.  Each entry holds the
# object itself, so its id cannot be reused while the entry lives.
_ENCODED: dict[int, tuple[Any, str]] = {}
_ENCODED_LIMIT = 200_000
_FROZEN: dict[type, bool] = {}


def _frozen(cls: type) -> bool:
    found = _FROZEN.get(cls)
    if found is None:
        params = getattr(cls, "__dataclass_params__", None)
        found = _FROZEN[cls] = bool(params and params.frozen)
    return found


_STRINGS: dict[str, str] = {}


def _remember(value: Any, text: str) -> None:
    """Keep the encoding of a frozen dataclass instance by identity."""
    if len(_ENCODED) >= _ENCODED_LIMIT:
        _ENCODED.clear()
    _ENCODED[id(value)] = (value, text)


def _encode(value: Any) -> str:
    cls = type(value)
    if cls is str:
        text = _STRINGS.get(value)
        if text is None:
            if len(_STRINGS) >= _ENCODED_LIMIT:
                _STRINGS.clear()
            text = _STRINGS[value] = json.dumps(value, ensure_ascii=True)
        return text
    if cls is int:
        return str(value)
    if cls is bool or value is None:
        return "true" if value is True else "false" if value is False else "null"
    if cls is tuple or cls is list:
        return "[" + ",".join(_encode(v) for v in value) + "]"
    names = _field_names(cls)
    if names is not None:
        cached = _ENCODED.get(id(value))
        if cached is not None and cached[0] is value:
            return cached[1]
        pairs = sorted((name, getattr(value, name)) for name in names)
        text = "{" + ",".join(f"{_encode(k)}:{_encode(v)}" for k, v in pairs) + "}"
        if _frozen(cls):
            _remember(value, text)
        return text
    if isinstance(value, Mapping):
        items = sorted((str(k), v) for k, v in value.items())
        return "{" + ",".join(f"{_encode(k)}:{_encode(v)}" for k, v in items) + "}"
    return json.dumps(to_plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def sha256_hex(data: bytes) -> str:
    """Lower-case hex sha256."""
    return hashlib.sha256(data).hexdigest()
