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


def to_plain(value: Any) -> Any:
    """The value as JSON-able data: dicts with str keys, lists, str, int, bool, None."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, float):
        raise TypeError("floats have no canonical form here; use integers")
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, (frozenset, set)):
        return sorted(to_plain(v) for v in value)
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    raise TypeError(f"no canonical form for {type(value).__name__}")


def canonical_bytes(value: Any) -> bytes:
    """Canonical JSON bytes of ``value``."""
    return json.dumps(
        to_plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=True
    ).encode("ascii")


def sha256_hex(data: bytes) -> str:
    """Lower-case hex sha256."""
    return hashlib.sha256(data).hexdigest()
