"""Facts and views become Structs through ``convert.fill_struct``, which must make exactly
what protobuf's own ``Struct.update`` makes, for every fact and view of seeded games of
every kind and for random nested values, and refuse what it refuses."""

from __future__ import annotations

import enum
import random
from typing import Any

import pytest
from google.protobuf import struct_pb2

from feastlog.replay import games
from feastlog.replay.games.engine import ARBITER, SPECTATOR
from feastlog.service.grpc.servicers.convert import fill_struct, struct
from tests.presentation.test_typed_views import SEEDS, playout


def by_update(value: dict[str, Any]) -> bytes:
    made = struct_pb2.Struct()
    made.update(value)
    return made.SerializeToString(deterministic=True)


def same(value: dict[str, Any]) -> None:
    assert struct(value).SerializeToString(deterministic=True) == by_update(value), value


@pytest.mark.parametrize("kind", games.SHIPPED)
def test_every_fact_and_view_of_seeded_games(kind: str) -> None:
    engine = games.engine(kind)
    for seats in (engine.spec.min_seats, engine.spec.max_seats):
        for seed in range(SEEDS[kind]):
            for table, facts in playout(kind, seats, seed):
                for fact in facts:
                    same(fact)
                for viewer in (ARBITER, SPECTATOR):
                    same(engine.view(table.game, viewer))


class Colour(enum.StrEnum):
    RED = "red"


def random_value(chooser: random.Random, depth: int = 0) -> Any:
    shape = chooser.randrange(9 if depth < 4 else 6)
    if shape == 0:
        return chooser.choice(["", "é", "漢字", "a" * 300, 'q"\\'])
    if shape == 1:
        return chooser.choice([0, -1, 7, 2**53 + 1, -(2**40)])
    if shape == 2:
        return chooser.choice([True, False])
    if shape == 3:
        return None
    if shape == 4:
        return chooser.choice([0.5, -1e300, 3.0])
    if shape == 5:
        return Colour.RED  # a subclass of str: protobuf's own conversion takes it
    if shape == 6:
        return {f"k{i}": random_value(chooser, depth + 1) for i in range(chooser.randrange(4))}
    parts = [random_value(chooser, depth + 1) for _ in range(chooser.randrange(4))]
    return parts if shape == 7 else tuple(parts)


def test_random_nested_values_and_empty_containers() -> None:
    chooser = random.Random(7)
    for _ in range(2000):
        same({f"f{i}": random_value(chooser) for i in range(chooser.randrange(5))})
    same({"empty_object": {}, "empty_list": [], "in_list": [{}, [], None, ()]})


def test_what_struct_update_refuses_is_refused() -> None:
    for bad in ({"x": object()}, {"x": [b"bytes"]}, {"x": {"y": {1, 2}}}):
        with pytest.raises(ValueError):
            by_update(bad)
        with pytest.raises(ValueError):
            fill_struct(struct_pb2.Struct(), bad)
