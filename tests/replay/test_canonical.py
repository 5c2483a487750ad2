"""The fast canonical encoder writes exactly the bytes of the reference, for every value.

``canonical_bytes_slow`` (``json.dumps`` of ``to_plain``) defines the canonical bytes;
``canonical_bytes`` (per-type encoders, the encodings of immutable parts remembered by
identity) and a record's row and commitment bytes must match it byte for byte: over
every state of real games of every registered kind (rulings included, every golden
record), over odd values, over random nested values, and after values it met before
have changed or its memory has turned over.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import pytest

from feastlog.replay import games
from feastlog.replay.record import canonical
from feastlog.replay.record.canonical import canonical_bytes, canonical_bytes_slow
from feastlog.replay.record.history import refold
from feastlog.replay.record.rows import FORMAT_1, FORMAT_2, Row, commitment_of
from feastlog.service.bench.data import build
from feastlog.v1 import record_pb2
from tests.replay.test_fixtures import EVERY, load


def same(value: Any) -> None:
    """Both encoders give the same bytes (twice: the remembered path too)."""
    expected = canonical_bytes_slow(value)
    assert canonical_bytes(value) == expected
    assert canonical_bytes(value) == expected


def rulings() -> dict[int, record_pb2.ArbiterCommand]:
    """A note in non-ASCII words, a score adjustment and a forfeit, early in a game."""
    return {
        3: record_pb2.ArbiterCommand(
            reason="table 4", note=record_pb2.Note(text='Zoë’s clock "stopped"\n\t⏸')
        ),
        5: record_pb2.ArbiterCommand(
            reason="slow play", score_adjustment=record_pb2.ScoreAdjustment(seat=1, points=-2)
        ),
        7: record_pb2.ArbiterCommand(reason="left", forfeit=record_pb2.Forfeit(seat=0)),
    }


def kind_cases() -> Iterator[tuple[str, int, int, bool]]:
    """(kind, seats, seed, with rulings): every registered kind at its fewest and most seats."""
    for kind in games.kinds():
        spec = games.engine(kind).spec
        for seats in sorted({spec.min_seats, spec.max_seats}):
            for seed in (1, 2):
                yield kind, seats, seed, seed == 2


@pytest.mark.parametrize("case", list(kind_cases()), ids=lambda c: "-".join(map(str, c)))
def test_every_state_of_real_games_of_every_kind(case: tuple[str, int, int, bool]) -> None:
    kind, seats, seed, ruled = case
    built = build(kind, players=seats, seed_byte=seed, rulings=rulings() if ruled else None)
    tables = refold(built.rows, built.seed, built.pack_bytes).tables
    assert len(tables) > 10
    for table in tables:  # in order, as a fold hashes them: each state from the one before
        same(table)
    for table in reversed(tables):  # and back, every part now found in memory
        same(table)
    for row in built.rows:
        same(row)


@pytest.mark.parametrize("path", EVERY, ids=[f"{p.parent.name}/{p.stem}" for p in EVERY])
def test_every_state_of_every_golden_record(path: Any) -> None:
    rows, seed, pack = load(path)
    for table in refold(rows, seed, pack).tables:
        same(table)


def test_memory_turning_over_mid_game_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(canonical, "_GENERATION", 7)
    built = build("menu-masters", players=4, seed_byte=9)
    tables = refold(built.rows, built.seed, built.pack_bytes).tables
    for table in (*tables, *tables[::3], *reversed(tables)):
        same(table)


class Colour(enum.Enum):
    RED = "r"
    GREEN = 2


class Size(enum.IntEnum):
    SMALL = 1
    LARGE = 2


class Taste(enum.StrEnum):
    SWEET = "sweet"


class Name(str):
    """A str subclass."""


class Count(int):
    """An int subclass."""


@dataclass(frozen=True)
class Card:
    name: str
    colour: Colour
    size: Size = Size.SMALL


@dataclass(frozen=True)
class Empty:
    pass


@dataclass(frozen=True)
class Bag:
    """A frozen dataclass holding containers that can change."""

    items: list[Any]
    counts: dict[Any, Any] = field(default_factory=dict)
    cards: tuple[Any, ...] = ()


@dataclass
class Loose:
    """A dataclass that is not frozen."""

    zeta: Any
    alpha: Any = None


@dataclass(frozen=True)
class Single:
    only: Any


ODD_VALUES: list[Any] = [
    "",
    "plain",
    "Zoë Ångström 漢字 😀",
    'quote " backslash \\ slash /',
    "\x00\x01\x1f control \x7f del \x80 \u2028 \ufeff",
    'a pack\'s "text"\n\tZoë 漢 \\ ' * 40,  # long: remembered by identity
    0,
    -1,
    2**64 + 1,
    -(2**70),
    True,
    False,
    None,
    (),
    [],
    {},
    frozenset(),
    set(),
    b"",
    b"\x00\xff\x10",
    bytearray(b"\x01\xab"),
    Colour.RED,
    Colour.GREEN,
    Size.LARGE,
    Taste.SWEET,
    Name("named"),
    Count(7),
    Empty(),
    Single(()),
    Single(Single(frozenset({"b", "a"}))),
    Card("Zoë", Colour.GREEN),
    (1, "a", True, None, b"\x01", Colour.RED),
    tuple(range(10)),
    tuple(f"card-{i}" for i in range(10)),
    tuple(Card(f"c{i}", Colour.RED) for i in range(6)),
    (True, False, True, False, True),
    (1, True, 0, False, 1, True),
    frozenset({3, 1, 2}),
    frozenset({"b", "a", "é"}),
    frozenset({frozenset({2, 1}), frozenset({0}), frozenset()}),
    frozenset({(2, "b"), (1, "a"), (1, "b")}),
    frozenset({True, 2}),
    {3, 1},
    {"b": 1, "a": [1, 2], "é": {"x": ()}, "": None},
    {1: "int key", "1": "str key", 2: "two"},
    {Colour.RED: 1},
    {(1, 2): "tuple key"},
    MappingProxyType({"z": 1, "a": 2}),
    [[], [[]], [{}], ((), ())],
    Loose(zeta=[1, 2], alpha=Card("a", Colour.RED)),
    Bag([1, [2, 3]], {"k": (1, 2, 3, 4, 5)}, (Card("x", Colour.RED),) * 5),
]


@pytest.mark.parametrize("value", ODD_VALUES, ids=lambda v: type(v).__name__)
def test_odd_values(value: Any) -> None:
    same(value)
    same((value, value, value, value, value))  # as a part of something remembered
    same(Single(value))


@pytest.mark.parametrize("value", [1.5, float("nan"), object(), (1, 2, 3, 4, 1.0), Single(0.5)])
def test_values_without_a_canonical_form_are_refused_alike(value: Any) -> None:
    with pytest.raises(TypeError):
        canonical_bytes_slow(value)
    with pytest.raises(TypeError):
        canonical_bytes(value)


def test_a_changed_part_is_never_served_from_memory() -> None:
    inner = [1, 2, 3, 4, 5]
    counts: dict[str, Any] = {"a": 1}
    loose = Loose(zeta=[1])
    bare = Loose(zeta=1)  # nothing in it can change: only its own fields
    cases = [
        (bare, bare, bare, bare),
        Single(bare),
        Bag(inner, {}, (Card("x", Colour.RED),) * 5),  # only the list can change
        Single(counts),
        Single((counts, counts, counts, counts)),
        (inner, inner, inner, inner, inner),
        loose,
        (loose, loose, loose, loose),
        Single(Single(loose)),
    ]
    for value in cases:
        same(value)
    inner.append(6)
    counts["b"] = (1, 2, 3, 4)
    loose.zeta.append(2)
    loose.alpha = "set later"
    bare.zeta = 2
    for value in cases:
        same(value)


def random_value(chooser: random.Random, depth: int = 0) -> Any:
    """A random nested value of every kind the canonical form knows."""
    atoms: list[Any] = [
        lambda: chooser.randrange(-(2**66), 2**66),
        lambda: chooser.choice([True, False, None]),
        lambda: "".join(
            chooser.choice('aZ09 "\\\n\x7fé漢😀-') for _ in range(chooser.randrange(6))
        ),
        lambda: bytes(chooser.randrange(256) for _ in range(chooser.randrange(4))),
        lambda: chooser.choice([Colour.RED, Colour.GREEN, Size.SMALL, Taste.SWEET]),
    ]
    if depth >= 4 or chooser.random() < 0.35:
        return chooser.choice(atoms)()
    width = chooser.randrange(7)
    parts = [random_value(chooser, depth + 1) for _ in range(width)]
    shape = chooser.randrange(9)
    if shape == 0:
        return parts
    if shape == 1:
        return {str(random_value(chooser, 4)): p for p in parts}
    if shape == 2:
        return frozenset(chooser.randrange(9) for _ in range(width))
    if shape == 3:
        return frozenset("".join(chooser.choice("abé") for _ in range(3)) for _ in range(width))
    if shape == 4:
        return Card(str(parts[0]) if parts else "", Colour.RED)
    if shape == 5:
        return Single(tuple(parts))
    if shape == 6:
        return Loose(parts, tuple(parts))
    return tuple(parts)


def test_random_nested_values() -> None:
    chooser = random.Random(12)
    made = [random_value(chooser) for _ in range(1500)]
    for value in made:
        same(value)
    for value in made[::-1]:
        same(value)


def test_row_and_commitment_bytes_are_canonical_bytes_of_their_fields() -> None:
    for text in ("c1", 'Zoë "x" \\ \x00 漢', ""):
        row = Row(
            "g_é", 7, "command", f"seat:{text}", text, b"\x01\xff", text, "ab", "", "cd", text
        )
        v1 = {k: getattr(row, k) for k in ("actor", "body", "command_id", "game_id", "kind")}
        v1 |= {"recorded_at": row.recorded_at, "seq": row.seq, "state_hash": row.state_hash}
        assert row.canonical(FORMAT_1) == canonical_bytes_slow(v1)
        v2 = {k: v for k, v in v1.items() if k not in ("body", "command_id")}
        assert row.canonical(FORMAT_2) == canonical_bytes_slow({**v2, "commitment": text})
        committed = canonical_bytes_slow({"body": row.body, "command_id": text})
        import hashlib

        assert (
            commitment_of(b"salt", row.body, text)
            == hashlib.sha256(b"salt" + committed).hexdigest()
        )
