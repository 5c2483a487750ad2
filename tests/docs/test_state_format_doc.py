"""docs/state-format.md describes the canonical state exactly.

The page's tables list each dataclass's fields in order (checked against the dataclasses);
every dataclass a folded game of any kind holds has a table; every state of seeded games
of each kind and ruleset, as canonical JSON, has the types the tables give; and the worked
example is recomputed from the page alone: its bytes are canonical, validate against the
tables and hash to the golden record's state hash.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import itertools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from feastlog.replay import games
from feastlog.replay.record.canonical import canonical_bytes, to_plain
from feastlog.replay.record.history import refold
from tests.presentation.test_typed_views import playout
from tests.replay.test_fixtures import load

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "state-format.md"
BASIC = {"string": str, "integer": int, "boolean": bool}


def tables() -> dict[str, list[tuple[str, str]]]:
    """Each ``### `module.Class``` section's (field, JSON type) rows, in page order."""
    found: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    for line in PAGE.read_text().splitlines():
        heading = re.fullmatch(r"### `([\w.]+)`", line)
        if heading:
            current = found[heading.group(1)] = []
        elif line.startswith("## "):
            current = None
        elif current is not None and line.startswith("| ") and not line.startswith("| field"):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            current.append((cells[0], cells[1]))
    return found


TABLES = tables()


def split_top(text: str, separator: str) -> list[str]:
    """``text`` split at ``separator`` outside brackets."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        depth += {"[": 1, "]": -1}.get(text[i], 0)
        if depth == 0 and text.startswith(separator, i):
            parts.append(text[start:i])
            i = start = i + len(separator)
            continue
        i += 1
    return [*parts, text[start:]]


def fits(value: Any, kind: str) -> bool:
    """Whether a JSON value is of a type as the page writes it (see "Types in the tables")."""
    alternatives = split_top(kind, " or ")
    if len(alternatives) > 1:
        return any(fits(value, k) for k in alternatives)
    if kind == "null":
        return value is None
    if kind in BASIC:
        return type(value) is BASIC[kind]
    if kind == "hex string":
        return isinstance(value, str) and re.fullmatch(r"([0-9a-f]{2})*", value) is not None
    if kind.startswith("sorted array of "):
        return fits(value, kind.removeprefix("sorted ")) and value == sorted(value)
    if kind.startswith("array of "):
        item = kind.removeprefix("array of ")
        return isinstance(value, list) and all(fits(v, item) for v in value)
    if kind.startswith("["):
        items = split_top(kind[1:-1], ", ")
        return (
            isinstance(value, list)
            and len(value) == len(items)
            and all(fits(v, k) for v, k in zip(value, items, strict=True))
        )
    rows = TABLES.get(kind)
    assert rows is not None, f"the page uses {kind!r} but has no table for it"
    return (
        isinstance(value, dict)
        and sorted(value) == sorted(f for f, _ in rows)
        and all(fits(value[f], k) for f, k in rows)
    )


def dataclass_of(name: str) -> type:
    """The class a heading names."""
    module, _, cls = name.rpartition(".")
    # the page names classes by their source folder (replay/); installed, feastlog.replay
    found: type = getattr(importlib.import_module(f"feastlog.{module}"), cls)
    return found


def held_classes(value: Any) -> Iterator[type]:
    """Every dataclass in a value, itself included."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        yield type(value)
        for field in dataclasses.fields(value):
            yield from held_classes(getattr(value, field.name))
    elif isinstance(value, (tuple, list, frozenset, set)):
        for item in value:
            yield from held_classes(item)


@pytest.mark.parametrize("name", sorted(TABLES))
def test_each_table_lists_its_dataclass_fields_in_order(name: str) -> None:
    fields = [f.name for f in dataclasses.fields(dataclass_of(name))]
    assert [f for f, _ in TABLES[name]] == fields


@pytest.mark.parametrize("kind", games.SHIPPED)
def test_every_state_of_seeded_games_is_as_the_page_says(kind: str) -> None:
    engine = games.engine(kind)
    documented = {dataclass_of(name) for name in TABLES}
    for ruleset, seats in itertools.product(
        engine.spec.rulesets, (engine.spec.min_seats, engine.spec.max_seats)
    ):
        for row, (table, _) in enumerate(playout(kind, seats, 5, ruleset)):
            if row % 3:  # every third state: the shapes repeat, the checks are not free
                continue
            missing = set(held_classes(table)) - documented
            assert not missing, f"no table in docs/state-format.md for {missing}"
            plain = to_plain(table)
            where = f"{kind} {ruleset} {seats} seats, state {row}"
            assert fits(plain, "replay.games.fold.Table"), where


def test_the_worked_example_is_recomputed_from_the_page() -> None:
    text = PAGE.read_text()
    example = ROOT / "docs" / re.search(r"\]\((examples/[\w.-]+)\)", text).group(1)  # type: ignore[union-attr]
    stated = re.search(r"sha256\(those bytes\) = ([0-9a-f]{64})", text).group(1)  # type: ignore[union-attr]
    raw = example.read_bytes()
    value = json.loads(raw)
    # canonical as the page defines it, of the shape its tables give
    again = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    assert again.encode("ascii") == raw
    assert fits(value, "replay.games.fold.Table")
    assert hashlib.sha256(raw).hexdigest() == stated
    rows, seed, pack = load(ROOT / "tests" / "fixtures" / "bon-appetit-2p-seed2.json")
    assert rows[0].seq == 1 and rows[0].state_hash == stated
    assert value["game"]["rng"]["seed"] == seed.hex()
    assert canonical_bytes(refold(rows, seed, pack).tables[0]) == raw
