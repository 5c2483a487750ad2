"""An enum value a command may not carry, in words that name the enum and what it takes.

A client whose build does not know a name it was given sends the enum's 0 (JSON parsers
read an unknown name so, or drop it): "0 is not a gem colour" told it nothing.  The
refusal names the enum, the value as sent, and the names the field takes, prefixed as
the protos spell them, and unprefixed as feastlog's CLI and Python client accept them in
a command's JSON (``feastlog.client.commands``).
"""

from __future__ import annotations

from typing import Any


def prefix_of(enum_type: Any) -> str:
    """What every value name of an enum starts with (``BON_APPETIT_GEM_``)."""
    names = [v.name for v in enum_type.values]
    prefix = names[0]
    for name in names[1:]:
        while not name.startswith(prefix):
            prefix = prefix[:-1]
    return prefix[: prefix.rfind("_") + 1] if "_" in prefix else prefix


def taken(enum_type: Any) -> list[str]:
    """The names a field of this enum takes (every value but the unset 0)."""
    return [v.name for v in enum_type.values if v.number != 0]


def not_a_value(enum_type: Any, value: int, what: str) -> str:
    """Why ``value`` is refused for a field of ``enum_type`` (``what``: "a gem colour")."""
    known = enum_type.values_by_number.get(value)
    if known is None:
        sent = f"{value} is no value of {enum_type.full_name}"
    elif value == 0:
        sent = (
            f"{value} ({known.name}) is no {what[2:] if what.startswith('a ') else what}: "
            f"it is what a client sends for an unset {enum_type.full_name}, or for a name "
            "its build does not know"
        )
    else:
        sent = f"{known.name} is not {what} here"
    names = taken(enum_type)
    short = [n.removeprefix(prefix_of(enum_type)).lower() for n in names]
    return (
        f"{sent}; {enum_type.full_name} takes {', '.join(names)} (in JSON also {', '.join(short)})"
    )
